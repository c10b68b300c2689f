package solana

import "go.temporal.io/sdk/worker"

// Module is the name of Solana's module: its operations run on the task queue
// workflows.TaskQueueOf(prefix, Module), served only by a worker configured for it.
const Module = "solana"

// Register registers Solana's workflows on r (the activities they call are registered with the
// worker's Activities).
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflow(StakeWorkflow)
	r.RegisterWorkflow(UnstakeWorkflow)
	r.RegisterWorkflow(WithdrawWorkflow)
}
