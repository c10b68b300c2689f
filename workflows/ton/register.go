package ton

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers TON's workflows on r.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Watch, workflow.RegisterOptions{Name: WatchWorkflowType})
}
