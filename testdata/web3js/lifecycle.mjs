// An independent client of stakeflow's local Solana runtime (harness/sandbox/solanart): @solana/web3.js
// stakes from a seed, deactivates and withdraws through the runtime's JSON-RPC with its OWN
// builders (ComputeBudgetProgram, StakeProgram.createAccountWithSeed / delegate / deactivate /
// withdraw), its own signing, sending and RPC response parsing.
//
// Run by harness/sandbox/solanart/web3js_test.go, one step per run (the test moves epochs and checks the
// chain from Go between steps):
//
//   node lifecycle.mjs stake|deactivate|withdraw < config.json
//
// config (JSON on stdin): url, wsEndpoint, secretKey (the staker's 64 bytes, a test key), vote,
// seed, lamports (stake: funded into the stake account, rent included), unitLimit and unitPrice
// (stake: its compute budget), withdrawLamports (withdraw).
// It prints one JSON line, the step's outcome, on stdout; web3.js's own logging goes to stderr.
//
// The stake is sent with web3.js's sendAndConfirmTransaction, as a new user would. Its
// confirmation, web3.js's confirmTransaction, learns of the signature only through a websocket
// signatureSubscribe (its one getSignatureStatuses call waits for that subscription), so the step
// reports what sendAndConfirmTransaction did and then confirms by polling getSignatureStatuses
// itself, as the deactivate and withdraw steps do after sendRawTransaction.

import {
  Authorized,
  ComputeBudgetProgram,
  Connection,
  Keypair,
  Lockup,
  PublicKey,
  SendTransactionError,
  StakeProgram,
  Transaction,
  sendAndConfirmTransaction,
} from '@solana/web3.js';

const POLL_MS = 20;
const CONFIRM_WITHIN_MS = 20_000;

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

// confirm polls getSignatureStatuses until the signature is confirmed (or finalized).
async function confirm(connection, signature) {
  const deadline = Date.now() + CONFIRM_WITHIN_MS;
  for (;;) {
    const { value } = await connection.getSignatureStatuses([signature]);
    const st = value[0];
    if (st && st.err) throw new Error(`${signature} failed: ${JSON.stringify(st.err)}`);
    if (st && (st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized')) {
      return { slot: st.slot, confirmationStatus: st.confirmationStatus };
    }
    if (Date.now() > deadline) throw new Error(`${signature} not confirmed within ${CONFIRM_WITHIN_MS} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

// sendRaw signs instrs with the staker on the latest blockhash, sends the bytes and confirms by
// polling. A transaction the runtime refuses is reported as web3.js parsed the refusal.
async function sendRaw(connection, staker, instrs) {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: staker.publicKey, blockhash, lastValidBlockHeight }).add(...instrs);
  tx.sign(staker);
  let signature;
  try {
    signature = await connection.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' });
  } catch (e) {
    if (!(e instanceof SendTransactionError)) throw e;
    return { refused: { error: e.constructor.name, message: e.transactionError.message, logs: e.transactionError.logs ?? null } };
  }
  return { signature, ...(await confirm(connection, signature)) };
}

async function stake(connection, staker, cfg) {
  const stakeAccount = await PublicKey.createWithSeed(staker.publicKey, cfg.seed, StakeProgram.programId);
  const tx = new Transaction().add(
    ComputeBudgetProgram.setComputeUnitLimit({ units: cfg.unitLimit }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: cfg.unitPrice }),
    StakeProgram.createAccountWithSeed({
      fromPubkey: staker.publicKey,
      stakePubkey: stakeAccount,
      basePubkey: staker.publicKey,
      seed: cfg.seed,
      authorized: new Authorized(staker.publicKey, staker.publicKey),
      lockup: Lockup.default,
      lamports: cfg.lamports,
    }),
    StakeProgram.delegate({ stakePubkey: stakeAccount, authorizedPubkey: staker.publicKey, votePubkey: new PublicKey(cfg.vote) }),
  );
  // The blockhash and lastValidBlockHeight sendAndConfirmTransaction confirms against.
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
  tx.recentBlockhash = blockhash;
  tx.lastValidBlockHeight = lastValidBlockHeight;

  const started = Date.now();
  const sendAndConfirm = { ok: false };
  let signature;
  try {
    signature = await sendAndConfirmTransaction(connection, tx, [staker], { commitment: 'confirmed' });
    sendAndConfirm.ok = true;
  } catch (e) {
    sendAndConfirm.error = e.name;
    sendAndConfirm.message = e.message;
    signature = e.signature;
  }
  sendAndConfirm.ms = Date.now() - started;
  if (!signature) throw new Error(`sendAndConfirmTransaction failed before sending: ${sendAndConfirm.error}: ${sendAndConfirm.message}`);
  sendAndConfirm.blockHeightAfter = await connection.getBlockHeight('confirmed');
  sendAndConfirm.lastValidBlockHeight = lastValidBlockHeight;

  const landed = await confirm(connection, signature);
  const info = await connection.getAccountInfo(stakeAccount, 'confirmed');
  // getTransaction asks for encoding "json" (web3.js's only choice) to read meta.fee.
  const getTransaction = {};
  try {
    const got = await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    getTransaction.ok = true;
    getTransaction.fee = got?.meta?.fee;
  } catch (e) {
    getTransaction.ok = false;
    getTransaction.message = e.message;
  }
  return {
    signature,
    stakeAccount: stakeAccount.toBase58(),
    ...landed,
    sendAndConfirm,
    getTransaction,
    stakeAccountLamports: info?.lamports,
    stakeAccountOwner: info?.owner.toBase58(),
    stakeAccountSpace: info?.data.length,
    rentExempt: await connection.getMinimumBalanceForRentExemption(StakeProgram.space, 'confirmed'),
    epoch: (await connection.getEpochInfo('confirmed')).epoch,
  };
}

async function deactivate(connection, staker, cfg) {
  const stakeAccount = await PublicKey.createWithSeed(staker.publicKey, cfg.seed, StakeProgram.programId);
  const out = await sendRaw(connection, staker, StakeProgram.deactivate({ stakePubkey: stakeAccount, authorizedPubkey: staker.publicKey }).instructions);
  return { ...out, stakeAccount: stakeAccount.toBase58(), epoch: (await connection.getEpochInfo('confirmed')).epoch };
}

async function withdraw(connection, staker, cfg) {
  const stakeAccount = await PublicKey.createWithSeed(staker.publicKey, cfg.seed, StakeProgram.programId);
  const out = await sendRaw(connection, staker, StakeProgram.withdraw({
    stakePubkey: stakeAccount,
    authorizedPubkey: staker.publicKey,
    toPubkey: staker.publicKey,
    lamports: cfg.withdrawLamports,
  }).instructions);
  return {
    ...out,
    stakeAccount: stakeAccount.toBase58(),
    stakeAccountAfter: await connection.getAccountInfo(stakeAccount, 'confirmed'),
    stakerBalance: await connection.getBalance(staker.publicKey, 'confirmed'),
  };
}

const steps = { stake, deactivate, withdraw };

const step = process.argv[2];
if (!Object.hasOwn(steps, step)) {
  process.stderr.write(`usage: node lifecycle.mjs ${Object.keys(steps).join('|')} < config.json\n`);
  process.exit(2);
}
try {
  const cfg = await readStdin();
  const connection = new Connection(cfg.url, { commitment: 'confirmed', wsEndpoint: cfg.wsEndpoint });
  const staker = Keypair.fromSecretKey(Uint8Array.from(cfg.secretKey));
  const out = await steps[step](connection, staker, cfg);
  process.stdout.write(JSON.stringify({ step, staker: staker.publicKey.toBase58(), ...out }) + '\n');
  // web3.js keeps trying to reconnect its websocket: end here rather than wait for it.
  process.exit(0);
} catch (e) {
  process.stderr.write(`lifecycle ${step}: ${e?.stack ?? e}\n`);
  process.exit(1);
}
