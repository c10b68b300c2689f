// Package lease is the nonce lease of an address: one durable workflow (NonceLeaseWorkflow) per
// chain family, network and address (ID), the only source of that address's nonces for every
// stakeflow operation. It is chain-neutral: EVM nonces (Polygon, EigenLayer), Cosmos account
// sequences (Celestia) and Hyperliquid's delegators (no counter: the lease only orders their
// operations) go through it, each chain registering it with its own reader activity (Register).
//
// An operation leases the address (Acquire): it is granted the next nonce, uses as many
// consecutive nonces as its transactions need (a replacement reuses its step's nonce), and
// releases the lease with the first nonce it did not use (Lease.Release). One lease at a time:
// two operations from one address get consecutive nonces, and a nonce is never skipped nor given
// twice. Before each grant the lease reads the address's nonces from the chain: a transaction
// from the address that stakeflow did not send (pending in the pool, or having consumed a nonce)
// is reported to the operation asking, as a non-retryable error (ErrNonceConflict), never passed
// over in silence.
//
// The chain has the last word on a lease given back:
//   - A release is not trusted alone. The lease reads the chain and hands out nothing until the
//     nonce consumed at final depth reaches the release's Next and nothing of the address is
//     pending or short of final depth (a build of the holder's still open). A chain count above
//     Next (the holder's transaction landed past what it said) is taken, and recorded in
//     State.Events; a count below it is never passed over (no nonce is handed out above a gap):
//     the lease re-reads, and the waiting operations are told why past CheckEvery. An operator's
//     way out is SignalResync (take the chain's count).
//   - A holder that closed without releasing (terminated, timed out, failed, continued as new)
//     is found by a durable timer (every CheckEvery) that describes its run (the LeaseHolder
//     activity): the waiting operations are told at once (a stall and a notice on each), and the
//     lease is freed at the chain's count once the chain has the last word on everything pending.
//   - Waiting operations rest in StepWaitingNonce, told whom they wait on; past MaxStallWait, or
//     when the lease tells them it does not come, they show as stalled.
//   - The run continues as new after grantsPerRun grants when idle, and whatever it holds past
//     stepsPerRun loop turns or historyLimit events, carrying its holder, queue, settling lease
//     and events.
//
// The package holds both sides: the workflow and the workflow-side helpers (Acquire, Release),
// and the activity code that reaches Temporal (the LeaseHolder activity, Ask for the chains'
// request activities).
package lease
