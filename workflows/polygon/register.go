package polygon

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

// Register registers Polygon's workflows, and the EVM nonce sequencer they lease nonces from, on r.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(DelegateWorkflow, workflow.RegisterOptions{Name: DelegateWorkflowType})
	r.RegisterWorkflowWithOptions(UnstakeWorkflow, workflow.RegisterOptions{Name: UnstakeWorkflowType})
	r.RegisterWorkflowWithOptions(WithdrawRewardsWorkflow, workflow.RegisterOptions{Name: WithdrawRewardsWorkflowType})
	r.RegisterWorkflowWithOptions(RestakeWorkflow, workflow.RegisterOptions{Name: RestakeWorkflowType})
	r.RegisterWorkflowWithOptions(wfevm.NonceSequencerWorkflow, workflow.RegisterOptions{Name: wfevm.SequencerWorkflowType})
}
