//go:build integration

package integration

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// TestStakeThroughStarter stakes 2 SOL through the admin tool and checks the chain: exactly one
// transaction from the staker, one stake account with exactly the lamports asked, delegated to a
// healthy validator, staker and withdrawer the staker. A second start with the same operation ID
// is refused after the first finished.
func TestStakeThroughStarter(t *testing.T) {
	staker := st.Stakers[0]
	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id, "--wait", "--json")
	require.NoError(t, err, out)
	res := decodeResult(t, out)

	require.Len(t, res.Transactions, 1)
	tx := res.Transactions[0]
	require.Equal(t, string(actsolana.OpStake), tx.Kind)
	require.Equal(t, []string{tx.TxID}, landedBy(t, staker), "exactly one transaction from the staker, the one reported")

	status, err := chain.SignatureStatus(context.Background(), tx.TxID)
	require.NoError(t, err)
	require.True(t, status.Finalized())

	acct, err := chain.StakeAccount(context.Background(), res.StakeAccount)
	require.NoError(t, err)
	require.Equal(t, 2*sol, acct.Lamports)
	require.Equal(t, staker.String(), acct.Meta.Staker)
	require.Equal(t, staker.String(), acct.Meta.Withdrawer)
	require.NotNil(t, acct.Stake)
	require.Equal(t, res.VoteAccount, acct.Stake.Delegation.Voter)
	require.Contains(t, voteAccounts(), res.VoteAccount)

	_, err = starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
	require.ErrorIs(t, err, workflows.ErrAlreadyStarted)
	require.Equal(t, []string{tx.TxID}, landedBy(t, staker), "the refused start sent nothing")
}

func voteAccounts() []string {
	var out []string
	for _, v := range st.Sandbox.Runtime().VoteAccounts() {
		out = append(out, v.String())
	}
	return out
}

// TestUnstakeEpochWarpWithdraw stakes, then unstakes through the admin tool: the workflow
// deactivates, waits for the epoch to pass (the test warps it), then withdraws. The staker gets
// back exactly the stake minus the two transaction fees, and the stake account is closed.
func TestUnstakeEpochWarpWithdraw(t *testing.T) {
	ctx := context.Background()
	staker := st.Stakers[1]
	staked := stakeActive(t, staker, "3")

	before, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	id := operationID(t, "unstake")
	out, err := starterRun(t, "unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount, "--id", id, "--json")
	require.NoError(t, err, out)
	waitStep(t, id, wfsolana.StepWaitingDeactivation)
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))

	var res wfsolana.Result
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, st.Client.GetWorkflow(wctx, id, "").Get(wctx, &res))

	require.Len(t, res.Transactions, 2)
	require.Equal(t, string(actsolana.OpUnstake), res.Transactions[0].Kind)
	require.Equal(t, string(actsolana.OpWithdraw), res.Transactions[1].Kind)
	require.Equal(t, 3*sol, res.Lamports)
	require.Equal(t,
		[]string{staked.Transactions[0].TxID, res.Transactions[0].TxID, res.Transactions[1].TxID},
		landedBy(t, staker), "stake, deactivate and withdraw, each exactly once")

	after, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	require.Equal(t, before+3*sol-2*fee, after)
	_, err = chain.StakeAccount(ctx, staked.StakeAccount)
	require.True(t, errors.Is(err, solchain.ErrAccountNotFound), "stake account closed by the full withdrawal, got %v", err)
}

// TestApprovalGate stakes above the approval threshold: nothing is built or sent until an
// approver approves through the admin tool; the identity that started the operation cannot approve
// it, and the approver is recorded with the time.
func TestApprovalGate(t *testing.T) {
	staker := st.Stakers[2]
	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--lamports", "60000000000",
		"--id", id, "--requested-by", "alice")
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepAwaitingApproval)
	require.Empty(t, landedBy(t, staker), "nothing is sent before approval")
	// What a deploy finds most often in flight: an operation waiting for its approval.
	snapshotAs(t, id, "StakeWorkflow-awaiting-approval")

	_, err = starterRun(t, "approve", "--id", id)
	require.ErrorContains(t, err, "give --key FILE or --ssh-agent (signed decisions), or --approver NAME on a worker without approvers")
	// This worker has no approvers: a typed name decides, and the status says so.
	require.Equal(t, workflows.ModeNamed, queryStatus(t, id).Approval.Mode)
	out, err = starterRun(t, "status", "--id", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "named in free text: not separation of duties")
	_, err = starterRun(t, "approve", "--id", id, "--approver", "alice")
	require.ErrorContains(t, err, "alice started this operation")
	require.Equal(t, workflows.StepAwaitingApproval, queryStatus(t, id).Step, "the requester's approval does not count")
	out, err = starterRun(t, "approve", "--id", id, "--approver", "bob", "--reason", "treasury plan")
	require.NoError(t, err, out)
	require.Contains(t, out, "approved (latest decision by bob)")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res wfsolana.Result
	require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	require.Len(t, landedBy(t, staker), 1)

	status := queryStatus(t, id)
	require.Equal(t, workflows.StepDone, status.Step)
	require.Equal(t, "alice", status.RequestedBy)
	require.Len(t, status.Approval.Decisions, 1)
	require.Equal(t, "bob", status.Approval.Decisions[0].Approver)
	require.Equal(t, "treasury plan", status.Approval.Decisions[0].Reason)
	require.False(t, status.Approval.Decisions[0].At.IsZero())
	require.Equal(t, strconv.FormatUint(res.FeeLamports, 10), res.Transactions[0].Fee)
	require.Equal(t, fee, res.FeeLamports, "the fee the chain charged: one signature, no priority fee")
}

// TestCancelDuringDeactivationThenWithdraw cancels an unstake while it waits for deactivation
// (the deactivation stays, no withdraw is sent), then withdraws the now inactive account with a
// WithdrawWorkflow of its own.
func TestCancelDuringDeactivationThenWithdraw(t *testing.T) {
	ctx := context.Background()
	staker := st.Stakers[3]
	staked := stakeActive(t, staker, "2")

	id := operationID(t, "unstake")
	out, err := starterRun(t, "unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount, "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, wfsolana.StepWaitingDeactivation)
	snapshotAs(t, id, "UnstakeWorkflow-waiting-deactivation")
	recordAs(id, "UnstakeWorkflow-cancelled-waiting-deactivation")
	out, err = starterRun(t, "cancel", "--id", id)
	require.NoError(t, err, out)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = st.Client.GetWorkflow(wctx, id, "").Get(wctx, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "canceled")
	require.Len(t, landedBy(t, staker), 2, "stake and deactivate only: no withdraw after the cancel")

	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))
	before, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	wid := operationID(t, "withdraw")
	out, err = starterRun(t, "withdraw", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount,
		"--lamports", "2000000000", "--id", wid, "--wait", "--json")
	require.NoError(t, err, out)
	res := decodeResult(t, out)
	require.Len(t, res.Transactions, 1)
	require.Equal(t, string(actsolana.OpWithdraw), res.Transactions[0].Kind)
	after, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	require.Equal(t, before+2*sol-fee, after)
	require.Len(t, landedBy(t, staker), 3)
}

// TestCancelWhileAwaitingApproval cancels an operation waiting for its approval: it ends cancelled
// with nothing built, signed or sent.
func TestCancelWhileAwaitingApproval(t *testing.T) {
	staker := st.Stakers[17]
	id := operationID(t, "stake")
	recordAs(id, "StakeWorkflow-cancelled-awaiting-approval")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--lamports", "60000000000", "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepAwaitingApproval)
	out, err = starterRun(t, "cancel", "--id", id)
	require.NoError(t, err, out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = st.Client.GetWorkflow(ctx, id, "").Get(ctx, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "canceled")
	status := queryStatus(t, id)
	require.Equal(t, workflows.StepCancelled, status.Step)
	require.Empty(t, status.Attempts, "nothing was built")
	require.Empty(t, landedBy(t, staker))
}
