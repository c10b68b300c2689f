package solana

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/workflows"
)

// operation is a Solana operation: the core's Operation and the intent it carries out.
type operation struct {
	*workflows.Operation
	intent actsolana.Intent
}

// newOperation starts the core's record of a Solana operation. Callers validate their input first.
func newOperation(ctx workflow.Context, intent actsolana.Intent, opts workflows.Options, requestedBy string) (*operation, error) {
	o, err := workflows.NewOperation(ctx, workflows.Setup{
		Chain: Chain, Network: intent.Network, Operation: string(intent.Operation), Staker: intent.Staker,
		Amount: amountString(intent.Lamports), Unit: Unit, Validator: intent.VoteAccount, Account: intent.StakeAccount,
		RequestedBy: requestedBy, Options: opts,
		Waits:        []string{StepWaitingDeactivation},
		Labels:       workflows.Labels{Validator: "vote account", Account: "stake account", Block: "slot"},
		FormatAmount: formatLamports,
	})
	if err != nil {
		return nil, err
	}
	return &operation{Operation: o, intent: intent}, nil
}

// formatLamports renders an amount of lamports as SOL.
func formatLamports(lamports string) string {
	a, err := amount.Parse(lamports)
	if err != nil {
		return lamports + " " + Unit
	}
	return a.Format(Decimals) + " SOL"
}

func (o *operation) setAmount(n uint64) {
	o.intent.Lamports = n
	o.SetAmount(amountString(n))
}

// transact runs one Solana transaction step through the core's transact loop.
func (o *operation) transact(ctx workflow.Context, intent actsolana.Intent) (workflows.TxRecord, error) {
	return o.Transact(ctx, &tx{o: o.Operation, op: o, intent: intent})
}

// result is the Result of a finished operation.
func (o *operation) result() Result {
	st := o.Status()
	var fees uint64
	for _, t := range st.Transactions {
		if a, err := amount.Parse(t.Fee); err == nil {
			f, _ := a.Uint64()
			fees += f
		}
	}
	return Result{
		Operation:       o.intent.Operation,
		Network:         o.intent.Network,
		Staker:          o.intent.Staker,
		Lamports:        o.intent.Lamports,
		StakeAccount:    st.Account,
		VoteAccount:     st.Validator,
		Transactions:    st.Transactions,
		FeeLamports:     fees,
		CancelRequested: st.CancelRequested,
	}
}

// checkPolicy applies the worker's policy to the intent, and waits for approvals when it asks.
func (o *operation) checkPolicy(ctx workflow.Context) error {
	return o.CheckPolicy(ctx, a.CheckPolicy, o.intent)
}

// checkValidator refuses a vote account the service does not report as active, or that our own
// RPC finds unknown, delinquent or too expensive.
func (o *operation) checkValidator(ctx workflow.Context, vote string) error {
	var res actsolana.ValidatorCheckResult
	return o.CheckValidator(ctx, a.CheckValidator,
		actsolana.ValidatorCheckInput{Network: o.intent.Network, VoteAccount: vote}, &res)
}

// readStakeState reads a stake account and the epoch clock. Reads retry until the chain answers:
// a slow read shows in the Web UI as a pending activity with its last failure. A read the RPC
// refuses for good (ChainRejected) stalls an operation that has already landed a transaction,
// visibly, and fails one that has not.
func (o *operation) readStakeState(ctx workflow.Context) (actsolana.StakeState, error) {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	stalls := func(err error) bool { return o.HalfDone() && workflows.IsErrorType(err, activities.ErrChainRejected) }
	return workflows.UntilUnstalled(ctx, o.Operation, stalls, func() (actsolana.StakeState, error) {
		var st actsolana.StakeState
		err := o.Get(ctx, workflow.ExecuteActivity(actx, a.ReadStakeState,
			actsolana.StakeStateInput{Network: o.intent.Network, StakeAccount: o.intent.StakeAccount}), &st)
		return st, err
	})
}

// waitInactive waits until the stake account is fully inactive, with durable timers sized from
// the slots left in the current epoch (capped at MaxEpochWait), re-reading the account after each.
func (o *operation) waitInactive(ctx workflow.Context) (actsolana.StakeState, error) {
	opts := o.Options()
	for {
		st, err := o.readStakeState(ctx)
		if err != nil {
			return st, err
		}
		switch st.State {
		case actsolana.StakeInactive, actsolana.StakeInitialized:
			o.Status().WaitingUntil = time.Time{}
			return st, nil
		case actsolana.StakeDeactivating:
		default:
			return st, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("stake account %s is %s, not deactivating: unstake it first", st.StakeAccount, st.State),
				activities.ErrStakeAccountState, nil)
		}
		left := st.SlotsInEpoch - st.SlotIndex
		if st.SlotIndex >= st.SlotsInEpoch {
			left = 1
		}
		slot := opts.SlotDuration
		if st.SlotDuration > 0 {
			slot = st.SlotDuration
		}
		wait := time.Duration(left+1) * slot
		limit := opts.MaxEpochWait
		if st.RecheckAfter > 0 {
			limit = min(limit, st.RecheckAfter)
		}
		wait = min(max(wait, time.Second), limit)
		o.Logger().Info("Waiting for deactivation", "stakeAccount", st.StakeAccount, "epoch", st.Epoch,
			"deactivationEpoch", st.DeactivationEpoch, "wait", wait)
		if err := o.Wait(ctx, StepWaitingDeactivation, wait); err != nil {
			return st, temporal.NewCanceledError("cancelled while waiting for deactivation; withdraw was not sent")
		}
	}
}

// preflight refuses, before anything is signed, a transaction of op the staker's balance cannot
// pay for (the amount, rent and fees of a stake; the fees of the others; the base fee of one
// signature), read from the worker's own RPC. An operation that has landed a transaction stalls
// instead, visibly, until the balance is topped up (or the RPC that refused the read is fixed):
// failing it would leave it part done.
func (o *operation) preflight(ctx workflow.Context, op actsolana.Operation) error {
	in := actsolana.PreflightInput{Network: o.intent.Network, Operation: op, Staker: o.intent.Staker}
	if op == actsolana.OpStake {
		in.Lamports = o.intent.Lamports
	}
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	stalls := func(err error) bool {
		return o.HalfDone() && (workflows.IsErrorType(err, activities.ErrInsufficientFunds) || workflows.IsErrorType(err, activities.ErrChainRejected))
	}
	_, err := workflows.UntilUnstalled(ctx, o.Operation, stalls, func() (actsolana.PreflightResult, error) {
		var res actsolana.PreflightResult
		err := o.Get(ctx, workflow.ExecuteActivity(actx, a.Preflight, in), &res)
		return res, err
	})
	return err
}
