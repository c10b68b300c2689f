// Package integration holds stakeflow's end-to-end tests (build tag integration): operations
// started through the admin tool run on a real Temporal dev server, the worker, and the staking
// service sandbox on a real Solana runtime, and are checked against the runtime's own ledger.
//
// Run with `make test-integration` (it installs the pinned Temporal CLI and passes TEMPORAL_CLI).
package integration
