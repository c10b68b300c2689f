// Package chaos runs stakeflow's operations under faults and checks that each happened exactly
// once, and that every fault class and recovery path it claims to exercise did happen.
//
// Run assembles the local stack with the parts that fail in production as separate processes: the
// Temporal dev server (the pinned CLI, on a SQLite database file) and the worker (the cmd/worker
// binary, with the flags a deployment passes). The staking-service sandbox and its Solana runtime
// run in the calling process. It then runs a seeded plan of operations, stakes alone and
// stake -> unstake -> withdraw chains, each with a staker of its own, while:
//   - the sandbox injects 429s with Retry-After, 500s, dropped connections and latency on the
//     build, broadcast and validator-status endpoints (the first 429, 500 and dropped connection
//     of each endpoint forced, the rest at seeded rates), and lets broadcasts land on chain while
//     their answer is lost (a 500 for the first half of the run, a dropped connection after; the
//     first of each certain). The first broadcast to land without losing its answer so loses it
//     and has its re-send refused. (FaultStage, OpeningFaults.)
//   - first thing in the run, the forced expiry (EventForcedExpiry): the sandbox answers the next
//     broadcast as sent without submitting it; once its operation is confirming it (epoch warps
//     held meanwhile), the worker is killed with SIGKILL (the first of the run's kills) and the
//     chain advanced past the transaction's blockhash validity and the expiry margin, so that the
//     operation proves it expired and builds it again;
//   - the worker is killed with SIGKILL at further seeded points and started again; a worker
//     that exits on its own (Temporal unreachable) is started again too;
//   - the Temporal dev server is stopped and started again on the same database;
//   - epochs turn only when the run warps them, while chains wait for activation and unstakes
//     wait for deactivation. A warp (and the forced expiry) expires every outstanding blockhash,
//     so it first holds new starts and waits (a while, not forever) until no operation is between
//     starting and broadcasting.
//
// With Config.PolygonOps, Polygon operations (delegates, and delegate -> unstake -> claim chains)
// run beside them on a geth --dev chain, several per EVM address, under the same process faults,
// with endpoint 4's faults (a transaction answered for and never forwarded, answers lost); the
// run advances the staking contracts' epoch while unstakes wait, and CheckPolygon holds the chain
// to them: each address's nonces used by exactly the reported transactions, no gap, its gas money
// and POL exact, each unbond claimed once.
//
// With Config.CelestiaOps, Celestia delegates from three delegators run on the sandbox's Celestia
// ledger (endpoint 3 broadcasting into it) under the same process faults, and CheckCelestia holds
// the ledger to them: each delegator's delegations exactly its completed delegates, one
// transaction each.
// With Config.CheckpointOps, EigenLayer checkpoints (one pod of 120 validators per owner, 1 start
// and 2 proofs batches from the sandbox's endpoint 5) run on the same chain under the same
// process faults (their transactions go through the worker's RPC, so endpoint 4's faults do not
// touch them), and CheckCheckpoints holds the chain to them: each pod's checkpoint started
// once and completed, its rewards credited once, its owner's nonce used by exactly the reported
// transactions.
//
// Operation IDs, staker keys, amounts, vote accounts, fault rates, fault stages and the points of
// the process faults all derive from Config.Seed, so a rerun with the same seed runs the same plan
// (timings differ).
//
// At the end Check compares the chain with the operations: every operation completed; each stake
// created exactly one stake account with exactly the lamports asked; each chain deactivated and
// withdrew once and closed its account; every transaction a staker paid for is one an operation
// reported, landed once; each staker's balance is exact to the lamport (5000 lamports per
// signature). The Report counts the faults injected (from the sandbox's "injected fault" log
// entries), the process faults, and the outcomes, CountRecoveries the recovery paths taken to the
// end (a dropped transaction that never landed while its operation's second build landed once; a
// refused re-send whose transaction an operation completed with); any violation is listed, and
// Report.Unexercised names every path of Report.Paths that did not happen.
package chaos
