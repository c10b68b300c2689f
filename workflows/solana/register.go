package solana

import "go.temporal.io/sdk/worker"

// Register registers Solana's workflows on r (the activities they call are registered with the
// worker's Activities).
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflow(StakeWorkflow)
	r.RegisterWorkflow(UnstakeWorkflow)
	r.RegisterWorkflow(WithdrawWorkflow)
}
