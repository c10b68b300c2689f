package hyperliquid

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	"github.com/stakeflow/stakeflow/workflows"
)

// ha is the nil Activities pointer the workflows name Hyperliquid activities through.
var ha *acthl.Activities

// ErrTooManyPending is the failure type of a withdrawal refused for the pending ones.
const ErrTooManyPending = acthl.ErrTooManyPending

type withdrawal struct {
	*workflows.Operation
	in    WithdrawInput
	wei   uint64
	nonce uint64
	// digest of the signed action the exchange holds.
	digest   string
	requests int
	used     []uint64
}

// Withdraw (workflow type HyperliquidWithdrawWorkflow) moves Amount HYPE of the delegator's
// staking balance to spot (see the package comment).
func Withdraw(ctx workflow.Context, in WithdrawInput) (WithdrawResult, error) {
	if err := in.Validate(); err != nil {
		return WithdrawResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	wei, _ := WeiOf(in.Amount)
	o, err := workflows.NewOperation(ctx, workflows.Setup{
		Chain: Chain, Network: in.Network, Operation: OpWithdraw, Staker: strings.ToLower(in.Delegator),
		Amount: strconv.FormatUint(wei, 10), Unit: Unit, RequestedBy: in.RequestedBy, Options: in.Options,
		Waits:        []string{StepWaitingWithdrawal},
		Labels:       workflows.Labels{Account: "withdrawal", Block: "nonce"},
		FormatAmount: FormatHYPE,
	})
	if err != nil {
		return WithdrawResult{}, err
	}
	w := &withdrawal{Operation: o, in: in, wei: wei}
	res, err := w.run(ctx)
	if err != nil {
		return WithdrawResult{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return res, nil
}

func (w *withdrawal) account(ctx workflow.Context) (acthl.Account, error) {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	// Once the exchange holds the action, a read that fails for a reason that may heal stalls
	// the operation instead of failing it: the withdrawal reaches spot all the same.
	stalls := func(err error) bool { return w.nonce != 0 && workflows.MayHeal(err) }
	return workflows.UntilUnstalled(ctx, w.Operation, stalls, func() (acthl.Account, error) {
		var acc acthl.Account
		err := w.Get(ctx, workflow.ExecuteActivity(actx, ha.HLReadAccount, acthl.AccountInput{Network: w.in.Network, Delegator: w.in.Delegator}), &acc)
		return acc, err
	})
}

func (w *withdrawal) run(ctx workflow.Context) (WithdrawResult, error) {
	before, err := w.account(ctx)
	if err != nil {
		return WithdrawResult{}, err
	}
	if n := len(before.Pending); n >= acthl.MaxPending {
		names := make([]string, n)
		for i, p := range before.Pending {
			names[i] = fmt.Sprintf("nonce %d (%s, reaches spot %s)", p.Nonce, FormatHYPE(strconv.FormatUint(p.Wei, 10)), p.CompletesAt.UTC().Format(time.RFC3339))
		}
		return WithdrawResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s has %d withdrawals pending, Hyperliquid's limit: %s; nothing was signed", w.Status().Staker, n, strings.Join(names, ", ")),
			ErrTooManyPending, nil)
	}
	if err := w.send(ctx); err != nil {
		return WithdrawResult{}, err
	}
	after, err := w.waitSpot(ctx)
	if err != nil {
		return WithdrawResult{}, err
	}
	w.Logger().Info("Withdrawal reached spot", "nonce", w.nonce, "wei", w.wei, "spotBefore", before.Spot, "spotAfter", after.Spot)
	st := w.Status()
	return WithdrawResult{
		Operation: OpWithdraw, Network: w.in.Network, Delegator: st.Staker, Amount: w.in.Amount, Wei: strconv.FormatUint(w.wei, 10),
		Nonce: w.nonce, Digest: w.digest, Requests: w.requests,
		ReachedSpot: strconv.FormatUint(w.wei, 10), SpotBefore: strconv.FormatUint(before.Spot, 10), SpotAfter: strconv.FormatUint(after.Spot, 10),
		CancelRequested: st.CancelRequested,
	}, nil
}

// send asks for the request, has it verified and signed, and submits it, until the exchange holds
// it; a new request only after the exchange refused the nonce and does not hold the action.
func (w *withdrawal) send(ctx workflow.Context) error {
	opts := w.Options()
	for {
		if w.requests >= opts.MaxBuilds {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the exchange refused the nonce of each of %d requests (nonces %v); nothing reached it", w.requests, w.used),
				workflows.ErrTooManyBuilds, nil)
		}
		w.requests++
		w.SetStep(ctx, workflows.StepBuilding)
		rin := acthl.RequestInput{Network: w.in.Network, Delegator: w.in.Delegator, Amount: w.in.Amount}
		var req acthl.Request
		if err := w.Get(ctx, workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, workflows.BuildOptions(opts)), ha.HLRequest, rin), &req); err != nil {
			return err
		}
		at := workflows.Attempt{Kind: OpWithdraw, Build: w.requests, BuiltAt: workflow.Now(ctx)}
		w.SetStep(ctx, workflows.StepSigning)
		var signed acthl.Signed
		sctx := workflow.WithActivityOptions(ctx, signOptions())
		if err := w.Get(ctx, workflow.ExecuteActivity(sctx, ha.HLSign, acthl.SignInput{RequestInput: rin, Unsigned: req.Unsigned, UsedNonces: w.used}), &signed); err != nil {
			return err
		}
		at.TxID, at.Expiry, at.SignedAt = signed.Digest, fmt.Sprintf("nonce %d", signed.Nonce), workflow.Now(ctx)
		w.used = append(w.used, signed.Nonce)
		w.SetStep(ctx, workflows.StepBroadcasting)
		// The exchange unreachable past the broadcast timeout stalls the operation, and the same
		// signed action is submitted again: it may have reached the exchange already.
		bctx := workflow.WithActivityOptions(ctx, workflows.BroadcastOptions(opts))
		sub, err := workflows.UntilUnstalled(ctx, w.Operation, workflows.MayHeal, func() (acthl.SubmitResult, error) {
			var sub acthl.SubmitResult
			err := w.Get(ctx, workflow.ExecuteActivity(bctx, ha.HLSubmit, acthl.SubmitInput{Network: w.in.Network, Delegator: w.in.Delegator, Signed: signed}), &sub)
			return sub, err
		})
		at.BroadcastAt = workflow.Now(ctx)
		if err != nil {
			at.Error = workflows.Reason(err)
			w.Status().Attempts = append(w.Status().Attempts, at)
			return err
		}
		switch sub.Outcome {
		case acthl.OutcomeSent:
			at.Outcome, at.BroadcastError = acthl.OutcomeSent, sub.Reason
			w.Status().Attempts = append(w.Status().Attempts, at)
			w.nonce, w.digest = signed.Nonce, signed.Digest
			w.SetAccount(fmt.Sprintf("nonce %d", signed.Nonce))
			return nil
		case acthl.OutcomeNonceRefused:
			at.Outcome, at.Error = acthl.OutcomeNonceRefused, sub.Reason
			w.Status().Attempts = append(w.Status().Attempts, at)
			w.Logger().Warn("Exchange refused the nonce; asking for a new request", "nonce", signed.Nonce, "reason", sub.Reason)
			continue
		default:
			at.Outcome, at.Error = sub.Outcome, sub.Reason
			w.Status().Attempts = append(w.Status().Attempts, at)
			return temporal.NewNonRetryableApplicationError("the exchange refused the withdrawal: "+sub.Reason, activities.ErrTransactionRejected, nil)
		}
	}
}

// waitSpot waits, with durable timers, until the withdrawal reached spot, re-reading the account
// after each wait (at most MaxEpochWait, or the worker's recheck).
func (w *withdrawal) waitSpot(ctx workflow.Context) (acthl.Account, error) {
	for {
		acc, err := w.account(ctx)
		if err != nil {
			return acc, err
		}
		var pending *time.Time
		for _, p := range acc.Pending {
			if p.Nonce == w.nonce {
				pending = &p.CompletesAt
			}
		}
		if pending == nil {
			if !acthl.Holds(acc.Account, w.nonce) {
				return acc, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("the exchange no longer shows the withdrawal of nonce %d, pending or finalized", w.nonce), activities.ErrTransactionRejected, nil)
			}
			w.Status().WaitingUntil = time.Time{}
			w.Status().Transactions = append(w.Status().Transactions, workflows.TxRecord{
				Kind: OpWithdraw, TxID: w.digest, Block: w.nonce, Builds: w.requests, Fee: "0", FinalizedAt: workflow.Now(ctx)})
			return acc, nil
		}
		wait := min(max(pending.Sub(workflow.Now(ctx)), time.Second), w.Options().MaxEpochWait)
		if acc.RecheckAfter > 0 {
			wait = min(wait, acc.RecheckAfter)
		}
		w.Logger().Info("Waiting for the withdrawal to reach spot", "nonce", w.nonce, "reachesSpotAt", *pending, "wait", wait)
		if err := w.Wait(ctx, StepWaitingWithdrawal, wait); err != nil {
			return acc, temporal.NewCanceledError(fmt.Sprintf("cancelled while the withdrawal of nonce %d waits in Hyperliquid's queue; it reaches spot all the same", w.nonce))
		}
	}
}

// signOptions: HLSign, deterministic (the same action signs to the same signature).
func signOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: activities.NonRetryable},
	}
}
