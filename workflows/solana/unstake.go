package solana

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
)

// UnstakeWorkflow deactivates a stake account, waits with durable timers until it is fully
// inactive (days on mainnet), then withdraws its lamports to the staker.
//
// It starts by reading the stake account: an account already deactivating skips straight to the
// wait, so starting an unstake again for the same account never deactivates twice.
func UnstakeWorkflow(ctx workflow.Context, in UnstakeInput) (Result, error) {
	return runUnstake(ctx, in, actsolana.OpUnstake)
}

// WithdrawWorkflow withdraws an inactive stake account's lamports to the staker. A stake account
// still deactivating is waited for; one still delegated is refused.
func WithdrawWorkflow(ctx workflow.Context, in WithdrawInput) (Result, error) {
	return runUnstake(ctx, in, actsolana.OpWithdraw)
}

func runUnstake(ctx workflow.Context, in UnstakeInput, op actsolana.Operation) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	intent := actsolana.Intent{
		Operation: op, Chain: Chain, Network: in.Network,
		Staker: in.Staker, Lamports: in.Lamports, StakeAccount: in.StakeAccount,
	}
	o, err := newOperation(ctx, intent, in.Options, in.RequestedBy)
	if err != nil {
		return Result{}, err
	}
	if err := o.runUnstake(ctx, in.Lamports); err != nil {
		return Result{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return o.result(), nil
}

func (o *operation) runUnstake(ctx workflow.Context, asked uint64) error {
	st, err := o.readStakeState(ctx)
	if err != nil {
		return err
	}
	if err := o.checkOwnership(st, asked); err != nil {
		return err
	}
	o.setAmount(st.Lamports)
	o.SetValidator(st.Voter)

	unstake := o.intent.Operation == actsolana.OpUnstake
	if !unstake && !st.Deactivating && (st.State == actsolana.StakeActive || st.State == actsolana.StakeActivating) {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("stake account %s is %s: unstake it before withdrawing", st.StakeAccount, st.State),
			activities.ErrStakeAccountState, nil)
	}
	if err := o.preflight(ctx, o.intent.Operation); err != nil {
		return err
	}
	if err := o.checkPolicy(ctx); err != nil {
		return err
	}
	if unstake {
		if st.Deactivating {
			o.Logger().Info("Stake account already deactivating; not sending another deactivation",
				"stakeAccount", st.StakeAccount, "deactivationEpoch", st.DeactivationEpoch)
		} else if st.State == actsolana.StakeActive || st.State == actsolana.StakeActivating {
			deactivate := o.intent
			deactivate.Operation = actsolana.OpUnstake
			if _, err := o.transact(ctx, deactivate); err != nil {
				return err
			}
		}
	}

	st, err = o.waitInactive(ctx)
	if err != nil {
		return err
	}
	o.setAmount(st.Lamports)
	withdraw := o.intent
	withdraw.Operation = actsolana.OpWithdraw
	_, err = o.transact(ctx, withdraw)
	return err
}

// checkOwnership refuses a stake account the staker does not control, one whose lockup is in force
// (its lamports could not be withdrawn), or an amount that is not its balance.
func (o *operation) checkOwnership(st actsolana.StakeState, asked uint64) error {
	if st.Withdrawer != o.intent.Staker || st.Staker != o.intent.Staker {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("stake account %s is not controlled by %s (stake authority %s, withdraw authority %s)",
				st.StakeAccount, o.intent.Staker, st.Staker, st.Withdrawer),
			activities.ErrStakeAccountState, nil)
	}
	if st.Lockup != nil && st.Lockup.InForce {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("stake account %s is %s: its lamports cannot be withdrawn before then; nothing was signed",
				st.StakeAccount, st.Lockup), activities.ErrStakeAccountState, nil)
	}
	if asked != 0 && asked != st.Lamports {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("amount %d lamports does not match stake account %s balance %d lamports: partial unstake is not offered",
				asked, st.StakeAccount, st.Lamports),
			activities.ErrInvalidInput, nil)
	}
	return nil
}
