package worker

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/modules/all"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

// TestEachChainsWorkflowRunsItsOwnCode registers each module's workflows as the worker does on
// that module's queue and starts them by function and by type name: each runs its own chain's
// code (its input validation answers), never another chain's workflow of the same short name.
func TestEachChainsWorkflowRunsItsOwnCode(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	for _, tt := range []struct {
		name   string
		module string
		wf     any
		in     any
		want   string
	}{
		{"solana unstake by function", "solana", wfsolana.UnstakeWorkflow, wfsolana.UnstakeInput{Network: "testnet"}, "invalid staker: is required"},
		{"solana stake by function", "solana", wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "testnet"}, "invalid staker: is required"},
		{"polygon unstake by type", "evm", wfpolygon.UnstakeWorkflowType, wfpolygon.UnstakeInput{Network: "testnet"}, `invalid network: "testnet" is not one of mainnet, sepolia, dev`},
		{"APY job by type", "jobs", wfjobs.APYJobWorkflowType, wfjobs.APYJobInput{Network: "testnet"}, `invalid network: "testnet" is not one of solana, polkadot`},
		{"rewards job by type", "jobs", wfjobs.RewardsJobWorkflowType, wfjobs.RewardsJobInput{Network: "ethereum", Address: "0x12"}, `invalid address: "0x12"`},
		{"celestia delegate by type", "celestia", wfcelestia.DelegateWorkflowType, wfcelestia.Input{Network: "celestia"}, `unknown Celestia network "celestia"`},
		{"Hyperliquid withdraw by type", "hyperliquid", wfhyperliquid.WithdrawWorkflowType, wfhyperliquid.WithdrawInput{Network: "testnet"}, "invalid delegator: is required"},
		{"TON watch by type", "ton", wfton.WatchWorkflowType, wfton.WatchInput{Network: "testnet"}, "invalid hash: is required"},
		{"eigenlayer checkpoint by type", "evm", wfeigenlayer.CheckpointWorkflowType, wfeigenlayer.CheckpointInput{Network: "dev", Owner: "0x12"}, `invalid owner: "0x12"`},
		{"polygon delegate by type", "evm", wfpolygon.DelegateWorkflowType, wfpolygon.DelegateInput{Network: "testnet"}, `invalid network: "testnet" is not one of mainnet, sepolia, dev`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := suite.NewTestWorkflowEnvironment()
			RegisterCommon(env, &notify.Notifier{})
			moduleNamed(t, tt.module).Workflows(env)
			env.ExecuteWorkflow(tt.wf, tt.in)
			require.True(t, env.IsWorkflowCompleted())
			require.ErrorContains(t, env.GetWorkflowError(), tt.want)
		})
	}
}

// moduleNamed is the module of that name among every module.
func moduleNamed(t *testing.T, name string) module.Module {
	t.Helper()
	for _, m := range all.Modules() {
		if m.Name() == name {
			return m
		}
	}
	t.Fatalf("no module %q", name)
	return nil
}
