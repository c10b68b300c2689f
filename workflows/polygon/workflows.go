package polygon

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

// ea is the nil Activities pointer the workflows name EVM activities through.
var ea *actevm.Activities

// operation is a Polygon operation: the core's Operation and what it acts on.
type operation struct {
	*workflows.Operation
	network string
	chainID uint64
	staker  common.Address
	share   common.Address
	// amount is what the operation moves, in wei (nil while unknown).
	amount *big.Int
	unbond uint64
}

func newOperation(ctx workflow.Context, op, network, staker, share, amount, requestedBy string, opts workflows.Options) (*operation, error) {
	o, err := workflows.NewOperation(ctx, workflows.Setup{
		Chain: Chain, Network: network, Operation: op, Staker: common.HexToAddress(staker).Hex(),
		Amount: amount, Unit: Unit, Validator: common.HexToAddress(share).Hex(),
		RequestedBy: requestedBy, Options: opts,
		Waits:        []string{lease.StepWaitingNonce, StepWaitingWithdrawal},
		Labels:       workflows.Labels{Validator: "validator share", Account: "unbond", Block: "block"},
		FormatAmount: FormatPOL,
	})
	if err != nil {
		return nil, err
	}
	chainID, _ := networks.EVM.ID(network)
	p := &operation{Operation: o, network: network, chainID: chainID,
		staker: common.HexToAddress(staker), share: common.HexToAddress(share)}
	if amount != "" {
		p.amount = wei(amount)
	}
	return p, nil
}

func (o *operation) intent(op actevm.Operation) actevm.Intent {
	return actevm.Intent{Operation: op, ChainID: o.chainID, Staker: o.staker, ValidatorShare: o.share}
}

func (o *operation) result() Result {
	st := o.Status()
	return Result{
		Operation: st.Operation, Network: o.network, Staker: st.Staker, ValidatorShare: st.Validator,
		Amount: st.Amount, UnbondNonce: o.unbond, Transactions: st.Transactions,
		Fee: o.TotalFee().String(), CancelRequested: st.CancelRequested,
	}
}

func (o *operation) checkPolicy(ctx workflow.Context) error {
	return o.CheckPolicy(ctx, ea.EVMCheckPolicy, actevm.PolicyInput{
		Network: o.network, Operation: o.Status().Operation, Staker: o.staker.Hex(),
		Amount: o.Status().Amount, ValidatorShare: o.share.Hex(),
	})
}

// readDelegation reads the staker's position with the validator, and what amount is worth in
// shares. A read that fails for good after a transaction landed stalls the operation visibly.
func (o *operation) readDelegation(ctx workflow.Context) (actevm.Delegation, error) {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	stalls := func(err error) bool { return o.HalfDone() && workflows.MayHeal(err) }
	return workflows.UntilUnstalled(ctx, o.Operation, stalls, func() (actevm.Delegation, error) {
		var d actevm.Delegation
		err := o.Get(ctx, workflow.ExecuteActivity(actx, ea.EVMReadDelegation, actevm.DelegationInput{
			Network: o.network, Staker: o.staker.Hex(), ValidatorShare: o.share.Hex(), Amount: o.Status().Amount,
		}), &d)
		return d, err
	})
}

// withLease runs steps holding the staker's nonce lease, and gives it back whatever happens.
func (o *operation) withLease(ctx workflow.Context, steps func(*lease.Lease) error) error {
	held, err := lease.Acquire(ctx, o.Operation, lease.EVM, o.network, o.staker.Hex(), ea.EVMRequestLease)
	if err != nil {
		return err
	}
	err = steps(held)
	if rerr := held.Release(ctx); rerr != nil {
		o.Logger().Warn("Nonce lease not released", "error", rerr)
	}
	return err
}

// wei reads a validated amount or a chain read (a balance, an allowance: zero is fine there);
// text that is not an amount reads as zero.
func wei(s string) *big.Int {
	a, _ := amount.Parse(s)
	return a.Big()
}

func refuse(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), activities.ErrInvalidInput, nil)
}

// Delegate (workflow type PolygonDelegateWorkflow) delegates POL to a validator: policy and approval, an approve of exactly the
// amount when the StakeManager's allowance is short, then buyVoucherPOL, each confirmed final.
func Delegate(ctx workflow.Context, in DelegateInput) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	o, err := newOperation(ctx, OpDelegate, in.Network, in.Staker, in.ValidatorShare, in.Amount, in.RequestedBy, in.Options)
	if err != nil {
		return Result{}, err
	}
	if err := o.runDelegate(ctx); err != nil {
		return Result{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return o.result(), nil
}

func (o *operation) runDelegate(ctx workflow.Context) error {
	if err := o.checkPolicy(ctx); err != nil {
		return err
	}
	return o.withLease(ctx, func(held *lease.Lease) error {
		d, err := o.readDelegation(ctx)
		if err != nil {
			return err
		}
		if wei(d.Balance).Cmp(o.amount) < 0 {
			return refuse("%s holds %s, less than the %s asked; nothing was signed", o.staker.Hex(), FormatPOL(d.Balance), FormatPOL(o.amount.String()))
		}
		if wei(d.Allowance).Cmp(o.amount) < 0 {
			approve := o.intent(actevm.Operation("approve"))
			approve.ValidatorShare = common.Address{}
			approve.Amount = new(big.Int).Set(o.amount)
			if _, err := wfevm.Transact(ctx, o.Operation, o.network, approve, held); err != nil {
				return err
			}
		}
		delegate := o.intent(actevm.Operation("delegate"))
		delegate.Amount = new(big.Int).Set(o.amount)
		delegate.ExpectedShares = wei(d.ExpectedShares)
		_, err = wfevm.Transact(ctx, o.Operation, o.network, delegate, held)
		return err
	})
}

// Unstake (workflow type PolygonUnstakeWorkflow) unbonds POL from a validator (sellVoucher_newPOL), reads the unbond from the
// finalized receipt, waits with durable timers until the StakeManager's withdrawal delay has
// passed (days on mainnet; re-read after each wait), then claims it (unstakeClaimTokens_newPOL).
func Unstake(ctx workflow.Context, in UnstakeInput) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	o, err := newOperation(ctx, OpUnstake, in.Network, in.Staker, in.ValidatorShare, in.Amount, in.RequestedBy, in.Options)
	if err != nil {
		return Result{}, err
	}
	if err := o.runUnstake(ctx); err != nil {
		return Result{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return o.result(), nil
}

func (o *operation) runUnstake(ctx workflow.Context) error {
	d, err := o.readDelegation(ctx)
	if err != nil {
		return err
	}
	if wei(d.Staked).Cmp(o.amount) < 0 {
		return refuse("%s has %s staked with validator share %s, less than the %s asked; nothing was signed",
			o.staker.Hex(), FormatPOL(d.Staked), o.share.Hex(), FormatPOL(o.amount.String()))
	}
	if err := o.checkPolicy(ctx); err != nil {
		return err
	}
	var sold workflows.TxRecord
	err = o.withLease(ctx, func(held *lease.Lease) error {
		d, err := o.readDelegation(ctx)
		if err != nil {
			return err
		}
		unstake := o.intent(actevm.Operation("unstake"))
		unstake.Amount = new(big.Int).Set(o.amount)
		unstake.ExpectedShares = wei(d.ExpectedShares)
		sold, err = wfevm.Transact(ctx, o.Operation, o.network, unstake, held)
		return err
	})
	if err != nil {
		return err
	}
	u, err := o.waitClaimable(ctx, actevm.UnbondInput{Network: o.network, Staker: o.staker.Hex(), ValidatorShare: o.share.Hex(), TxID: sold.TxID})
	if err != nil {
		return err
	}
	return o.withLease(ctx, func(held *lease.Lease) error {
		claim := o.intent(actevm.Operation("claim"))
		claim.UnbondNonce = new(big.Int).SetUint64(u.Nonce)
		_, err := wfevm.Transact(ctx, o.Operation, o.network, claim, held)
		return err
	})
}

// waitClaimable reads the unbond and waits, with durable timers sized from the epochs left and the
// observed time between checkpoints (capped at MaxEpochWait), until it can be claimed.
func (o *operation) waitClaimable(ctx workflow.Context, in actevm.UnbondInput) (actevm.Unbond, error) {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	stalls := func(err error) bool { return workflows.MayHeal(err) }
	for {
		u, err := workflows.UntilUnstalled(ctx, o.Operation, stalls, func() (actevm.Unbond, error) {
			var u actevm.Unbond
			err := o.Get(ctx, workflow.ExecuteActivity(actx, ea.EVMReadUnbond, in), &u)
			return u, err
		})
		if err != nil {
			return u, err
		}
		if o.unbond == 0 {
			o.unbond = u.Nonce
			o.SetAccount(fmt.Sprintf("unbond %d", u.Nonce))
		}
		in.Nonce, in.TxID = u.Nonce, ""
		if u.Claimable() {
			o.Status().WaitingUntil = time.Time{}
			return u, nil
		}
		opts := o.Options()
		left := u.WithdrawEpoch + u.WithdrawalDelay - u.Epoch
		limit := opts.MaxEpochWait
		if u.RecheckAfter > 0 {
			limit = min(limit, u.RecheckAfter)
		}
		wait := limit
		if u.EpochDuration > 0 {
			wait = min(time.Duration(left)*u.EpochDuration, limit)
		}
		wait = max(wait, time.Second)
		o.Logger().Info("Waiting for the withdrawal delay", "unbondNonce", u.Nonce, "epoch", u.Epoch,
			"claimableAt", u.WithdrawEpoch+u.WithdrawalDelay, "wait", wait)
		if err := o.Wait(ctx, StepWaitingWithdrawal, wait); err != nil {
			return u, temporal.NewCanceledError(fmt.Sprintf("cancelled while waiting for the withdrawal delay; unbond %d was not claimed and can be claimed later", u.Nonce))
		}
	}
}

// WithdrawRewards withdraws the staker's rewards from a validator (withdrawRewardsPOL).
func WithdrawRewards(ctx workflow.Context, in RewardsInput) (Result, error) {
	return runRewards(ctx, in, OpWithdrawRewards, actevm.Operation("withdraw-rewards"))
}

// Restake restakes the staker's rewards with the validator (restakePOL).
func Restake(ctx workflow.Context, in RewardsInput) (Result, error) {
	return runRewards(ctx, in, OpRestake, actevm.Operation("restake"))
}

func runRewards(ctx workflow.Context, in RewardsInput, op string, call actevm.Operation) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	o, err := newOperation(ctx, op, in.Network, in.Staker, in.ValidatorShare, "", in.RequestedBy, in.Options)
	if err != nil {
		return Result{}, err
	}
	if err := o.runRewards(ctx, call); err != nil {
		return Result{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return o.result(), nil
}

func (o *operation) runRewards(ctx workflow.Context, call actevm.Operation) error {
	d, err := o.readDelegation(ctx)
	if err != nil {
		return err
	}
	if wei(d.LiquidRewards).Sign() == 0 {
		return refuse("%s has no rewards with validator share %s; nothing was signed", o.staker.Hex(), o.share.Hex())
	}
	o.SetAmount(d.LiquidRewards)
	if err := o.checkPolicy(ctx); err != nil {
		return err
	}
	return o.withLease(ctx, func(held *lease.Lease) error {
		_, err := wfevm.Transact(ctx, o.Operation, o.network, o.intent(call), held)
		return err
	})
}
