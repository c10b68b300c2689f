// Package worker is the stakeflow daemon behind cmd/worker: it reads its configuration, loads the
// chain keys, connects to the staking service, the Solana RPC endpoints and Temporal, checks the
// namespace is set up, registers the workflows and activities, serves /healthz, /readyz and
// /metrics on the health address, and stops gracefully, letting running activities finish within
// the stop timeout.
//
// /healthz answers while the process runs. /readyz answers 200 once the worker has started, at
// least one key is loaded and Temporal answers a health check, 503 naming the first failed check
// otherwise. /metrics serves, in the Prometheus text format, the Temporal SDK's metrics (the
// client's MetricsHandler) and stakeflow's own (see package internal/metrics), through one
// exporter per Run; calls to the staking service are counted and timed by metrics.Service.
//
// Keys are read once at start-up and stay inside the signer; neither they nor the service token
// appear in logs, errors or anything sent to Temporal.
package worker
