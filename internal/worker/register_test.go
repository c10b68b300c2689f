package worker

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/notify"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// TestEachChainsWorkflowRunsItsOwnCode registers every chain as the worker does and starts each
// chain's workflows by function and by type name: each runs its own chain's code (its input
// validation answers), never another chain's workflow of the same short name.
func TestEachChainsWorkflowRunsItsOwnCode(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	for _, tt := range []struct {
		name string
		wf   any
		in   any
		want string
	}{
		{"solana unstake by function", wfsolana.UnstakeWorkflow, wfsolana.UnstakeInput{Network: "testnet"}, "invalid staker: is required"},
		{"solana stake by function", wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "testnet"}, "invalid staker: is required"},
		{"polygon unstake by type", wfpolygon.UnstakeWorkflowType, wfpolygon.UnstakeInput{Network: "testnet"}, `invalid network: "testnet" is not one of mainnet, sepolia, dev`},
		{"APY job by type", wfjobs.APYJobWorkflowType, wfjobs.APYJobInput{Network: "testnet"}, `invalid network: "testnet" is not one of solana, polkadot`},
		{"rewards job by type", wfjobs.RewardsJobWorkflowType, wfjobs.RewardsJobInput{Network: "ethereum", Address: "0x12"}, `invalid address: "0x12"`},
		{"eigenlayer checkpoint by type", wfeigenlayer.CheckpointWorkflowType, wfeigenlayer.CheckpointInput{Network: "dev", Owner: "0x12"}, `invalid owner: "0x12"`},
		{"polygon delegate by type", wfpolygon.DelegateWorkflowType, wfpolygon.DelegateInput{Network: "testnet"}, `invalid network: "testnet" is not one of mainnet, sepolia, dev`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := suite.NewTestWorkflowEnvironment()
			Register(env, &notify.Notifier{}, &actsolana.Activities{}, &actevm.Activities{}, &actel.Activities{}, &actjobs.Activities{})
			env.ExecuteWorkflow(tt.wf, tt.in)
			require.True(t, env.IsWorkflowCompleted())
			require.ErrorContains(t, env.GetWorkflowError(), tt.want)
		})
	}
}
