package hyperliquid

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/lease"
)

// Module is the name of Hyperliquid's module: its operations run on the task queue
// workflows.TaskQueueOf(prefix, Module), served only by a worker configured for it.
const Module = "hyperliquid"

// Register registers Hyperliquid's workflows on r, and the lease of its delegators (read through
// HLReadLease, which counts no nonce: the lease orders a delegator's operations).
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Withdraw, workflow.RegisterOptions{Name: WithdrawWorkflowType})
	lease.Register(r, ha.HLReadLease)
}
