// Package harness holds what runs and checks stakeflow but is not stakeflow: the staking-service
// sandbox and its chain stand-ins (sandbox), the local stack (stack), the process helpers
// (childproc, gethdev), the chaos run (chaos), the benchmark (bench), the cluster on the real
// Temporal server (cluster), and their commands (cmd/devstack, cmd/sandbox, cmd/chaos,
// cmd/bench, cmd/cluster).
//
// No product package imports anything here: the worker and the starter ship without it
// (TestShippedBinariesHoldNoHarness, TestProductImportsNoHarness). The harness drives the product only through what the product
// exports for every caller.
package harness
