// Golden vectors for stakeflow's Solana signer, made by an independent implementation:
// @solana/web3.js (the exact version pinned in package.json), with its OWN builders
// (StakeProgram.createAccountWithSeed, StakeProgram.delegate, StakeProgram.deactivate,
// StakeProgram.withdraw, ComputeBudgetProgram.setComputeUnitLimit / setComputeUnitPrice) and its
// own message compiler (Transaction.serializeMessage).
//
// Regenerate (the Go tests read vectors.json and never run Node):
//
//   cd testdata/web3js && npm ci && node vectors.mjs > vectors.json
//
// then `go test -count=1 -run Web3 ./signer/`. The output depends only on the inputs below and on
// web3.js: a diff in vectors.json after a version bump is web3.js changing what it builds.
//
// The inputs are the signer tests' fixture (signer/helpers_test.go): the staker is the key whose
// seed bytes are 201, 202, ..., 232 (testKey(201)), the vote account testKey(20), the existing
// stake account testKey(60), the blockhash sha256("stakeflow test blockhash").

import { createRequire } from 'node:module';
import {
  Authorized,
  ComputeBudgetProgram,
  Keypair,
  Lockup,
  PublicKey,
  StakeProgram,
  Transaction,
} from '@solana/web3.js';

const require = createRequire(import.meta.url);
const web3Version = require('@solana/web3.js/package.json').version;

const STAKER = new PublicKey('CJkp6DzFiiwzpCNvpzchjoSnayb1xe5XAJTFLEperHwD');
const STAKER_SEED = Uint8Array.from({ length: 32 }, (_, i) => 201 + i); // testKey(201); test key only
const VOTE = new PublicKey('7X4wfD5QrvenJxqRZwiyw76HU1eDgb4ncTyzAqxSQySU');
const STAKE_ACCOUNT = new PublicKey('31ZLwexfohLdoKogocG8Ci65XLDYhnJtGVE9MFKzzvUg'); // an existing one
const BLOCKHASH = '7rR7WuQX4riBhVNpx4BypikToRzSWqQYRiqmzMxoLGJu';
const SEED = 'stake:0';
const STAKE_LAMPORTS = 2_000_000_000; // funded into the new stake account (rent included)
const WITHDRAW_LAMPORTS = 1_500_000_000;
const UNIT_LIMIT = 200_000;
const UNIT_PRICE = 5_000; // micro-lamports per unit

const staker = Keypair.fromSeed(STAKER_SEED);
if (!staker.publicKey.equals(STAKER)) throw new Error(`staker seed gives ${staker.publicKey.toBase58()}, not ${STAKER.toBase58()}`);

const derived = await PublicKey.createWithSeed(STAKER, SEED, StakeProgram.programId);

function budget() {
  return [
    ComputeBudgetProgram.setComputeUnitLimit({ units: UNIT_LIMIT }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: UNIT_PRICE }),
  ];
}

// stakeInstructions: the stake as web3.js builds it, the staker funding, basing and authorizing.
function stakeInstructions() {
  const create = StakeProgram.createAccountWithSeed({
    fromPubkey: STAKER,
    stakePubkey: derived,
    basePubkey: STAKER,
    seed: SEED,
    authorized: new Authorized(STAKER, STAKER),
    lockup: Lockup.default,
    lamports: STAKE_LAMPORTS,
  });
  const delegate = StakeProgram.delegate({ stakePubkey: derived, authorizedPubkey: STAKER, votePubkey: VOTE });
  return [...create.instructions, ...delegate.instructions];
}

function deactivateInstructions() {
  return StakeProgram.deactivate({ stakePubkey: STAKE_ACCOUNT, authorizedPubkey: STAKER }).instructions;
}

function withdrawInstructions() {
  return StakeProgram.withdraw({
    stakePubkey: STAKE_ACCOUNT,
    authorizedPubkey: STAKER,
    toPubkey: STAKER,
    lamports: WITHDRAW_LAMPORTS,
  }).instructions;
}

// withBaseMeta is the stake with one change made here, not by web3.js: the base account (the
// staker, signer, read-only) appended to CreateAccountWithSeed as its third account, the form
// stakeflow's verifier expects. web3.js omits it when base == funding account.
function withBaseMeta(instrs) {
  const [create, ...rest] = instrs;
  create.keys.push({ pubkey: STAKER, isSigner: true, isWritable: false });
  return [create, ...rest];
}

function vector(name, operation, builders, instrs, note) {
  const tx = new Transaction({ feePayer: STAKER, recentBlockhash: BLOCKHASH });
  tx.add(...instrs);
  const message = tx.serializeMessage();
  const unsigned = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
  tx.sign(staker);
  const v = {
    name,
    operation,
    builders,
    instructions: instrs.map((ix) => ({
      program: ix.programId.toBase58(),
      accounts: ix.keys.map((k) => ({ pubkey: k.pubkey.toBase58(), isSigner: k.isSigner, isWritable: k.isWritable })),
      data: Buffer.from(ix.data).toString('hex'),
    })),
    message: message.toString('hex'),
    transaction: unsigned.toString('base64'),
    signedTransaction: tx.serialize().toString('base64'),
  };
  if (note) v.note = note;
  return v;
}

const B = ['ComputeBudgetProgram.setComputeUnitLimit', 'ComputeBudgetProgram.setComputeUnitPrice'];
const STAKE_B = ['StakeProgram.createAccountWithSeed', 'StakeProgram.delegate'];
const out = {
  generator: { package: '@solana/web3.js', version: web3Version, script: 'testdata/web3js/vectors.mjs' },
  inputs: {
    staker: STAKER.toBase58(),
    vote: VOTE.toBase58(),
    stakeAccount: STAKE_ACCOUNT.toBase58(),
    seed: SEED,
    derivedStakeAccount: derived.toBase58(),
    blockhash: BLOCKHASH,
    stakeLamports: STAKE_LAMPORTS,
    stakeAccountSpace: StakeProgram.space,
    withdrawLamports: WITHDRAW_LAMPORTS,
    computeUnitLimit: UNIT_LIMIT,
    computeUnitPrice: UNIT_PRICE,
  },
  vectors: [
    vector('stake', 'stake', STAKE_B, stakeInstructions()),
    vector('stake with compute budget', 'stake', [...B, ...STAKE_B], [...budget(), ...stakeInstructions()]),
    vector('stake with the base account added', 'stake', STAKE_B, withBaseMeta(stakeInstructions()),
      'not web3.js output alone: CreateAccountWithSeed given the base account as third account by vectors.mjs'),
    vector('deactivate', 'unstake', ['StakeProgram.deactivate'], deactivateInstructions()),
    vector('deactivate with compute budget', 'unstake', [...B, 'StakeProgram.deactivate'], [...budget(), ...deactivateInstructions()]),
    vector('withdraw', 'withdraw', ['StakeProgram.withdraw'], withdrawInstructions()),
    vector('withdraw with compute budget', 'withdraw', [...B, 'StakeProgram.withdraw'], [...budget(), ...withdrawInstructions()]),
  ],
};
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
