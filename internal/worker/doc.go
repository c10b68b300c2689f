// Package worker is the stakeflow daemon behind cmd/worker: it reads its configuration, loads the
// chain keys, connects to the staking service, the Solana RPC endpoints and Temporal, checks the
// namespace is set up, registers the workflows and activities, serves /healthz and /readyz, and
// stops gracefully, letting running activities finish within the stop timeout.
//
// Keys are read once at start-up and stay inside the signer; neither they nor the service token
// appear in logs, errors or anything sent to Temporal.
package worker
