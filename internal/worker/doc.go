// Package worker is the stakeflow daemon behind cmd/worker: it reads its configuration, loads the
// chain keys, connects to the staking service, the Solana RPC endpoints and Temporal, checks the
// namespace is set up, registers the workflows and activities, serves /healthz, /readyz and
// /metrics on the health address, and stops gracefully, letting running activities finish within
// the stop timeout.
//
// Every Solana RPC is trusted only once it is proven to serve the network it is configured for:
// its genesis hash must be the public cluster's (or the one --solana-genesis names, for a local
// cluster). Each RPC is checked at start, every minute, and again after a read failed the way a
// lost or replaced RPC fails; until proven, every read of that network is refused with a
// retryable error naming the network, the expected and the served hash, so no activity trusts
// it. An RPC serving another network does not stop the worker: it stays up and unready (see Run).
//
// /healthz answers while the process runs. /readyz answers 200 once the worker has started, at
// least one key is loaded, every network's RPC is proven, the staking service accepts the
// worker's token (as far as its client can tell) and Temporal answers a health check, 503 naming
// the first failed check otherwise (every unproven network, one line each, with its reason).
// The gauges stakeflow_rpc_verified{chain,network} and stakeflow_service_auth_ok follow the same
// conditions. /metrics serves, in the Prometheus text format, the Temporal SDK's metrics (the
// client's MetricsHandler) and stakeflow's own (see package internal/metrics), through one
// exporter per Run; every call to the staking service, whichever chain or data job makes it, is
// counted and timed by metrics.ServiceObserver, set on the service client where it is built.
//
// The data jobs (package workflows/jobs) run on the same task queue. Their store is opened at start
// from --store (default sqlite:<--data-dir>/stakeflow.db) through OpenStore, which a build with a
// store sets: a store that cannot be opened stops the worker with an error naming it (never its
// password). In a build without one the jobs are registered all the same and each call fails,
// non-retryably, saying so.
//
// The same store records the nonce of each Hyperliquid action, with its operation, before the
// signature (acthl.NonceBook), so that a nonce stays one operation's across restarts.
//
// Keys are read once at start-up and stay inside the signer; neither they nor the service token
// appear in logs, errors or anything sent to Temporal.
package worker
