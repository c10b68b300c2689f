package evm

// Module is the name of the EVM chains' module (Polygon's operations and EigenLayer's
// checkpoints, which share the EVM keys, networks and each address's nonce lease): they run on
// the task queue workflows.TaskQueueOf(prefix, Module), served only by a worker configured for it.
const Module = "evm"
