// Command bench measures stakeflow's orchestration on the local stack in one run: orchestrated
// stakes against the stake workflow run with no-op activities (the ceiling), the same stakes with
// the payload codec on, and a bare client (no Temporal), at each concurrency
// and server mode asked for, then parks UnstakeWorkflows at the deactivation wait and reads the
// worker's and the server's memory. Results go to bench.json and bench.md in --out; the table is
// printed. See harness/bench.
//
// Every flag has an environment twin STAKEFLOW_<FLAG>; the Temporal CLI is also taken from
// TEMPORAL_CLI (scripts/tools.sh temporal installs it).
package main
