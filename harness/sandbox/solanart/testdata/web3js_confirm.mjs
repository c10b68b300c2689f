// @solana/web3.js's own confirmation against stakeflow's local Solana runtime, for the steps
// testdata/web3js/lifecycle.mjs (at the repository root) sends with sendRawTransaction and
// confirms by polling: here deactivate and withdraw go through sendAndConfirmTransaction, whose
// confirmation (confirmTransaction) is web3.js's websocket signatureSubscribe. It also reads a
// landed transaction back with getTransaction (encoding json) and getParsedTransaction
// (encoding jsonParsed) and prints what web3.js made of it.
//
// Run by sandbox/solanart/web3js_test.go from the directory web3.js is installed in:
//
//   node confirm.mjs deactivate|withdraw|transaction < config.json
//
// config (JSON on stdin): url, wsEndpoint, secretKey, seed, withdrawLamports (withdraw),
// commitment (deactivate, withdraw: the commitment sendAndConfirmTransaction waits for),
// signature (transaction). It prints one JSON line on stdout.

import { Connection, Keypair, PublicKey, SendTransactionError, StakeProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

// send signs and sends instrs with sendAndConfirmTransaction at cfg.commitment. A transaction
// the runtime refuses at preflight is reported as web3.js parsed the refusal.
async function send(connection, staker, cfg, instrs) {
  const tx = new Transaction().add(...instrs);
  const started = Date.now();
  let signature;
  try {
    signature = await sendAndConfirmTransaction(connection, tx, [staker], { commitment: cfg.commitment, preflightCommitment: 'confirmed' });
  } catch (e) {
    if (!(e instanceof SendTransactionError)) throw e;
    return { refused: { error: e.constructor.name, message: e.transactionError.message, logs: e.transactionError.logs ?? null } };
  }
  const ms = Date.now() - started;
  const { value } = await connection.getSignatureStatuses([signature]);
  return { signature, ms, slot: value[0]?.slot, confirmationStatus: value[0]?.confirmationStatus };
}

async function stakeAccountOf(staker, cfg) {
  return PublicKey.createWithSeed(staker.publicKey, cfg.seed, StakeProgram.programId);
}

async function deactivate(connection, staker, cfg) {
  const stakeAccount = await stakeAccountOf(staker, cfg);
  const out = await send(connection, staker, cfg, StakeProgram.deactivate({ stakePubkey: stakeAccount, authorizedPubkey: staker.publicKey }).instructions);
  return { ...out, stakeAccount: stakeAccount.toBase58(), epoch: (await connection.getEpochInfo('confirmed')).epoch };
}

async function withdraw(connection, staker, cfg) {
  const stakeAccount = await stakeAccountOf(staker, cfg);
  const out = await send(connection, staker, cfg, StakeProgram.withdraw({
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

async function transaction(connection, _staker, cfg) {
  const opts = { commitment: 'confirmed', maxSupportedTransactionVersion: 0 };
  const got = await connection.getTransaction(cfg.signature, opts);
  const msg = got.transaction.message;
  const parsed = await connection.getParsedTransaction(cfg.signature, opts);
  return {
    json: {
      slot: got.slot,
      version: got.version,
      fee: got.meta.fee,
      err: got.meta.err,
      preBalances: got.meta.preBalances,
      postBalances: got.meta.postBalances,
      signatures: got.transaction.signatures,
      accountKeys: msg.staticAccountKeys.map((k) => k.toBase58()),
      header: msg.header,
      recentBlockhash: msg.recentBlockhash,
      instructions: msg.compiledInstructions.map((ix) => ({
        programIdIndex: ix.programIdIndex,
        accounts: ix.accountKeyIndexes,
        data: Buffer.from(ix.data).toString('hex'),
      })),
    },
    parsed: {
      slot: parsed.slot,
      fee: parsed.meta.fee,
      accountKeys: parsed.transaction.message.accountKeys.map((k) => ({ pubkey: k.pubkey.toBase58(), signer: k.signer, writable: k.writable })),
      instructions: parsed.transaction.message.instructions.map((ix) => ({
        programId: ix.programId.toBase58(),
        parsed: 'parsed' in ix,
        accounts: ix.accounts?.map((k) => k.toBase58()),
      })),
    },
  };
}

const steps = { deactivate, withdraw, transaction };

const step = process.argv[2];
if (!Object.hasOwn(steps, step)) {
  process.stderr.write(`usage: node confirm.mjs ${Object.keys(steps).join('|')} < config.json\n`);
  process.exit(2);
}
try {
  const cfg = await readStdin();
  const connection = new Connection(cfg.url, { commitment: 'confirmed', wsEndpoint: cfg.wsEndpoint });
  const staker = Keypair.fromSecretKey(Uint8Array.from(cfg.secretKey));
  const out = await steps[step](connection, staker, cfg);
  process.stdout.write(JSON.stringify({ step, staker: staker.publicKey.toBase58(), ...out }) + '\n');
  process.exit(0);
} catch (e) {
  process.stderr.write(`confirm ${step}: ${e?.stack ?? e}\n`);
  process.exit(1);
}
