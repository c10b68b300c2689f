package celestia

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/lease"
)

// Module is the name of Celestia's module: its operations run on the task queue
// workflows.TaskQueueOf(prefix, Module), served only by a worker configured for it.
const Module = "celestia"

// Register registers Celestia's workflows on r, under names apart from every other chain's, and
// the nonce lease of its delegators' account sequences, read through CelestiaReadNonces.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Delegate, workflow.RegisterOptions{Name: DelegateWorkflowType})
	r.RegisterWorkflowWithOptions(Undelegate, workflow.RegisterOptions{Name: UndelegateWorkflowType})
	r.RegisterWorkflowWithOptions(Redelegate, workflow.RegisterOptions{Name: RedelegateWorkflowType})
	r.RegisterWorkflowWithOptions(WithdrawRewards, workflow.RegisterOptions{Name: WithdrawRewardsWorkflowType})
	lease.Register(r, ca.CelestiaReadNonces)
}
