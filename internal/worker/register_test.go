package worker

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/notify"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	actton "github.com/stakeflow/stakeflow/activities/ton"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
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
		{"celestia delegate by type", wfcelestia.DelegateWorkflowType, wfcelestia.Input{Network: "celestia"}, `unknown Celestia network "celestia"`},
		{"Hyperliquid withdraw by type", wfhyperliquid.WithdrawWorkflowType, wfhyperliquid.WithdrawInput{Network: "testnet"}, "invalid delegator: is required"},
		{"TON watch by type", wfton.WatchWorkflowType, wfton.WatchInput{Network: "testnet"}, "invalid hash: is required"},
		{"eigenlayer checkpoint by type", wfeigenlayer.CheckpointWorkflowType, wfeigenlayer.CheckpointInput{Network: "dev", Owner: "0x12"}, `invalid owner: "0x12"`},
		{"polygon delegate by type", wfpolygon.DelegateWorkflowType, wfpolygon.DelegateInput{Network: "testnet"}, `invalid network: "testnet" is not one of mainnet, sepolia, dev`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := suite.NewTestWorkflowEnvironment()
			Register(env, &notify.Notifier{}, &actjobs.Activities{}, ChainActivities{Solana: &actsolana.Activities{}, EVM: &actevm.Activities{},
				EigenLayer: &actel.Activities{}, Celestia: &actcelestia.Activities{}, TON: &actton.Activities{}, Hyperliquid: &acthl.Activities{}})
			env.ExecuteWorkflow(tt.wf, tt.in)
			require.True(t, env.IsWorkflowCompleted())
			require.ErrorContains(t, env.GetWorkflowError(), tt.want)
		})
	}
}
