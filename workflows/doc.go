// Package workflows is stakeflow's operation core, the same for every chain: the task queue, query
// and update names, search-attribute keys, steps, the status the `status` query returns, options,
// and Operation: validation of the approval gate, policy and approval, status, search attributes
// and the Web UI's details, stalls, cancel, and the transact loop every on-chain step goes through
// (Transact).
//
// Each chain's workflows live in their own package below (workflows/solana, ...): they supply the
// chain's intent, amount unit and the activities of a transaction step (a Tx), and use the core for
// the rest. The core names no chain.
//
// Every operation is one workflow whose ID is the operation ID chosen by the caller; a second start
// with the same ID is refused, also after the first has finished (see the starter's StartOptions).
//
// The transact loop keeps the invariants of the design:
//   - nothing is signed before the signer has checked the unsigned transaction against the intent
//     (the chain's Sign activity fails closed, non-retryably);
//   - broadcast retries re-send the same signed bytes, and "already processed" counts as sent;
//   - a new transaction for the same intent is built only after the previous one provably cannot
//     land (Confirm's "cannot-land" outcome; on a chain with nonces, its "replace" outcome: a replacement under the same
//     nonce, so only one can ever land), and only a bounded number of times;
//   - cancelling before the first broadcast ends the operation with nothing sent; after it, the
//     workflow still follows the transaction to its end on a disconnected context.
//
// Workflow code here is deterministic: no I/O, no wall clock, no randomness, no goroutines, no map
// iteration. All I/O goes through activities.
package workflows
