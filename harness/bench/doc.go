// Package bench measures stakeflow's orchestration on the local stack (Temporal dev server,
// sandbox staking service on a real Solana runtime, worker), in one run and on the same server
// and worker settings for every side:
//
//   - orchestrated: N StakeWorkflows at concurrency C through the real workflows, activities,
//     signer and sandbox;
//   - ceiling: StakeWorkflow with activities that do nothing: its shape (CheckPolicy and Sign
//     local, CheckValidator, Build, Broadcast and Confirm normal activities) and what it writes
//     for the Web UI (search attributes, current details); beside it the plain
//     ceiling (the same shape writing none of that), and the plain one with Build and Broadcast
//     local and with every activity normal, registered under bench-only names in the
//     benchmark's worker;
//   - bare: the same service calls, verification, signing and confirmation from plain Go, with
//     no Temporal;
//   - Polygon: PolygonDelegateWorkflows on the stack's geth --dev chain against a bare client
//     calling the worker's EVM activities in-process in the workflow's order (BarePolygon), each
//     side from addresses of its own;
//   - parking: UnstakeWorkflows waiting for deactivation, with the worker's and the server's
//     resident memory and the worker's goroutines.
//
// Each side reports operations per second, p50/p95/p99 end-to-end latency and the CPU time per
// operation of the server, the benchmark's process and the Solana runtime (robust to other load
// on the machine, unlike the rates). Sides alternate in rounds on one stack; at concurrency 1
// they interleave operation by operation, in a shuffled order. The report holds
// the ratios orchestrated/ceiling and orchestrated/bare, every setting used, and how long each
// phase took. Nothing here is faked: failures are counted and reported, not retried away.
package bench
