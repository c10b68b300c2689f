package polygon

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

// TestReplacementThatCannotBeBuiltFollowsTheBuildSent: the first build is stuck, and its
// replacement cannot be built (the fee bump is over the caps). The build already sent may still
// land, so the operation does not fail: it follows that build, never asking for a replacement
// again, and completes with it.
func TestReplacementThatCannotBeBuiltFollowsTheBuildSent(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 5})
	e.delegation(actevm.Delegation{Balance: polWei(500), Allowance: polWei(100), ExpectedShares: polWei(100)})
	var confirms []actevm.ConfirmInput
	e.chain.confirm = []func(actevm.ConfirmInput) actevm.ConfirmResult{
		func(in actevm.ConfirmInput) actevm.ConfirmResult {
			confirms = append(confirms, in)
			return actevm.ConfirmResult{Outcome: activities.OutcomeReplace}
		},
		func(in actevm.ConfirmInput) actevm.ConfirmResult {
			confirms = append(confirms, in)
			return actevm.ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: in.Hashes[0], Block: 12, Fee: "21000"}
		},
	}
	e.chain.refuseBuild = func(in actevm.BuildInput) error {
		if in.Build > 1 {
			return temporal.NewNonRetryableApplicationError("the bump is over the policy's maxFeePerGas cap", actevm.ErrFeeCap, nil)
		}
		return nil
	}
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	r := e.result(t)
	require.Len(t, e.chain.builds, 2, "one build sent, one replacement refused")
	require.Len(t, r.Transactions, 1)
	require.Equal(t, "0xhash-delegate-5-1", r.Transactions[0].TxID, "the build sent is the one that landed")
	require.Len(t, confirms, 2)
	require.Zero(t, confirms[0].ReplaceAfter, "the first confirmation may ask for a replacement")
	require.Equal(t, wfevm.FollowStallAfter, confirms[1].ReplaceAfter, "the follow-up asks for no replacement: an answer past the bound only stalls the step visibly")
	require.Equal(t, confirms[0].Hashes, confirms[1].Hashes, "it follows exactly what was sent")
	require.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 6}}, e.releases)
}

// TestCancelAfterAStuckBuildFollowsItRatherThanStop: a cancel arrives while the only build is
// stuck. It may still land, so the operation follows it to its end and reports the cancel, rather
// than stopping with "nothing done".
func TestCancelAfterAStuckBuildFollowsItRatherThanStop(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 9})
	e.delegation(actevm.Delegation{Balance: polWei(500), Allowance: polWei(100), ExpectedShares: polWei(100)})
	e.chain.confirm = []func(actevm.ConfirmInput) actevm.ConfirmResult{
		func(actevm.ConfirmInput) actevm.ConfirmResult {
			e.CancelWorkflow()
			return actevm.ConfirmResult{Outcome: activities.OutcomeReplace}
		},
		func(in actevm.ConfirmInput) actevm.ConfirmResult {
			return actevm.ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: in.Hashes[0], Block: 3, Fee: "21000"}
		},
	}
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	r := e.result(t)
	require.Len(t, e.chain.builds, 1, "no replacement after the cancel")
	require.Len(t, r.Transactions, 1)
	require.True(t, r.CancelRequested)
}
