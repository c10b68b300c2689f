// Package prom exports Temporal metrics handlers in the Prometheus text format.
//
// New returns an Exporter whose Handler is a client.MetricsHandler for client.Options (the
// Temporal SDK's metrics, and stakeflow's own that the workflows and activities record through
// the SDK) and for package metrics (the staking service calls, the worker's health), backed by
// tally and its Prometheus reporter on a registry of the Exporter's own, and whose HTTPHandler
// serves that registry (with the Go runtime and process collectors) on /metrics. Each Exporter
// has its own registry, so several can live in one process (tests, a worker restarted
// in-process).
//
// Values recorded through Handler reach the registry at each flush, every Options.FlushInterval.
package prom
