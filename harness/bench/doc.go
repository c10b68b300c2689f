// Package bench measures stakeflow's orchestration on the local stack (Temporal dev server,
// sandbox staking service on a real Solana runtime, worker), in one run and on the same server
// and worker settings for every side:
//
//   - orchestrated: N StakeWorkflows at concurrency C through the real workflows, activities,
//     signer and sandbox;
//   - ceiling: StakeWorkflow's own code with activities that do nothing: the workflows the stake's
//     worker registers, registered as they are, beside a no-op of the same name and signature for
//     every activity it registers (RegisterCeiling), on a queue of its own. The ceiling has the
//     stake's shape by construction, and what it writes for the Web UI;
//   - orchestrated-encrypted: the orchestrated stake with the payload codec on, its worker and its
//     client on the same connection through a codec of a keyset made for the run, on a queue of
//     its own: what encryption costs;
//   - bare: the same service calls, verification, signing and confirmation from plain Go, with
//     no Temporal;
//   - Polygon: PolygonDelegateWorkflows on the stack's geth --dev chain against a bare client
//     calling the worker's EVM activities in-process in the workflow's order (BarePolygon), each
//     side from addresses of its own;
//   - Celestia: CelestiaDelegateWorkflows on the stack's Celestia ledger against a bare client
//     calling the worker's Celestia activities in-process in the workflow's order (BareCelestia),
//     each side from delegators of its own;
//   - parking: UnstakeWorkflows waiting for deactivation, with the worker's and the server's
//     resident memory and the worker's goroutines.
//
// Before any measurement, one stake of each workflow side is run and its history read: the
// ceiling and the encrypted side must ask the server for the orchestrated stake's activities in
// the same order, and only the encrypted side's payloads may be sealed.
//
// Each side reports operations per second, p50/p95/p99 end-to-end latency and the CPU time per
// operation of the server, the benchmark's process and the Solana runtime (robust to other load
// on the machine, unlike the rates). Sides alternate in rounds on one stack; at concurrency 1
// they interleave operation by operation, in a shuffled order. The report holds
// the ratios orchestrated/ceiling, orchestrated/bare and encrypted/orchestrated, every setting used, and how long each
// phase took. Nothing here is faked: failures are counted and reported, not retried away.
package bench
