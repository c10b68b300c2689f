// Command chaos runs stakeflow's operations against the local stack under faults (service errors,
// lost broadcast responses, a broadcast dropped by the service and rebuilt after its proven
// expiry, a refused re-send, worker kills, a Temporal restart, epoch warps) and checks on the
// chain that each happened exactly once. It prints a table of the faults injected, the outcomes
// and the fault classes and recovery paths the run must exercise, and exits non-zero on any
// violation or any such path that did not happen. See harness/chaos.
//
//	go run ./harness/cmd/chaos --ops 200 --worker-kills 4 --seed 7
//
// Every flag has an environment twin STAKEFLOW_<FLAG>. The Temporal CLI comes from
// --temporal-cli, else $TEMPORAL_CLI, else scripts/tools.sh temporal.
package main
