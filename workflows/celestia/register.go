package celestia

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers Celestia's workflows on r, under names apart from every other chain's.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Delegate, workflow.RegisterOptions{Name: DelegateWorkflowType})
	r.RegisterWorkflowWithOptions(Undelegate, workflow.RegisterOptions{Name: UndelegateWorkflowType})
	r.RegisterWorkflowWithOptions(Redelegate, workflow.RegisterOptions{Name: RedelegateWorkflowType})
	r.RegisterWorkflowWithOptions(WithdrawRewards, workflow.RegisterOptions{Name: WithdrawRewardsWorkflowType})
}
