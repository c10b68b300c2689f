package ton

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Module is the name of TON's module: its operations run on the task queue
// workflows.TaskQueueOf(prefix, Module), served only by a worker configured for it.
const Module = "ton"

// Register registers TON's workflows on r.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Watch, workflow.RegisterOptions{Name: WatchWorkflowType})
}
