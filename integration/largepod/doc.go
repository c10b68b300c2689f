// Package largepod holds the end-to-end test of an EigenLayer checkpoint of a 10,000-validator
// pod (build tag integration), on a local stack of its own (Temporal dev server, the sandbox,
// geth --dev, the worker, payloads encrypted): its 125 batches take minutes of chain time, which
// run beside the integration package's tests rather than after them, and no test there can
// change the chain under it (a node-wide minimum tip, say).
//
// Run with `make test-integration` (it installs the pinned Temporal CLI and passes TEMPORAL_CLI).
package largepod
