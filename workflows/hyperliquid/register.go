package hyperliquid

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers Hyperliquid's workflows on r.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Withdraw, workflow.RegisterOptions{Name: WithdrawWorkflowType})
}
