//go:build integration

package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// hostile sets the sandbox's hostile mode for the rest of the test.
func hostile(t *testing.T, m sandbox.HostileMode) {
	t.Helper()
	require.NoError(t, st.Sandbox.SetHostile(m))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetHostile(sandbox.HostileNone)) })
}

// refusedToSign waits for the operation and checks it failed because the signer refused the
// transaction, with a message naming the mismatch.
func refusedToSign(t *testing.T, id, mentions string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := st.Client.GetWorkflow(ctx, id, "").Get(ctx, nil)
	require.Error(t, err)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "got %v", err)
	require.Equal(t, activities.ErrVerificationFailed, appErr.Type(), "got %v", err)
	require.True(t, appErr.NonRetryable())
	require.Contains(t, err.Error(), "refused to sign")
	require.Contains(t, err.Error(), mentions)
}

// TestHostileServiceStakeRefused: for each way the service can lie about a stake, the operation
// fails naming the mismatch and nothing from the staker reaches the chain.
func TestHostileServiceStakeRefused(t *testing.T) {
	staker := st.Stakers[4]
	for mode, mentions := range map[sandbox.HostileMode]string{
		sandbox.HostileLamportsToStranger: "instruction",
		sandbox.HostileOtherVoteAccount:   "vote account",
		sandbox.HostileOtherFeePayer:      "fee payer",
		sandbox.HostileOtherAmount:        "lamports",
		sandbox.HostileExtraInstruction:   "instruction",
	} {
		t.Run(string(mode), func(t *testing.T) {
			hostile(t, mode)
			id := operationID(t, "stake")
			out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
			require.NoError(t, err, out)
			refusedToSign(t, id, mentions)
			require.Empty(t, landedBy(t, staker), "nothing signed by the staker may land")
		})
	}
}

// TestHostileServiceUnstakeRefused: a lying unstake transaction is refused and the stake stays
// delegated.
func TestHostileServiceUnstakeRefused(t *testing.T) {
	staker := st.Stakers[5]
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", operationID(t, "stake"), "--wait", "--json")
	require.NoError(t, err, out)
	staked := decodeResult(t, out)
	for mode, mentions := range map[sandbox.HostileMode]string{
		sandbox.HostileLamportsToStranger: "instruction",
		sandbox.HostileOtherFeePayer:      "fee payer",
		sandbox.HostileExtraInstruction:   "instruction",
		sandbox.HostileOtherStakeAccount:  "stake account",
	} {
		t.Run(string(mode), func(t *testing.T) {
			hostile(t, mode)
			id := operationID(t, "unstake")
			out, err := starterRun(t, "unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount, "--id", id)
			require.NoError(t, err, out)
			refusedToSign(t, id, mentions)
			require.Equal(t, []string{staked.Transactions[0].TxID}, landedBy(t, staker))
		})
	}
	acct, err := chain.StakeAccount(context.Background(), staked.StakeAccount)
	require.NoError(t, err)
	require.Equal(t, uint64(1<<64-1), acct.Stake.Delegation.DeactivationEpoch, "still delegated, never deactivated")
}

// TestHostileServiceWithdrawRefused: the deactivation is honest, the withdrawal lies (to a
// stranger, or less than the balance): it is refused after the wait, and the lamports stay in the
// stake account.
func TestHostileServiceWithdrawRefused(t *testing.T) {
	for i, tc := range []struct {
		mode     sandbox.HostileMode
		mentions string
	}{
		{sandbox.HostileOtherRecipient, "recipient"},
		{sandbox.HostileOtherAmount, "lamports"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			ctx := context.Background()
			staker := st.Stakers[6+i]
			staked := stakeActive(t, staker, "2")
			hostile(t, tc.mode)
			id := operationID(t, "unstake")
			out, err := starterRun(t, "unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount, "--id", id)
			require.NoError(t, err, out)
			waitStep(t, id, wfsolana.StepWaitingDeactivation)
			require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))
			refusedToSign(t, id, tc.mentions)
			require.Len(t, landedBy(t, staker), 2, "stake and deactivate only")
			acct, err := chain.StakeAccount(ctx, staked.StakeAccount)
			require.NoError(t, err)
			require.Equal(t, 2*sol, acct.Lamports, "the lamports stay in the stake account")
		})
	}
}
