package celestia

import (
	"fmt"
	"math/big"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

// operation is a Celestia operation: the core's Operation and its input.
type operation struct {
	*workflows.Operation
	op         string
	in         Input
	unbondedAt time.Time
}

func start(ctx workflow.Context, op string, in Input) (*operation, error) {
	if err := in.ValidateFor(op); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	o, err := workflows.NewOperation(ctx, workflows.Setup{
		Chain: Chain, Network: in.Network, Operation: op, Staker: in.Delegator, Amount: in.Amount, Unit: Unit,
		Validator: in.Validator, RequestedBy: in.RequestedBy, Options: in.Options,
		Waits:        []string{lease.StepWaitingNonce, StepWaitingUnbonding},
		Labels:       workflows.Labels{Validator: "validator", Account: "destination", Block: "height"},
		FormatAmount: FormatTIA,
	})
	if err != nil {
		return nil, err
	}
	if in.DstValidator != "" {
		o.SetAccount(in.DstValidator)
	}
	return &operation{Operation: o, op: op, in: in}, nil
}

func (o *operation) result() Result {
	st := o.Status()
	r := Result{Operation: o.op, Network: o.in.Network, Delegator: o.in.Delegator, Validator: o.in.Validator,
		DstValidator: o.in.DstValidator, Amount: st.Amount, Transactions: st.Transactions,
		Fee: o.TotalFee().String(), CancelRequested: st.CancelRequested}
	if !o.unbondedAt.IsZero() {
		r.UnbondedAt = o.unbondedAt.UTC().Format(time.RFC3339)
	}
	return r
}

func refuse(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), activities.ErrInvalidInput, nil)
}

// utia reads a validated amount or a chain read (a balance, rewards: zero is fine there); text
// that is not an amount reads as zero.
func utia(s string) *big.Int {
	a, _ := amount.Parse(s)
	return a.Big()
}

// run starts op, runs body and records the end.
func run(ctx workflow.Context, op string, in Input, body func(*operation) error) (Result, error) {
	o, err := start(ctx, op, in)
	if err != nil {
		return Result{}, err
	}
	if err := body(o); err != nil {
		return Result{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return o.result(), nil
}

func (o *operation) intent() actcelestia.Intent {
	in := o.in.Intent(o.op)
	in.Amount = o.Status().Amount
	if o.op == OpWithdrawRewards {
		in.Amount = ""
	}
	return in
}

func (o *operation) checkPolicy(ctx workflow.Context) error {
	return o.CheckPolicy(ctx, ca.CelestiaCheckPolicy, actcelestia.PolicyInput{Intent: o.in.Intent(o.op)})
}

// position reads the delegator's balance, delegation and rewards with validator.
func (o *operation) position(ctx workflow.Context, validator string) (actcelestia.Position, error) {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	stalls := func(err error) bool { return o.HalfDone() && workflows.MayHeal(err) }
	return workflows.UntilUnstalled(ctx, o.Operation, stalls, func() (actcelestia.Position, error) {
		var p actcelestia.Position
		err := o.Get(ctx, workflow.ExecuteActivity(actx, ca.CelestiaReadPosition, actcelestia.PositionInput{
			Network: o.in.Network, Delegator: o.in.Delegator, Validator: validator}), &p)
		return p, err
	})
}

// transact runs the operation's transaction holding the delegator's sequence lease, and gives it
// back whatever happens.
func (o *operation) transact(ctx workflow.Context) (workflows.TxRecord, error) {
	held, err := lease.Acquire(ctx, o.Operation, lease.Celestia, o.in.Network, o.in.Delegator, ca.CelestiaRequestLease)
	if err != nil {
		return workflows.TxRecord{}, err
	}
	rec, err := transact(ctx, o.Operation, o.intent(), held)
	if rerr := held.Release(ctx); rerr != nil {
		o.Logger().Warn("Sequence lease not released", "error", rerr)
	}
	return rec, err
}

// Delegate (workflow type CelestiaDelegateWorkflow) delegates Amount utia to a validator
// (MsgDelegate): policy and approval, a balance check on the chain, then the transaction,
// confirmed by hash.
func Delegate(ctx workflow.Context, in Input) (Result, error) {
	return run(ctx, OpDelegate, in, func(o *operation) error {
		if err := o.checkPolicy(ctx); err != nil {
			return err
		}
		p, err := o.position(ctx, in.Validator)
		if err != nil {
			return err
		}
		if utia(p.Balance).Cmp(utia(in.Amount)) < 0 {
			return refuse("%s holds %s, less than the %s asked; nothing was signed", in.Delegator, FormatTIA(p.Balance), FormatTIA(in.Amount))
		}
		_, err = o.transact(ctx)
		return err
	})
}

// Redelegate (workflow type CelestiaRedelegateWorkflow) moves Amount utia of the delegation from
// Validator to DstValidator (MsgBeginRedelegate).
func Redelegate(ctx workflow.Context, in Input) (Result, error) {
	return run(ctx, OpRedelegate, in, func(o *operation) error {
		p, err := o.position(ctx, in.Validator)
		if err != nil {
			return err
		}
		if utia(p.Delegated).Cmp(utia(in.Amount)) < 0 {
			return refuse("%s has %s delegated to %s, less than the %s asked; nothing was signed", in.Delegator, FormatTIA(p.Delegated), in.Validator, FormatTIA(in.Amount))
		}
		if err := o.checkPolicy(ctx); err != nil {
			return err
		}
		_, err = o.transact(ctx)
		return err
	})
}

// WithdrawRewards (workflow type CelestiaWithdrawRewardsWorkflow) withdraws the delegator's
// rewards from a validator (MsgWithdrawDelegatorReward).
func WithdrawRewards(ctx workflow.Context, in Input) (Result, error) {
	return run(ctx, OpWithdrawRewards, in, func(o *operation) error {
		p, err := o.position(ctx, in.Validator)
		if err != nil {
			return err
		}
		if utia(p.Rewards).Sign() == 0 {
			return refuse("%s has no rewards with %s; nothing was signed", in.Delegator, in.Validator)
		}
		o.SetAmount(p.Rewards)
		if err := o.checkPolicy(ctx); err != nil {
			return err
		}
		_, err = o.transact(ctx)
		return err
	})
}

// Undelegate (workflow type CelestiaUndelegateWorkflow) undelegates Amount utia from a validator
// (MsgUndelegate), then waits, with durable timers sized from the unbonding entry's completion
// time and the chain's time (at most MaxEpochWait each, re-read after each), until the entry has
// matured and the tokens are back.
func Undelegate(ctx workflow.Context, in Input) (Result, error) {
	return run(ctx, OpUndelegate, in, func(o *operation) error {
		p, err := o.position(ctx, in.Validator)
		if err != nil {
			return err
		}
		if utia(p.Delegated).Cmp(utia(in.Amount)) < 0 {
			return refuse("%s has %s delegated to %s, less than the %s asked; nothing was signed", in.Delegator, FormatTIA(p.Delegated), in.Validator, FormatTIA(in.Amount))
		}
		if err := o.checkPolicy(ctx); err != nil {
			return err
		}
		rec, err := o.transact(ctx)
		if err != nil {
			return err
		}
		return o.waitUnbonded(ctx, rec.Block)
	})
}

func (o *operation) waitUnbonded(ctx workflow.Context, height uint64) error {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	stalls := func(err error) bool { return workflows.MayHeal(err) }
	seen := false
	for {
		u, err := workflows.UntilUnstalled(ctx, o.Operation, stalls, func() (actcelestia.Unbonding, error) {
			var u actcelestia.Unbonding
			err := o.Get(ctx, workflow.ExecuteActivity(actx, ca.CelestiaReadUnbonding, actcelestia.UnbondingInput{
				Network: o.in.Network, Delegator: o.in.Delegator, Validator: o.in.Validator, Height: height}), &u)
			return u, err
		})
		if err != nil {
			return err
		}
		if !u.Pending {
			if !seen {
				o.Logger().Warn("No unbonding entry found for the undelegation; taking it as matured", "height", height)
			}
			o.unbondedAt = u.ChainTime
			o.Status().WaitingUntil = time.Time{}
			o.Logger().Info("Unbonding matured; tokens back", "balance", u.Balance)
			return nil
		}
		seen = true
		wait := min(max(u.CompletionTime.Sub(u.ChainTime), time.Second), o.Options().MaxEpochWait)
		o.Logger().Info("Waiting for the unbonding period", "completionTime", u.CompletionTime, "unbondingTime", u.UnbondingTime, "wait", wait)
		if err := o.Wait(ctx, StepWaitingUnbonding, wait); err != nil {
			return temporal.NewCanceledError(fmt.Sprintf("cancelled while waiting for the unbonding period; the %s undelegated come back at %s whatever happens", FormatTIA(o.in.Amount), u.CompletionTime.UTC().Format(time.RFC3339)))
		}
	}
}
