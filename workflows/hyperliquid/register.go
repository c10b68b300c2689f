package hyperliquid

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/lease"
)

// Register registers Hyperliquid's workflows on r, and the lease of its delegators (read through
// HLReadLease, which counts no nonce: the lease orders a delegator's operations).
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Withdraw, workflow.RegisterOptions{Name: WithdrawWorkflowType})
	lease.Register(r, ha.HLReadLease)
}
