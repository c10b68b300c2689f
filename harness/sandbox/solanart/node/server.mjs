// A local Solana JSON-RPC 2.0 server over LiteSVM for development and tests.
//
// Usage: node server.mjs '<options JSON>'
// Options: host, port, slotDurationMs, manualClock, slotsPerEpoch, blockhashValidity,
// finalizationDepth, voteAccounts, delinquentVoteAccounts, genesisSeed (another seed gives
// another genesis hash and other blockhashes: another network).
// Once listening it prints one line "SOLANART_READY <port>" on stdout.
// The same port serves JSON-RPC over HTTP POST and, on a websocket upgrade, Solana's
// subscriptions (signatureSubscribe, slotSubscribe; see "subscriptions" below).
// It exits when its stdin closes.

import http from 'node:http';
import crypto from 'node:crypto';
import pkg from 'litesvm';
import { WebSocket, WebSocketServer } from 'ws';

const { LiteSVM, Clock, EpochSchedule, Account } = pkg;

// ---------- options ----------

const opts = Object.assign(
  {
    host: '127.0.0.1',
    port: 0,
    slotDurationMs: 400,
    manualClock: false,
    slotsPerEpoch: 432000,
    blockhashValidity: 150,
    finalizationDepth: 32,
    voteAccounts: 3,
    delinquentVoteAccounts: 1,
    genesisSeed: '',
  },
  process.argv[2] ? JSON.parse(process.argv[2]) : {},
);
const SLOTS_PER_EPOCH = BigInt(opts.slotsPerEpoch);
const VALIDITY = BigInt(opts.blockhashValidity);
const FINALIZATION_DEPTH = BigInt(opts.finalizationDepth);
// Agave keeps signature statuses of roughly the last 300 slots without a history search.
const STATUS_CACHE_SLOTS = 300n;
const LAMPORTS_PER_SIGNATURE = 5000n;

// ---------- base58 ----------

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_MAP = new Map([...B58].map((c, i) => [c, BigInt(i)]));

function b58encode(bytes) {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let s = '';
  while (n > 0n) {
    s = B58[Number(n % 58n)] + s;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    s = '1' + s;
  }
  return s;
}

function b58decode(str) {
  if (typeof str !== 'string') throw new RpcError(-32602, 'Invalid params: expected a base58 string');
  let n = 0n;
  for (const c of str) {
    const v = B58_MAP.get(c);
    if (v === undefined) throw new RpcError(-32602, `Invalid param: invalid base58 character in ${JSON.stringify(str.slice(0, 100))}`);
    n = n * 58n + v;
  }
  const out = [];
  while (n > 0n) {
    out.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  for (const c of str) {
    if (c !== '1') break;
    out.unshift(0);
  }
  return Uint8Array.from(out);
}

function pubkeyParam(s) {
  const b = b58decode(s);
  if (b.length !== 32) throw new RpcError(-32602, `Invalid param: WrongSize (${JSON.stringify(String(s).slice(0, 100))} is not a 32-byte public key)`);
  return b;
}

// ---------- ed25519 ----------

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function keypairFromLabel(label) {
  const seed = crypto.createHash('sha256').update('stakeflow-solanart:' + label).digest();
  const priv = crypto.createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = crypto.createPublicKey(priv).export({ format: 'der', type: 'spki' });
  return { priv, pub: new Uint8Array(spki.subarray(spki.length - 32)) };
}

function verifySig(pub, msg, sig) {
  try {
    const key = crypto.createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, Buffer.from(pub)]), format: 'der', type: 'spki' });
    return crypto.verify(null, msg, key, sig);
  } catch {
    return false;
  }
}

function sha256(...parts) {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

// ---------- errors ----------

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

// ---------- wire format ----------

function readCompactU16(buf, off) {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    if (off.i >= buf.length) throw new Error('truncated compact-u16');
    const b = buf[off.i++];
    value |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) return value;
  }
  throw new Error('compact-u16 too long');
}

function take(buf, off, n) {
  if (off.i + n > buf.length) throw new Error('truncated transaction');
  const out = buf.subarray(off.i, off.i + n);
  off.i += n;
  return out;
}

// parseMessage reads a legacy or v0 message starting at off.i and checks its layout.
function parseMessage(bytes, off) {
  let version = 'legacy';
  if (bytes[off.i] !== undefined && bytes[off.i] & 0x80) {
    version = bytes[off.i] & 0x7f;
    off.i++;
    if (version !== 0) throw new Error(`unsupported transaction version ${version}`);
  }
  const header = take(bytes, off, 3);
  const nkeys = readCompactU16(bytes, off);
  const accountKeys = [];
  for (let i = 0; i < nkeys; i++) accountKeys.push(take(bytes, off, 32));
  const recentBlockhash = take(bytes, off, 32);
  const nix = readCompactU16(bytes, off);
  const instructions = [];
  for (let i = 0; i < nix; i++) {
    const programIdIndex = take(bytes, off, 1)[0];
    const accounts = take(bytes, off, readCompactU16(bytes, off));
    const data = take(bytes, off, readCompactU16(bytes, off));
    if (programIdIndex >= nkeys) throw new Error(`instruction ${i} names program index ${programIdIndex} of ${nkeys} accounts`);
    instructions.push({ programIdIndex, accounts, data });
  }
  if (version === 0) {
    const nlut = readCompactU16(bytes, off);
    if (nlut > 0) throw new Error('address lookup tables are not supported');
  }
  if (header[0] === 0 || accountKeys.length < header[0]) {
    throw new Error(`the message needs ${header[0]} signers among ${accountKeys.length} accounts`);
  }
  return { header, accountKeys, recentBlockhash, instructions, version };
}

// parseTransaction fully checks the layout so the runtime never sees malformed bytes.
function parseTransaction(bytes) {
  const off = { i: 0 };
  const nsig = readCompactU16(bytes, off);
  const signatures = [];
  for (let i = 0; i < nsig; i++) signatures.push(take(bytes, off, 64));
  const messageStart = off.i;
  const msg = parseMessage(bytes, off);
  if (off.i !== bytes.length) throw new Error('trailing bytes after transaction');
  const numRequired = msg.header[0];
  if (nsig !== numRequired) {
    throw new Error(`signature count ${nsig} does not match the ${numRequired} required signers`);
  }
  return { signatures, message: bytes.subarray(messageStart), ...msg };
}

// parseMessageOnly reads a whole serialized message (getFeeForMessage).
function parseMessageOnly(bytes) {
  const off = { i: 0 };
  const msg = parseMessage(bytes, off);
  if (off.i !== bytes.length) throw new Error('trailing bytes after message');
  return msg;
}

// writableKeys lists the base58 accounts the message header marks writable.
function writableKeys(msg) {
  const [numSigners, roSigned, roUnsigned] = msg.header;
  const out = [];
  msg.accountKeys.forEach((k, i) => {
    const writable = i < numSigners ? i < numSigners - roSigned : i < msg.accountKeys.length - roUnsigned;
    if (writable) out.push(b58encode(k));
  });
  return out;
}

function compactU16(n) {
  const out = [];
  for (;;) {
    let b = n & 0x7f;
    n >>= 7;
    if (n === 0) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

// buildLegacyTransaction compiles and signs a legacy transaction.
// instructions: [{programId: Uint8Array, accounts: [{pubkey, isSigner, isWritable}], data: Uint8Array}]
function buildLegacyTransaction(feePayer, instructions, blockhash, signers) {
  const metas = new Map();
  const add = (pubkey, isSigner, isWritable) => {
    const k = b58encode(pubkey);
    const m = metas.get(k) || { pubkey, isSigner: false, isWritable: false };
    m.isSigner ||= isSigner;
    m.isWritable ||= isWritable;
    metas.set(k, m);
  };
  add(feePayer, true, true);
  for (const ix of instructions) {
    for (const a of ix.accounts) add(a.pubkey, a.isSigner, a.isWritable);
  }
  for (const ix of instructions) add(ix.programId, false, false);
  const all = [...metas.values()];
  const payerKey = b58encode(feePayer);
  const order = (m) => (m.isSigner ? (m.isWritable ? 0 : 1) : m.isWritable ? 2 : 3);
  const sorted = [all.find((m) => b58encode(m.pubkey) === payerKey), ...all.filter((m) => b58encode(m.pubkey) !== payerKey).sort((a, b) => order(a) - order(b))];
  const index = new Map(sorted.map((m, i) => [b58encode(m.pubkey), i]));
  const numSigners = sorted.filter((m) => m.isSigner).length;
  const roSigned = sorted.filter((m) => m.isSigner && !m.isWritable).length;
  const roUnsigned = sorted.filter((m) => !m.isSigner && !m.isWritable).length;
  const msg = [numSigners, roSigned, roUnsigned, ...compactU16(sorted.length)];
  for (const m of sorted) msg.push(...m.pubkey);
  msg.push(...blockhash);
  msg.push(...compactU16(instructions.length));
  for (const ix of instructions) {
    msg.push(index.get(b58encode(ix.programId)));
    msg.push(...compactU16(ix.accounts.length));
    for (const a of ix.accounts) msg.push(index.get(b58encode(a.pubkey)));
    msg.push(...compactU16(ix.data.length));
    msg.push(...ix.data);
  }
  const message = Uint8Array.from(msg);
  const sigs = [];
  for (let i = 0; i < numSigners; i++) {
    const key = b58encode(sorted[i].pubkey);
    const signer = signers.find((s) => b58encode(s.pub) === key);
    if (!signer) throw new Error(`missing signer ${key}`);
    sigs.push(...crypto.sign(null, message, signer.priv));
  }
  return Uint8Array.from([...compactU16(numSigners), ...sigs, ...message]);
}

function u32le(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function u64le(n) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

const SYSTEM_PROGRAM = new Uint8Array(32);
const VOTE_PROGRAM = b58decode('Vote111111111111111111111111111111111111111');
const STAKE_PROGRAM = b58decode('Stake11111111111111111111111111111111111111');
const SYSVAR_RENT = b58decode('SysvarRent111111111111111111111111111111111');
const SYSVAR_CLOCK = b58decode('SysvarC1ock11111111111111111111111111111111');
const VOTE_STATE_SIZE = 3762n;
const COMPUTE_BUDGET_ID = 'ComputeBudget111111111111111111111111111111';

// ---------- fees ----------
//
// Agave's fee: 5000 lamports per required signature plus the prioritization fee, the
// compute-unit price (micro-lamports) times the compute-unit limit, rounded up to a
// lamport. The limit is the one SetComputeUnitLimit asks for (at most 1.4M), else the
// default: 3000 units per instruction of a builtin program that stays native and 200k per
// other instruction (the stake program is a core BPF program now). The runtime charges
// exactly this; getFeeForMessage and getTransaction's meta.fee report it.

const MAX_COMPUTE_UNIT_LIMIT = 1_400_000n;
const DEFAULT_INSTRUCTION_COMPUTE_UNITS = 200_000n;
const BUILTIN_INSTRUCTION_COMPUTE_UNITS = 3_000n;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;
const NATIVE_BUILTINS = new Set([
  '11111111111111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  COMPUTE_BUDGET_ID,
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Ed25519SigVerify111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
]);

// computeBudgetOf reads the compute-unit limit and price a parsed message sets.
function computeBudgetOf(msg) {
  let limit = null;
  let price = 0n;
  let builtins = 0n;
  let others = 0n;
  for (const ix of msg.instructions) {
    const program = b58encode(msg.accountKeys[ix.programIdIndex]);
    if (NATIVE_BUILTINS.has(program)) builtins++;
    else others++;
    if (program !== COMPUTE_BUDGET_ID || ix.data.length === 0) continue;
    const data = Buffer.from(ix.data);
    if (data[0] === 2 && data.length >= 5) limit = BigInt(data.readUInt32LE(1));
    else if (data[0] === 3 && data.length >= 9) price = data.readBigUInt64LE(1);
  }
  if (limit === null) limit = builtins * BUILTIN_INSTRUCTION_COMPUTE_UNITS + others * DEFAULT_INSTRUCTION_COMPUTE_UNITS;
  if (limit > MAX_COMPUTE_UNIT_LIMIT) limit = MAX_COMPUTE_UNIT_LIMIT;
  return { limit, price };
}

// feeOf is the fee in lamports a parsed message is charged.
function feeOf(msg) {
  const { limit, price } = computeBudgetOf(msg);
  const priority = (price * limit + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return LAMPORTS_PER_SIGNATURE * BigInt(msg.header[0]) + priority;
}

function transferIx(from, to, lamports) {
  return {
    programId: SYSTEM_PROGRAM,
    accounts: [
      { pubkey: from, isSigner: true, isWritable: true },
      { pubkey: to, isSigner: false, isWritable: true },
    ],
    data: Buffer.concat([u32le(2), u64le(lamports)]),
  };
}

function createAccountIx(from, to, lamports, space, owner) {
  return {
    programId: SYSTEM_PROGRAM,
    accounts: [
      { pubkey: from, isSigner: true, isWritable: true },
      { pubkey: to, isSigner: true, isWritable: true },
    ],
    data: Buffer.concat([u32le(0), u64le(lamports), u64le(space), Buffer.from(owner)]),
  };
}

function initializeVoteIx(vote, node, authorizedVoter, authorizedWithdrawer, commission) {
  return {
    programId: VOTE_PROGRAM,
    accounts: [
      { pubkey: vote, isSigner: false, isWritable: true },
      { pubkey: SYSVAR_RENT, isSigner: false, isWritable: false },
      { pubkey: SYSVAR_CLOCK, isSigner: false, isWritable: false },
      { pubkey: node, isSigner: true, isWritable: false },
    ],
    data: Buffer.concat([u32le(0), Buffer.from(node), Buffer.from(authorizedVoter), Buffer.from(authorizedWithdrawer), Buffer.from([commission])]),
  };
}

// ---------- error text ----------

const INSTRUCTION_ERROR_NAMES = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged',
  'AccountNotExecutable', 'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync',
  'InvalidError', 'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId', 'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded',
  'InvalidSeeds', 'InvalidRealloc', 'ComputationalBudgetExceeded', 'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete', 'ProgramFailedToCompile', 'Immutable',
  'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner', 'ArithmeticOverflow', 'UnsupportedSysvar',
  'IllegalOwner', 'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError',
];

const INSTRUCTION_ERROR_TEXT = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  AccountDataTooSmall: 'account data too small for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  InvalidAccountOwner: 'Invalid account owner',
  IncorrectAuthority: 'Incorrect authority provided',
  ArithmeticOverflow: 'Program arithmetic overflowed',
};

const TRANSACTION_ERROR_NAMES = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee',
  'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance',
  'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
];

const TRANSACTION_ERROR_TEXT = {
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  SignatureFailure: 'Transaction did not pass signature verification',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  AccountLoadedTwice: 'Account loaded twice',
  AccountInUse: 'Account in use',
};

// describeError converts a LiteSVM transaction error into Agave's JSON form and display text.
function describeError(err) {
  if (typeof err === 'number') {
    const name = TRANSACTION_ERROR_NAMES[err] ?? `TransactionError(${err})`;
    return { json: name, text: TRANSACTION_ERROR_TEXT[name] ?? name };
  }
  const ctor = err?.constructor?.name ?? '';
  if (ctor === 'TransactionErrorInstructionError') {
    const inner = err.err();
    let json;
    let text;
    if (typeof inner === 'number') {
      const name = INSTRUCTION_ERROR_NAMES[inner] ?? `InstructionError(${inner})`;
      json = name;
      text = INSTRUCTION_ERROR_TEXT[name] ?? name;
    } else if (inner?.constructor?.name === 'InstructionErrorCustom') {
      json = { Custom: inner.code };
      text = `custom program error: 0x${Number(inner.code).toString(16)}`;
    } else {
      json = 'BorshIoError';
      text = 'Failed to serialize or deserialize account data';
    }
    return { json: { InstructionError: [err.index, json] }, text: `Error processing Instruction ${err.index}: ${text}` };
  }
  if (ctor === 'TransactionErrorDuplicateInstruction') {
    return { json: { DuplicateInstruction: err.index }, text: `Transaction contains a duplicate instruction (${err.index}) that is not allowed` };
  }
  if (ctor === 'TransactionErrorInsufficientFundsForRent') {
    return { json: { InsufficientFundsForRent: { account_index: err.accountIndex } }, text: `Transaction results in an account (${err.accountIndex}) with insufficient funds for rent` };
  }
  const s = String(err);
  return { json: s, text: s };
}

// ---------- chain ----------

const svm = new LiteSVM();
svm.inner.setBlockhashCheck(false);
svm.inner.setSigverify(true);
svm.inner.setEpochSchedule(new EpochSchedule(SLOTS_PER_EPOCH, SLOTS_PER_EPOCH, false, 0n, 0n));

const genesisHash = b58encode(sha256('stakeflow-solanart:genesis' + (opts.genesisSeed ? ':' + opts.genesisSeed : '')));
const startUnix = BigInt(Math.floor(Date.now() / 1000));
const slotMs = BigInt(opts.slotDurationMs);

let slot = 0n;
// Websocket subscriptions (see "subscriptions"); declared here because landing a
// transaction, from genesis on, looks at them.
const subscriptions = new Map(); // subscription id -> {id, ws, method, ...}
let nextSubscriptionId = 0;
let notifyScheduled = false;
let slotTimer = null;
const blockhashes = new Map(); // base58 blockhash -> slot it was produced at
const ledger = []; // landed transactions, in order
const bySignature = new Map(); // base58 signature -> ledger entry

function epochOf(s) {
  return s / SLOTS_PER_EPOCH;
}

function unixAt(s) {
  return startUnix + (s * slotMs) / 1000n;
}

function blockhashAt(s) {
  return b58encode(sha256('stakeflow-solanart:blockhash:', genesisHash, ':', s.toString()));
}

function setSlot(s) {
  slot = s;
  svm.inner.warpToSlot(s);
  const epoch = epochOf(s);
  svm.inner.setClock(new Clock(s, unixAt(epoch * SLOTS_PER_EPOCH), epoch, epoch + 1n, unixAt(s)));
  blockhashes.set(blockhashAt(s), s);
  // Forget hashes long past validity; they then count as unknown, which is the same answer.
  const horizon = VALIDITY * 4n + 16n;
  if (blockhashes.size > Number(horizon) * 2) {
    for (const [h, at] of blockhashes) {
      if (s - at > horizon) blockhashes.delete(h);
    }
  }
}

// The clock follows wall time lazily: a request first moves the chain to the slot due
// (catchUp), so an idle runtime does no work and a busy one does not step slot by slot.
// Only the slots someone is shown register a blockhash, and nobody is shown a skipped one.
// Slots moved by hand (airdrop retries, sandbox_advanceSlots, sandbox_warpEpochs) put the
// chain ahead of wall time by `lead`. With manualClock the chain does not follow wall time at
// all: only the slots moved by hand move it.
const clockStart = process.hrtime.bigint();
const slotNs = slotMs * 1_000_000n;
let lead = 0n;

function catchUp() {
  if (opts.manualClock) return;
  const due = (process.hrtime.bigint() - clockStart) / slotNs + lead;
  if (due > slot) setSlot(due);
}

function moveTo(s) {
  lead += s - slot;
  setSlot(s);
}

function advance(n) {
  moveTo(slot + n);
}

function latestBlockhash() {
  return { blockhash: blockhashAt(slot), lastValidBlockHeight: slot + VALIDITY };
}

function blockhashValid(h) {
  const at = blockhashes.get(h);
  return at !== undefined && slot <= at + VALIDITY;
}

function txErrorData(meta, errJson) {
  return {
    err: errJson,
    logs: meta ? meta.logs() : [],
    accounts: null,
    unitsConsumed: meta ? meta.computeUnitsConsumed() : 0n,
    returnData: null,
    innerInstructions: null,
  };
}

// submit runs the preflight checks Agave runs, then lands the transaction.
function submit(bytes, { airdrop = false } = {}) {
  let tx;
  try {
    tx = parseTransaction(bytes);
  } catch (e) {
    throw new RpcError(-32602, `invalid transaction: failed to deserialize transaction: ${e.message}`);
  }
  const signature = b58encode(tx.signatures[0]);
  if (bySignature.has(signature)) {
    throw new RpcError(-32002, 'Transaction simulation failed: This transaction has already been processed', txErrorData(null, 'AlreadyProcessed'));
  }
  for (let i = 0; i < tx.signatures.length; i++) {
    if (!verifySig(tx.accountKeys[i], tx.message, tx.signatures[i])) {
      throw new RpcError(-32003, 'Transaction signature verification failure');
    }
  }
  if (!blockhashValid(b58encode(tx.recentBlockhash))) {
    throw new RpcError(-32002, 'Transaction simulation failed: Blockhash not found', txErrorData(null, 'BlockhashNotFound'));
  }
  const legacy = tx.version === 'legacy';
  const balances = () => tx.accountKeys.map((k) => svm.inner.getBalance(k) ?? 0n);
  const preBalances = balances();
  const sim = legacy ? svm.inner.simulateLegacyTransaction(bytes) : svm.inner.simulateVersionedTransaction(bytes);
  if (typeof sim.err === 'function') {
    const { json, text } = describeError(sim.err());
    throw new RpcError(-32002, `Transaction simulation failed: ${text}`, txErrorData(sim.meta(), json));
  }
  const res = legacy ? svm.inner.sendLegacyTransaction(bytes) : svm.inner.sendVersionedTransaction(bytes);
  refreshStakeAccounts(tx.accountKeys);
  if (typeof res.err === 'function') {
    const { json, text } = describeError(res.err());
    throw new RpcError(-32002, `Transaction simulation failed: ${text}`, txErrorData(res.meta(), json));
  }
  const entry = {
    signature,
    slot,
    version: tx.version,
    preBalances,
    postBalances: balances(),
    feePayer: b58encode(tx.accountKeys[0]),
    accounts: tx.accountKeys.map(b58encode),
    airdrop,
    err: null,
    fee: feeOf(tx),
    logs: res.logs(),
    unitsConsumed: res.computeUnitsConsumed(),
    raw: Buffer.from(bytes).toString('base64'),
    blockTime: unixAt(slot),
  };
  ledger.push(entry);
  bySignature.set(signature, entry);
  recordPrioritizationFee(tx);
  scheduleNotify();
  return signature;
}

// ---------- recent prioritization fees ----------
//
// Per slot of the last PRIORITIZATION_FEE_SLOTS, the compute-unit prices of the transactions
// that landed in it and the accounts each write-locked, as Agave's prioritization fee cache.

const PRIORITIZATION_FEE_SLOTS = 150n;
const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;
const feesBySlot = new Map(); // slot -> [{price, writable: Set(base58)}]

function recordPrioritizationFee(tx) {
  let list = feesBySlot.get(slot);
  if (!list) {
    list = [];
    feesBySlot.set(slot, list);
  }
  list.push({ price: computeBudgetOf(tx).price, writable: new Set(writableKeys(tx)) });
  for (const at of feesBySlot.keys()) {
    if (at + PRIORITIZATION_FEE_SLOTS <= slot) feesBySlot.delete(at);
  }
}

// recentPrioritizationFees answers, for each of the last slots, the fee a transaction
// write-locking all of accounts needed: the least price that landed in the slot, raised to
// the least price paid by a transaction write-locking each account (0 when none landed).
function recentPrioritizationFees(accounts) {
  const first = slot + 1n > PRIORITIZATION_FEE_SLOTS ? slot + 1n - PRIORITIZATION_FEE_SLOTS : 0n;
  const out = [];
  for (let s = first; s <= slot; s++) {
    const list = feesBySlot.get(s) ?? [];
    let fee = list.length ? list.reduce((m, e) => (e.price < m ? e.price : m), list[0].price) : 0n;
    for (const a of accounts) {
      const locking = list.filter((e) => e.writable.has(a));
      if (!locking.length) continue;
      const least = locking.reduce((m, e) => (e.price < m ? e.price : m), locking[0].price);
      if (least > fee) fee = least;
    }
    out.push({ slot: s, prioritizationFee: fee });
  }
  return out;
}

// ---------- activated stake ----------
//
// getVoteAccounts reports, per vote account, the delegations effective in the current
// epoch: a delegation counts from the epoch after its activation epoch (from any epoch when
// the activation epoch is u64::MAX) through its deactivation epoch. Stake accounts change
// only when a transaction lands, so the runtime keeps an index of delegations refreshed from
// the accounts of each landed transaction, the activated stake per vote account for one
// epoch, and the changes that later epochs bring. Answering costs nothing per stake account;
// landing a transaction costs one read per account key it names.

const U64_MAX = 0xffffffffffffffffn;
const STAKE_STATE_STAKE = 2;
const DELEGATION_END = 180; // the delegation ends at this offset of the stake state

const stakeIndex = new Map(); // base58 stake account -> delegation (see delegationOf)
const activeByVoter = new Map(); // base58 vote account -> lamports effective in stakeEpoch
const changesByEpoch = new Map(); // epoch > stakeEpoch -> Map(base58 vote account -> lamports delta)
let stakeEpoch = 0n;
const stats = { accountsScanned: 0n, epochChangesApplied: 0n };

// delegationOf decodes the delegation a stake account holds, or returns null. first and last
// bound the epochs in which it counts (last = u64::MAX: not deactivated).
function delegationOf(acc) {
  if (!acc || !Buffer.from(acc.owner()).equals(STAKE_PROGRAM)) return null;
  const data = Buffer.from(acc.data());
  if (data.length < DELEGATION_END || data.readUInt32LE(0) !== STAKE_STATE_STAKE) return null;
  const activation = data.readBigUInt64LE(164);
  return {
    voter: b58encode(data.subarray(124, 156)),
    stake: data.readBigUInt64LE(156),
    first: activation === U64_MAX ? 0n : activation + 1n,
    last: data.readBigUInt64LE(172),
  };
}

function sameDelegation(a, b) {
  if (!a || !b) return !a && !b;
  return a.voter === b.voter && a.stake === b.stake && a.first === b.first && a.last === b.last;
}

function addTo(map, key, lamports) {
  map.set(key, (map.get(key) ?? 0n) + lamports);
}

function scheduleChange(epoch, voter, lamports) {
  let changes = changesByEpoch.get(epoch);
  if (!changes) {
    changes = new Map();
    changesByEpoch.set(epoch, changes);
  }
  addTo(changes, voter, lamports);
}

// applyDelegation adds (sign 1n) or removes (sign -1n) a delegation's contribution to
// stakeEpoch and to the epochs after it. Removing gives back exactly what adding gave,
// whatever epochs passed in between, because passed changes are folded into activeByVoter.
function applyDelegation(d, sign) {
  if (d.first > d.last || d.last < stakeEpoch) return; // never counts, or no longer
  const lamports = sign * d.stake;
  if (d.first <= stakeEpoch) addTo(activeByVoter, d.voter, lamports);
  else scheduleChange(d.first, d.voter, lamports);
  if (d.last < U64_MAX) scheduleChange(d.last + 1n, d.voter, -lamports);
}

// syncStakeEpoch moves the activated stake to the current epoch.
function syncStakeEpoch() {
  const epoch = epochOf(slot);
  if (epoch === stakeEpoch) return;
  if (epoch < stakeEpoch) {
    // Epochs only move forward; should one ever go back, recompute from the index.
    stakeEpoch = epoch;
    activeByVoter.clear();
    changesByEpoch.clear();
    for (const d of stakeIndex.values()) applyDelegation(d, 1n);
    return;
  }
  for (const [at, changes] of changesByEpoch) {
    if (at > epoch) continue;
    for (const [voter, lamports] of changes) addTo(activeByVoter, voter, lamports);
    stats.epochChangesApplied++;
    changesByEpoch.delete(at);
  }
  stakeEpoch = epoch;
}

// refreshStakeAccounts re-reads the accounts a transaction named and updates the index
// wherever a delegation appeared, changed or went away (delegate, deactivate, split,
// merge, withdraw and close all show up here).
function refreshStakeAccounts(keys) {
  syncStakeEpoch();
  for (const key of keys) {
    stats.accountsScanned++;
    const next = delegationOf(svm.inner.getAccount(key));
    const k = b58encode(key);
    const prev = stakeIndex.get(k);
    if (sameDelegation(prev, next)) continue;
    if (prev) {
      applyDelegation(prev, -1n);
      stakeIndex.delete(k);
    }
    if (next) {
      applyDelegation(next, 1n);
      stakeIndex.set(k, next);
    }
  }
}

// activeStakeByVoter returns the lamports effective in the current epoch per vote account.
function activeStakeByVoter() {
  syncStakeEpoch();
  return activeByVoter;
}

// scanActiveStakeByVoter computes the same answer from every stake account; the
// sandbox_scanActivatedStake diagnostic uses it to check the kept totals.
function scanActiveStakeByVoter() {
  const epoch = epochOf(slot);
  const out = new Map();
  for (const item of svm.inner.getProgramAccounts(STAKE_PROGRAM)) {
    stats.accountsScanned++;
    const data = Buffer.from(item.account().data());
    if (data.length < DELEGATION_END || data.readUInt32LE(0) !== STAKE_STATE_STAKE) continue;
    const voter = b58encode(data.subarray(124, 156));
    const stake = data.readBigUInt64LE(156);
    const activation = data.readBigUInt64LE(164);
    const deactivation = data.readBigUInt64LE(172);
    const active = (activation < epoch || activation === U64_MAX) && deactivation >= epoch;
    if (active) out.set(voter, (out.get(voter) ?? 0n) + stake);
  }
  return out;
}

// ---------- faucet and vote accounts ----------

const faucet = keypairFromLabel('faucet');
svm.inner.setAccount(faucet.pub, new Account(500_000_000n * 1_000_000_000n, new Uint8Array(0), SYSTEM_PROGRAM, false, 0n));

function airdrop(to, lamports) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const bh = b58decode(blockhashAt(slot));
    const tx = buildLegacyTransaction(faucet.pub, [transferIx(faucet.pub, to, lamports)], bh, [faucet]);
    const sig = b58encode(tx.subarray(1, 65));
    if (!bySignature.has(sig)) return submit(tx, { airdrop: true });
    // The same airdrop already landed in this slot: the next slot gives a new signature.
    advance(1n);
  }
  throw new RpcError(-32603, 'airdrop failed: could not produce a unique transaction');
}

setSlot(0n);

const voteAccounts = []; // {vote, node, commission, delinquent, extra}
const voteRent = svm.inner.minimumBalanceForRentExemption(VOTE_STATE_SIZE);
const DEFAULT_COMMISSION = 10;

// createVoteAccount creates and initializes a real vote account whose keys derive from label.
function createVoteAccount(label, commission, delinquent, extra) {
  const vote = keypairFromLabel(`vote:${label}`);
  const node = keypairFromLabel(`node:${label}`);
  const withdrawer = keypairFromLabel(`withdrawer:${label}`);
  const bh = b58decode(blockhashAt(slot));
  const tx = buildLegacyTransaction(
    faucet.pub,
    [
      transferIx(faucet.pub, node.pub, 1_000_000_000n),
      createAccountIx(faucet.pub, vote.pub, voteRent, VOTE_STATE_SIZE, VOTE_PROGRAM),
      initializeVoteIx(vote.pub, node.pub, node.pub, withdrawer.pub, commission),
    ],
    bh,
    [faucet, vote, node],
  );
  submit(tx);
  const v = { vote: b58encode(vote.pub), node: b58encode(node.pub), commission, delinquent, extra };
  voteAccounts.push(v);
  return v;
}

for (let i = 0; i < opts.voteAccounts + opts.delinquentVoteAccounts; i++) {
  createVoteAccount(String(i), DEFAULT_COMMISSION, i >= opts.voteAccounts, false);
}
let extraVoteAccounts = 0;

// stakeMinimumDelegation is the stake program's minimum delegation, read once by simulating
// GetMinimumDelegation (its return data).
let minimumDelegation = null;
function stakeMinimumDelegation() {
  if (minimumDelegation !== null) return minimumDelegation;
  const ix = { programId: STAKE_PROGRAM, accounts: [], data: u32le(13) };
  const tx = buildLegacyTransaction(faucet.pub, [ix], b58decode(blockhashAt(slot)), [faucet]);
  const sim = svm.inner.simulateLegacyTransaction(tx);
  if (typeof sim.err === 'function') throw new RpcError(-32603, `Internal error: GetMinimumDelegation failed: ${describeError(sim.err()).text}`);
  const data = Buffer.from(sim.meta().returnData().data());
  if (data.length < 8) throw new RpcError(-32603, 'Internal error: GetMinimumDelegation returned no u64');
  minimumDelegation = data.readBigUInt64LE(0);
  return minimumDelegation;
}

// returnDataOf is the RPC form of a simulation's return data, null when none was set.
function returnDataOf(meta) {
  const rd = meta.returnData();
  const data = Buffer.from(rd.data());
  const programId = Buffer.from(rd.programId());
  if (data.length === 0 && programId.every((b) => b === 0)) return null;
  return { programId: b58encode(programId), data: [data.toString('base64'), 'base64'] };
}

// ---------- RPC ----------

function context() {
  return { slot, apiVersion: '2.2.0' };
}

function configOf(params, index) {
  const c = params[index];
  return c && typeof c === 'object' && !Array.isArray(c) ? c : {};
}

function encodeAccount(acc, encoding) {
  if (!acc) return null;
  const data = Buffer.from(acc.data());
  let enc;
  if (encoding === 'base58') enc = [b58encode(data), 'base58'];
  else if (encoding === 'base64' || encoding === undefined || encoding === 'jsonParsed' || encoding === 'json') enc = [data.toString('base64'), 'base64'];
  else throw new RpcError(-32602, `Invalid params: unsupported encoding ${encoding}`);
  return {
    lamports: acc.lamports(),
    owner: b58encode(acc.owner()),
    data: enc,
    executable: acc.executable(),
    rentEpoch: acc.rentEpoch(),
    space: BigInt(data.length),
  };
}

function decodeTxParam(params) {
  const raw = params[0];
  const encoding = configOf(params, 1).encoding ?? 'base58';
  if (typeof raw !== 'string') throw new RpcError(-32602, 'Invalid params: expected an encoded transaction string');
  if (encoding === 'base64') return new Uint8Array(Buffer.from(raw, 'base64'));
  if (encoding === 'base58') return b58decode(raw);
  throw new RpcError(-32602, `Invalid params: unsupported encoding ${encoding}`);
}

function signatureStatus(entry, searchHistory) {
  if (!entry) return null;
  const age = slot - entry.slot;
  if (!searchHistory && age > STATUS_CACHE_SLOTS) return null;
  const finalized = age >= FINALIZATION_DEPTH;
  return {
    slot: entry.slot,
    confirmations: finalized ? null : age,
    err: null,
    status: { Ok: null },
    confirmationStatus: finalized ? 'finalized' : 'confirmed',
  };
}

// transactionJson is a parsed transaction in getTransaction's "json" form, or, parsed, in
// "jsonParsed" form. The runtime has no instruction parsers: in jsonParsed every instruction
// is partially decoded ({programId, accounts, data}), the form Agave gives to a program it
// cannot parse, where Agave would parse the system, stake and compute budget programs'.
function transactionJson(tx, parsed) {
  const keys = tx.accountKeys.map(b58encode);
  const [numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts] = tx.header;
  const writable = new Set(writableKeys(tx));
  const message = parsed
    ? {
        accountKeys: keys.map((pubkey, i) => ({ pubkey, writable: writable.has(pubkey), signer: i < numRequiredSignatures, source: 'transaction' })),
        recentBlockhash: b58encode(tx.recentBlockhash),
        instructions: tx.instructions.map((ix) => ({
          programId: keys[ix.programIdIndex],
          accounts: [...ix.accounts].map((i) => keys[i]),
          data: b58encode(ix.data),
          stackHeight: null,
        })),
      }
    : {
        accountKeys: keys,
        header: { numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts },
        recentBlockhash: b58encode(tx.recentBlockhash),
        instructions: tx.instructions.map((ix) => ({
          programIdIndex: ix.programIdIndex,
          accounts: [...ix.accounts],
          data: b58encode(ix.data),
          stackHeight: null,
        })),
      };
  if (tx.version !== 'legacy') message.addressTableLookups = [];
  return { signatures: tx.signatures.map(b58encode), message };
}

const methods = {
  getHealth: () => 'ok',
  getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 0 }),
  getGenesisHash: () => genesisHash,
  getSlot: () => slot,
  getBlockHeight: () => slot,
  getLatestBlockhash: () => ({ context: context(), value: latestBlockhash() }),
  isBlockhashValid: (p) => ({ context: context(), value: blockhashValid(p[0]) }),
  getEpochInfo: () => ({
    absoluteSlot: slot,
    blockHeight: slot,
    epoch: epochOf(slot),
    slotIndex: slot % SLOTS_PER_EPOCH,
    slotsInEpoch: SLOTS_PER_EPOCH,
    transactionCount: BigInt(ledger.length),
  }),
  getEpochSchedule: () => ({
    slotsPerEpoch: SLOTS_PER_EPOCH,
    leaderScheduleSlotOffset: SLOTS_PER_EPOCH,
    warmup: false,
    firstNormalEpoch: 0,
    firstNormalSlot: 0,
  }),
  getMinimumBalanceForRentExemption: (p) => svm.inner.minimumBalanceForRentExemption(BigInt(p[0] ?? 0)),
  getAccountInfo: (p) => ({ context: context(), value: encodeAccount(svm.inner.getAccount(pubkeyParam(p[0])), configOf(p, 1).encoding) }),
  getMultipleAccounts: (p) => {
    if (!Array.isArray(p[0])) throw new RpcError(-32602, 'Invalid params: expected an array of public keys');
    const enc = configOf(p, 1).encoding;
    return { context: context(), value: p[0].map((k) => encodeAccount(svm.inner.getAccount(pubkeyParam(k)), enc)) };
  },
  getBalance: (p) => ({ context: context(), value: svm.inner.getBalance(pubkeyParam(p[0])) ?? 0n }),
  requestAirdrop: (p) => {
    const to = pubkeyParam(p[0]);
    const lamports = BigInt(p[1] ?? 0);
    if (lamports <= 0n) throw new RpcError(-32602, 'Invalid params: lamports must be positive');
    return airdrop(to, lamports);
  },
  sendTransaction: (p) => submit(decodeTxParam(p)),
  simulateTransaction: (p) => {
    const bytes = decodeTxParam(p);
    let tx;
    try {
      tx = parseTransaction(bytes);
    } catch (e) {
      throw new RpcError(-32602, `invalid transaction: failed to deserialize transaction: ${e.message}`);
    }
    const cfg = configOf(p, 1);
    if (cfg.sigVerify) {
      for (let i = 0; i < tx.signatures.length; i++) {
        if (!verifySig(tx.accountKeys[i], tx.message, tx.signatures[i])) throw new RpcError(-32003, 'Transaction signature verification failure');
      }
    }
    if (!cfg.replaceRecentBlockhash && !blockhashValid(b58encode(tx.recentBlockhash))) {
      return { context: context(), value: txErrorData(null, 'BlockhashNotFound') };
    }
    svm.inner.setSigverify(false);
    let sim;
    try {
      sim = tx.version === 'legacy' ? svm.inner.simulateLegacyTransaction(bytes) : svm.inner.simulateVersionedTransaction(bytes);
    } finally {
      svm.inner.setSigverify(true);
    }
    if (typeof sim.err === 'function') return { context: context(), value: txErrorData(sim.meta(), describeError(sim.err()).json) };
    const meta = sim.meta();
    return { context: context(), value: { err: null, logs: meta.logs(), accounts: null, unitsConsumed: meta.computeUnitsConsumed(), returnData: returnDataOf(meta) } };
  },
  getFeeForMessage: (p) => {
    if (typeof p[0] !== 'string') throw new RpcError(-32602, 'Invalid params: expected a base64 message string');
    let msg;
    try {
      msg = parseMessageOnly(new Uint8Array(Buffer.from(p[0], 'base64')));
    } catch (e) {
      throw new RpcError(-32602, `invalid message: failed to deserialize message: ${e.message}`);
    }
    return { context: context(), value: blockhashValid(b58encode(msg.recentBlockhash)) ? feeOf(msg) : null };
  },
  getRecentPrioritizationFees: (p) => {
    const list = p[0] ?? [];
    if (!Array.isArray(list)) throw new RpcError(-32602, 'Invalid params: expected an array of public keys');
    if (list.length > MAX_PRIORITIZATION_FEE_ACCOUNTS) {
      throw new RpcError(-32602, `Too many inputs provided; max ${MAX_PRIORITIZATION_FEE_ACCOUNTS}`);
    }
    return recentPrioritizationFees(list.map((k) => b58encode(pubkeyParam(k))));
  },
  getStakeMinimumDelegation: () => ({ context: context(), value: stakeMinimumDelegation() }),
  getSignatureStatuses: (p) => {
    if (!Array.isArray(p[0])) throw new RpcError(-32602, 'Invalid params: expected an array of signatures');
    const search = !!configOf(p, 1).searchTransactionHistory;
    return { context: context(), value: p[0].map((s) => signatureStatus(bySignature.get(s), search)) };
  },
  getTransaction: (p) => {
    const e = bySignature.get(p[0]);
    if (!e) return null;
    const cfg = configOf(p, 1);
    const enc = cfg.encoding ?? 'json';
    const raw = Buffer.from(e.raw, 'base64');
    let transaction;
    if (enc === 'base64') transaction = [e.raw, 'base64'];
    else if (enc === 'base58') transaction = [b58encode(raw), 'base58'];
    else if (enc === 'json' || enc === 'jsonParsed') transaction = transactionJson(parseTransaction(new Uint8Array(raw)), enc === 'jsonParsed');
    else throw new RpcError(-32602, `Invalid params: unknown variant \`${String(enc).slice(0, 100)}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\``);
    return {
      slot: e.slot,
      blockTime: e.blockTime,
      version: e.version === 'legacy' ? 'legacy' : e.version,
      transaction,
      meta: {
        err: null,
        status: { Ok: null },
        fee: e.fee,
        preBalances: e.preBalances,
        postBalances: e.postBalances,
        innerInstructions: [],
        preTokenBalances: [],
        postTokenBalances: [],
        logMessages: e.logs,
        rewards: [],
        loadedAddresses: { writable: [], readonly: [] },
        computeUnitsConsumed: e.unitsConsumed,
      },
    };
  },
  getVoteAccounts: () => {
    const stakes = activeStakeByVoter();
    const epoch = epochOf(slot);
    const out = { current: [], delinquent: [] };
    for (const v of voteAccounts) {
      const activatedStake = stakes.get(v.vote) ?? 0n;
      const lastVote = v.delinquent ? 0n : slot;
      out[v.delinquent ? 'delinquent' : 'current'].push({
        votePubkey: v.vote,
        nodePubkey: v.node,
        activatedStake,
        epochVoteAccount: true,
        commission: v.commission,
        lastVote,
        rootSlot: lastVote > 32n ? lastVote - 32n : 0n,
        epochCredits: [[epoch, 0n, 0n]],
      });
    }
    return out;
  },

  sandbox_advanceSlots: (p) => {
    advance(BigInt(sandboxArg(p, 'n')));
    return { slot };
  },
  sandbox_warpEpochs: (p) => {
    const n = BigInt(sandboxArg(p, 'n'));
    moveTo((epochOf(slot) + n) * SLOTS_PER_EPOCH);
    return { slot, epoch: epochOf(slot) };
  },
  sandbox_expireBlockhashes: () => {
    advance(VALIDITY + 1n);
    return { slot };
  },
  sandbox_ledger: () =>
    ledger.map((e) => ({ signature: e.signature, slot: e.slot, feePayer: e.feePayer, accounts: e.accounts, airdrop: e.airdrop, err: null })),
  sandbox_stats: () => {
    syncStakeEpoch();
    return {
      accountsScanned: stats.accountsScanned,
      stakeAccountsIndexed: BigInt(stakeIndex.size),
      epochChangesApplied: stats.epochChangesApplied,
      epochChangesPending: BigInt(changesByEpoch.size),
      transactions: BigInt(ledger.length),
    };
  },
  sandbox_scanActivatedStake: () => Object.fromEntries(scanActiveStakeByVoter()),
  sandbox_voteAccounts: () =>
    voteAccounts.map((v) => ({ votePubkey: v.vote, nodePubkey: v.node, commission: v.commission, delinquent: v.delinquent, extra: v.extra })),
  sandbox_createVoteAccount: (p) => {
    const commission = Number(sandboxArg(p, 'commission'));
    if (commission > 100) throw new RpcError(-32602, 'Invalid params: commission must be at most 100');
    const v = createVoteAccount(`extra:${extraVoteAccounts++}`, commission, false, true);
    return { votePubkey: v.vote, nodePubkey: v.node, commission: v.commission, delinquent: v.delinquent, extra: v.extra };
  },
  sandbox_config: () => ({
    slotDurationMs: opts.slotDurationMs,
    manualClock: opts.manualClock,
    slotsPerEpoch: SLOTS_PER_EPOCH,
    blockhashValidity: VALIDITY,
    finalizationDepth: FINALIZATION_DEPTH,
    voteAccounts: opts.voteAccounts,
    delinquentVoteAccounts: opts.delinquentVoteAccounts,
    genesisSeed: opts.genesisSeed,
    faucet: b58encode(faucet.pub),
    genesisHash,
  }),
};

// sandboxArg reads a named argument given either as {name: v} or as the first positional value.
function sandboxArg(p, name) {
  const v = Array.isArray(p) ? (p[0] && typeof p[0] === 'object' ? p[0][name] : p[0]) : p?.[name];
  if (v === undefined || v === null || !/^\d+$/.test(String(v))) throw new RpcError(-32602, `Invalid params: ${name} must be a non-negative integer`);
  return v;
}

function stringify(v) {
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `@@BIG@@${x}@@` : x)).replace(/"@@BIG@@(-?\d+)@@"/g, '$1');
}

function handle(req) {
  if (!req || typeof req !== 'object' || req.jsonrpc !== '2.0' || typeof req.method !== 'string') {
    return { jsonrpc: '2.0', id: req?.id ?? null, error: { code: -32600, message: 'Invalid request' } };
  }
  const fn = Object.hasOwn(methods, req.method) ? methods[req.method] : undefined;
  if (!fn) return { jsonrpc: '2.0', id: req.id ?? null, error: { code: -32601, message: 'Method not found' } };
  try {
    catchUp();
    scheduleNotify();
    return { jsonrpc: '2.0', id: req.id ?? null, result: fn(req.params ?? []) };
  } catch (e) {
    if (e instanceof RpcError) {
      const error = { code: e.code, message: e.message };
      if (e.data !== undefined) error.data = e.data;
      return { jsonrpc: '2.0', id: req.id ?? null, error };
    }
    return { jsonrpc: '2.0', id: req.id ?? null, error: { code: -32603, message: `Internal error: ${e.message}` } };
  }
}


// ---------- subscriptions ----------
//
// A websocket upgrade on the runtime's port opens Solana's PubSub API: signatureSubscribe and
// slotSubscribe with their unsubscribes (any other method: Method not found, as over HTTP the
// subscribe methods are). A signature subscription is notified once, when the signature
// reaches the commitment asked for (getSignatureStatuses' view: processed and confirmed when
// it lands, finalized FINALIZATION_DEPTH slots later), and then removed, as Agave does; asked
// with enableReceivedNotification it is first told "receivedSignature" when the transaction
// lands. A slot subscription is notified with the chain's slot each time it moves: one
// notification per move, so slots skipped at once (warps, the lazy clock catching up) are not
// notified one by one.
//
// Subscriptions are checked after every request (a landed transaction, a moved slot) and, while
// any exist, on a timer set to the next slot boundary, so that the slot clock moves and
// notifications go out though no request arrives. With no subscription there is no timer.

const COMMITMENT_RANK = { processed: 0, recent: 0, confirmed: 1, single: 1, singleGossip: 1, finalized: 2, max: 2, root: 2 };
const STATUS_RANK = { processed: 0, confirmed: 1, finalized: 2 };


function scheduleNotify() {
  if (notifyScheduled || subscriptions.size === 0) return;
  notifyScheduled = true;
  setImmediate(() => {
    notifyScheduled = false;
    notifySubscriptions();
  });
}

function sendNotification(sub, method, result) {
  if (sub.ws.readyState !== WebSocket.OPEN) return;
  sub.ws.send(stringify({ jsonrpc: '2.0', method, params: { result, subscription: sub.id } }));
}

function notifySubscriptions() {
  for (const sub of [...subscriptions.values()]) {
    if (sub.method === 'slot') {
      if (sub.lastSlot === slot) continue;
      sub.lastSlot = slot;
      sendNotification(sub, 'slotNotification', { parent: slot > 0n ? slot - 1n : 0n, root: slot > FINALIZATION_DEPTH ? slot - FINALIZATION_DEPTH : 0n, slot });
      continue;
    }
    const entry = bySignature.get(sub.signature);
    const status = signatureStatus(entry, false);
    if (!status) continue;
    if (sub.enableReceivedNotification && !sub.received) {
      sub.received = true;
      sendNotification(sub, 'signatureNotification', { context: { slot }, value: 'receivedSignature' });
    }
    if (STATUS_RANK[status.confirmationStatus] < sub.rank) continue;
    subscriptions.delete(sub.id);
    sendNotification(sub, 'signatureNotification', { context: { slot }, value: { err: status.err } });
  }
  armSlotTimer();
}

// armSlotTimer keeps one timer, due at the next slot boundary of the wall clock, while
// subscriptions exist.
function armSlotTimer() {
  if (subscriptions.size === 0) {
    if (slotTimer) clearTimeout(slotTimer);
    slotTimer = null;
    return;
  }
  if (slotTimer || opts.manualClock) return;
  const intoSlot = (process.hrtime.bigint() - clockStart) % slotNs;
  const ms = Math.max(1, Math.ceil(Number(slotNs - intoSlot) / 1e6));
  slotTimer = setTimeout(() => {
    slotTimer = null;
    catchUp();
    notifySubscriptions();
  }, ms);
}

const pubsubMethods = {
  signatureSubscribe: (p, ws) => {
    const signature = p[0];
    if (typeof signature !== 'string' || b58decodeOrNull(signature)?.length !== 64) {
      throw new RpcError(-32602, `Invalid Request: Invalid signature ${JSON.stringify(String(signature).slice(0, 100))}`);
    }
    const cfg = configOf(p, 1);
    const rank = COMMITMENT_RANK[cfg.commitment ?? 'finalized'];
    if (rank === undefined) throw new RpcError(-32602, `Invalid params: unknown commitment ${JSON.stringify(String(cfg.commitment).slice(0, 100))}`);
    return subscribe(ws, { method: 'signature', signature, rank, enableReceivedNotification: !!cfg.enableReceivedNotification, received: false });
  },
  signatureUnsubscribe: (p, ws) => unsubscribe(ws, 'signature', p[0]),
  slotSubscribe: (_p, ws) => subscribe(ws, { method: 'slot', lastSlot: slot }),
  slotUnsubscribe: (p, ws) => unsubscribe(ws, 'slot', p[0]),
};

function b58decodeOrNull(s) {
  try {
    return b58decode(s);
  } catch {
    return null;
  }
}

function subscribe(ws, sub) {
  sub.id = nextSubscriptionId++;
  sub.ws = ws;
  subscriptions.set(sub.id, sub);
  scheduleNotify(); // after the answer with the id has gone out
  return sub.id;
}

function unsubscribe(ws, method, id) {
  const sub = typeof id === 'number' || typeof id === 'bigint' ? subscriptions.get(Number(id)) : undefined;
  if (!sub || sub.ws !== ws || sub.method !== method) throw new RpcError(-32602, 'Invalid subscription id.');
  subscriptions.delete(sub.id);
  armSlotTimer();
  return true;
}

// handlePubsub answers one request over a websocket; a notification (no id) gets no answer.
function handlePubsub(req, ws) {
  if (!req || typeof req !== 'object' || req.jsonrpc !== '2.0' || typeof req.method !== 'string') {
    return { jsonrpc: '2.0', id: req?.id ?? null, error: { code: -32600, message: 'Invalid request' } };
  }
  if (req.id === undefined) return null;
  const fn = Object.hasOwn(pubsubMethods, req.method) ? pubsubMethods[req.method] : undefined;
  if (!fn) return { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'Method not found' } };
  try {
    catchUp();
    return { jsonrpc: '2.0', id: req.id, result: fn(Array.isArray(req.params) ? req.params : [], ws) };
  } catch (e) {
    const error = e instanceof RpcError ? { code: e.code, message: e.message } : { code: -32603, message: `Internal error: ${e.message}` };
    return { jsonrpc: '2.0', id: req.id, error };
  }
}

const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });

wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => {
    let body;
    try {
      body = JSON.parse(isBinary ? Buffer.from(data).toString('utf8') : data.toString());
    } catch {
      ws.send(stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      return;
    }
    const out = Array.isArray(body) ? body.map((r) => handlePubsub(r, ws)).filter((r) => r !== null) : handlePubsub(body, ws);
    if (out !== null && !(Array.isArray(out) && out.length === 0)) ws.send(stringify(out));
  });
  ws.on('error', () => {});
  ws.on('close', () => {
    for (const [id, sub] of subscriptions) if (sub.ws === ws) subscriptions.delete(id);
    armSlotTimer();
  });
});

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { 'content-type': 'text/plain' });
    res.end('Used HTTP Method is not allowed. POST or OPTIONS is required\n');
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      return;
    }
    const out = Array.isArray(body) ? body.map(handle) : handle(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(stringify(out));
  });
});

server.on('upgrade', (req, socket, head) => {
  wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
});

server.listen(opts.port, opts.host, () => {
  process.stdout.write(`SOLANART_READY ${server.address().port}\n`);
});

function shutdown() {
  wss.close();
  server.close();
  process.exit(0);
}

process.stdin.on('end', shutdown);
process.stdin.on('close', shutdown);
process.stdin.resume();
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
