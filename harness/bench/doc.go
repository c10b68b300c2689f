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
//   - Hyperliquid: HyperliquidWithdrawWorkflows on the sandbox's Hyperliquid exchange against a
//     bare client calling the worker's Hyperliquid activities in-process in the workflow's order
//     (BareHyperliquid), each side from delegators of its own (the stack's EVM keys), each
//     withdrawal measured until the delegator's history shows it (the workflow gives its lease
//     back): the queue to spot after it is the chain's time, waited out afterwards;
//   - EigenLayer: EigenLayerCheckpointWorkflows on the stack's geth --dev chain against a bare
//     client calling the worker's EigenLayer and EVM activities in-process in the workflow's
//     order, each proofs batch by reference (BareEigenLayer), one checkpoint at a time, each side
//     on a pod of its own: each side's checkpoint wall time and time per batch;
//   - parking: UnstakeWorkflows waiting for deactivation on the shipped worker binary, run in a
//     process of its own on queues of its own, with that worker's resident memory (settled),
//     Go heap and goroutines, the server's resident memory, and the verdict against the goal
//     of 10,000 under 120 MB.
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
