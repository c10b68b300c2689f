// Package workflows holds stakeflow's Temporal workflows and everything their callers share with
// them: the task queue, workflow, query and update names, search-attribute keys, inputs, results
// and the status the `status` query returns.
//
// Every operation is one workflow whose ID is the operation ID chosen by the caller; a second start
// with the same ID is refused, also after the first has finished (see the starter's StartOptions).
//
// The workflows keep the invariants of the design:
//   - nothing is signed before the signer has checked the unsigned transaction against the intent
//     (the Sign activity fails closed, non-retryably);
//   - broadcast retries re-send the same signed bytes, and "already processed" counts as sent;
//   - a new transaction for the same intent is built only after the previous one provably cannot
//     land: its blockhash expired and its signature is absent from the chain (Confirm's "expired"
//     outcome), and only a bounded number of times;
//   - cancelling before the first broadcast ends the operation with nothing sent; after it, the
//     workflow still follows the transaction to its end on a disconnected context.
//
// Workflow code here is deterministic: no I/O, no wall clock, no randomness, no goroutines, no map
// iteration. All I/O goes through the activities package.
package workflows
