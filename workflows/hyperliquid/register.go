package hyperliquid

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Module is the name of Hyperliquid's module: its operations run on the task queue
// workflows.TaskQueueOf(prefix, Module), served only by a worker configured for it.
const Module = "hyperliquid"

// Register registers Hyperliquid's workflows on r.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Withdraw, workflow.RegisterOptions{Name: WithdrawWorkflowType})
}
