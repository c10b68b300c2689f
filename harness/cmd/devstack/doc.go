// Command devstack runs stakeflow's whole local stack with one command: a Temporal dev server
// with its Web UI, the staking-service sandbox on a real Solana runtime, funded staker keys and
// the worker, all on 127.0.0.1 (package harness/stack).
//
//	go run ./harness/cmd/devstack demo   start the stack, stake 2 SOL, unstake and withdraw it, stop
//	go run ./harness/cmd/devstack up     start the stack and keep it running until Ctrl-C
//	go run ./harness/cmd/devstack warp   move the running stack's chain forward by whole epochs
//
// demo runs each operation through the admin tool (internal/starter), so each step prints as it
// happens, followed by the operation's Web UI address. Between the stake and the unstake it moves
// the chain one epoch forward so the stake is active, and when the unstake reports the step
// waiting-deactivation it moves the chain one epoch again (sandbox_warpEpochs); the worker reads a
// deactivating stake account again at least every --epoch-recheck (default 1s), so the withdraw
// follows within that time. It exits non-zero when an operation fails, when the worker stops on
// its own, or after --timeout.
//
// up prints the addresses of every part, the funded staker addresses and ready-to-paste starter
// commands, and records the Solana RPC URL in the stack directory so that warp finds it.
//
// Both encrypt every payload the worker and the starter write to Temporal (package codec) with a
// keyset generated in the stack directory on the first run (payload-keyset.json, 0600) unless
// --payload-keyset names one, and run a codec server (internal/codecserver) beside the Web UI with
// a token made at each start (codec-token, 0600): the dev server's UI is started with
// --ui-codec-endpoint pointing at it, so it shows inputs, results and details decoded, and up prints
// the Temporal CLI command that reads a history through it (--codec-endpoint, --codec-auth). The
// starter commands they print or run take the keyset (STAKEFLOW_PAYLOAD_KEYSET, --payload-keyset).
// --no-encrypt writes payloads in clear and runs no codec server.
//
// demo and up keep Temporal's database in the stack directory (default .stack/), with the keys,
// the service token and the log file (devstack.log; the terminal shows only the operations).
// The Solana runtime starts empty on every run: operations the demo left open in an earlier run
// are terminated, others are listed with the command that cancels them. Both install the pinned
// Temporal CLI when it is missing (scripts/tools.sh; the runtime's npm packages install on first
// start), refuse to start when a port they need is taken, naming the port, and stop everything
// they started on Ctrl-C or SIGTERM (exit status 130 for an interrupted demo; 0 for up).
//
// Every flag has an environment twin: STAKEFLOW_ plus the flag name in upper snake case
// (--ui-port -> STAKEFLOW_UI_PORT).
package main
