package polygon

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/lease"
)

// Register registers Polygon's workflows on r, and the nonce lease of the EVM family (Polygon and
// EigenLayer, which share the EVM task queue) reading nonces through EVMReadNonces.
//
// Their functions are named apart from every other chain's (Delegate, not DelegateWorkflow): the
// SDK keeps a process-wide alias from a function's short name to the type it is registered under,
// and a worker and a client sharing a process would otherwise start one chain's UnstakeWorkflow
// for another's.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Delegate, workflow.RegisterOptions{Name: DelegateWorkflowType})
	r.RegisterWorkflowWithOptions(Unstake, workflow.RegisterOptions{Name: UnstakeWorkflowType})
	r.RegisterWorkflowWithOptions(WithdrawRewards, workflow.RegisterOptions{Name: WithdrawRewardsWorkflowType})
	r.RegisterWorkflowWithOptions(Restake, workflow.RegisterOptions{Name: RestakeWorkflowType})
	lease.Register(r, ea.EVMReadNonces)
}
