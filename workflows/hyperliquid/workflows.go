package hyperliquid

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ethereum/go-ethereum/common"

	"github.com/stakeflow/stakeflow/activities"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
	"github.com/stakeflow/stakeflow/lease"
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
	// known are the hashes of the withdrawals the history showed before anything was signed;
	// hash is this operation's withdrawal, once the history shows it.
	known []string
	hash  string
	// signed is the action the exchange took; misses counts the reads that did not show it.
	signed acthl.Signed
	misses int
	// lease is the delegator's lease while held.
	lease *lease.Lease
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
		Waits:        []string{lease.StepWaitingNonce, StepWaitingWithdrawal},
		Labels:       workflows.Labels{Account: "withdrawal", Block: "nonce"},
		FormatAmount: FormatHYPE,
	})
	if err != nil {
		return WithdrawResult{}, err
	}
	w := &withdrawal{Operation: o, in: in, wei: wei}
	res, err := w.leased(ctx)
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

// leased runs the withdrawal holding the delegator's lease (one operation per delegator at a
// time, see acthl's lease), and gives it back on every exit, a cancelled operation included.
func (w *withdrawal) leased(ctx workflow.Context) (WithdrawResult, error) {
	held, err := lease.Acquire(ctx, w.Operation, lease.Hyperliquid, w.in.Network, common.HexToAddress(w.in.Delegator).Hex(), ha.HLRequestLease)
	if err != nil {
		return WithdrawResult{}, err
	}
	w.lease = held
	defer w.release(ctx)
	return w.run(ctx)
}

// release gives the delegator's lease back, once: when the withdrawal's fate is final (the
// history shows it: an initiated withdrawal reaches spot after the queue whatever happens, and
// the next operation reads it among the known ones), or on the operation's exit. It runs on a
// disconnected context (Lease.Release): a cancelled operation still frees its delegator.
func (w *withdrawal) release(ctx workflow.Context) {
	if w.lease == nil {
		return
	}
	if err := w.lease.Release(ctx); err != nil {
		w.Logger().Warn("Delegator lease not released", "error", err)
	}
	w.lease = nil
}

func (w *withdrawal) run(ctx workflow.Context) (WithdrawResult, error) {
	before, err := w.account(ctx)
	if err != nil {
		return WithdrawResult{}, err
	}
	if n := len(before.Pending); n >= acthl.MaxPending {
		names := make([]string, n)
		for i, p := range before.Pending {
			names[i] = fmt.Sprintf("%s (%s, initiated %s, reaches spot %s)", p.Hash, FormatHYPE(strconv.FormatUint(p.Wei, 10)),
				p.Time.UTC().Format(time.RFC3339), p.CompletesAt.UTC().Format(time.RFC3339))
		}
		return WithdrawResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s has %d withdrawals pending, Hyperliquid's limit: %s; nothing was signed", w.Status().Staker, n, strings.Join(names, ", ")),
			ErrTooManyPending, nil)
	}
	w.known = acthl.Hashes(before.Account)
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
		Nonce: w.nonce, Digest: w.digest, Hash: w.hash, Requests: w.requests,
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
		// Signed in the worker running the workflow, as every chain's transactions are
		// (workflows.SignOptions): the key stays in that worker and no task queue round trip is
		// spent on it.
		sctx := workflow.WithLocalActivityOptions(ctx, workflows.SignOptions())
		if err := w.Get(ctx, workflow.ExecuteLocalActivity(sctx, ha.HLSign, acthl.SignInput{RequestInput: rin, Unsigned: req.Unsigned, EchoedAmount: req.Amount, UsedNonces: w.used}), &signed); err != nil {
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
			err := w.Get(ctx, workflow.ExecuteActivity(bctx, ha.HLSubmit, acthl.SubmitInput{Network: w.in.Network, Delegator: w.in.Delegator, Signed: signed, Known: w.known}), &sub)
			return sub, err
		})
		at.BroadcastAt = workflow.Now(ctx)
		if err != nil {
			at.Error = workflows.Reason(err)
			w.Status().Attempts = append(w.Status().Attempts, at)
			// The action may have reached the exchange (a cancel or a stall ended the submission,
			// not the exchange's word): it is followed until the history shows it or it is proven
			// unable to land.
			w.Logger().Warn("Submission ended without the exchange's word; following the signed action", "nonce", signed.Nonce, "error", err)
			w.nonce, w.digest, w.signed = signed.Nonce, signed.Digest, signed
			w.SetAccount(fmt.Sprintf("nonce %d", signed.Nonce))
			return nil
		}
		switch sub.Outcome {
		case acthl.OutcomeSent:
			at.Outcome, at.BroadcastError = acthl.OutcomeSent, sub.Reason
			w.Status().Attempts = append(w.Status().Attempts, at)
			w.nonce, w.digest, w.signed = signed.Nonce, signed.Digest, signed
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
// after each wait (at most MaxEpochWait, or the worker's recheck). The withdrawal is the one the
// delegator's history shows for the signed action (acthl.Find), then followed by its hash.
func (w *withdrawal) waitSpot(ctx workflow.Context) (acthl.Account, error) {
	for {
		rctx := ctx
		if w.hash == "" {
			rctx = w.following(ctx)
		}
		acc, err := w.account(rctx)
		if err != nil {
			return acc, err
		}
		if w.hash == "" {
			f, err := w.follow(ctx, acc)
			if err != nil {
				return acc, err
			}
			if f == nil {
				continue
			}
			w.hash = f.Hash
			w.Logger().Info("The history shows the withdrawal", "nonce", w.nonce, "hash", f.Hash, "initiated", f.Time)
			w.Unstall(ctx, StepWaitingWithdrawal)
			w.release(ctx)
		}
		var pending *time.Time
		for _, p := range acc.Pending {
			if p.Hash == w.hash {
				pending = &p.CompletesAt
			}
		}
		if pending == nil {
			if !slices.Contains(acthl.Hashes(acc.Account), w.hash) {
				return acc, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("the delegator's history no longer shows the withdrawal %s (nonce %d), pending or finalized", w.hash, w.nonce), activities.ErrTransactionRejected, nil)
			}
			w.Status().WaitingUntil = time.Time{}
			w.Status().Transactions = append(w.Status().Transactions, workflows.TxRecord{
				Kind: OpWithdraw, TxID: w.hash, Block: w.nonce, Builds: w.requests, Fee: "0", FinalizedAt: workflow.Now(ctx)})
			return acc, nil
		}
		wait := min(max(pending.Sub(workflow.Now(ctx)), time.Second), w.Options().MaxEpochWait)
		if acc.RecheckAfter > 0 {
			wait = min(wait, acc.RecheckAfter)
		}
		w.Logger().Info("Waiting for the withdrawal to reach spot", "nonce", w.nonce, "hash", w.hash, "reachesSpotAt", *pending, "wait", wait)
		if err := w.Wait(ctx, StepWaitingWithdrawal, wait); err != nil {
			return acc, temporal.NewCanceledError(fmt.Sprintf("cancelled while the withdrawal %s (nonce %d) waits in Hyperliquid's queue; it reaches spot all the same", w.hash, w.nonce))
		}
	}
}

// follow is one look at an action the exchange took that the history has not shown yet: its
// withdrawal when the history shows it (the caller follows it by hash); nil after a wait, the
// action still able to land; the proof it cannot land (its nonce left the exchange's window and
// the history read after that does not show it) as the operation's failure. A cancel does not end
// the following: the action may still land, and the delegator's lease is held until its fate is
// known; the operation ends cancelled then.
func (w *withdrawal) follow(ctx workflow.Context, acc acthl.Account) (*hlchain.Withdrawal, error) {
	f, outcome := acthl.Fate(acc, w.wei, w.nonce, w.known)
	switch outcome {
	case activities.OutcomeFinalized:
		return &f, nil
	case activities.OutcomeCannotLand:
		closed := acthl.WindowClosed(w.nonce).UTC().Format(time.RFC3339)
		msg := fmt.Sprintf("the action of nonce %d (digest %s) cannot land: its nonce left the exchange's window at %s and the delegator's history, read at %s, does not show it; nothing reached spot",
			w.nonce, w.digest, closed, acc.ReadAt.UTC().Format(time.RFC3339))
		w.Status().Attempts = append(w.Status().Attempts, workflows.Attempt{Kind: OpWithdraw, Build: w.requests, TxID: w.digest,
			Expiry: fmt.Sprintf("nonce %d", w.nonce), Outcome: activities.OutcomeCannotLand, Error: msg})
		if w.Status().CancelRequested || ctx.Err() != nil {
			return nil, temporal.NewCanceledError(msg)
		}
		return nil, temporal.NewNonRetryableApplicationError(msg, activities.ErrTransactionRejected, nil)
	}
	w.misses++
	wait := missWait(acc)
	if w.misses >= maxMisses {
		// Past a history's usual lag: read again hourly, and once the window has closed.
		wait = time.Hour
		if acc.RecheckAfter > 0 {
			wait = min(wait, acc.RecheckAfter)
		}
		if left := acthl.WindowClosed(w.nonce).Sub(acc.ReadAt); left > 0 && left < wait {
			wait = left + time.Second
		}
	}
	if w.misses%maxMisses == 0 {
		// The exchange dedups by nonce: the same signed action again lands it if it was lost, and
		// changes nothing if it was taken.
		w.resubmit(ctx)
	}
	w.Logger().Info("The history does not show the withdrawal yet", "nonce", w.nonce, "reads", w.misses,
		"cannotLandAfter", acthl.WindowClosed(w.nonce), "wait", wait)
	fctx := w.following(ctx)
	if w.misses >= maxMisses {
		// Past a history's usual lag the chain keeps the operation waiting: it shows stalled,
		// naming when the chain's word comes at the latest and the operator's ways out.
		w.Status().WaitingUntil = workflow.Now(ctx).Add(wait)
		w.StallWaiting(fctx, StepWaitingWithdrawal, fmt.Sprintf(
			"the exchange took the action of nonce %d but the delegator's history has not shown it after %d reads; "+
				"it is followed until the history shows it, or until %s when its nonce has left the exchange's window and it is proven unable to land "+
				"(ways out: wait; a cancel ends the operation only on that proof)",
			w.nonce, w.misses, acthl.WindowClosed(w.nonce).UTC().Format(time.RFC3339)), wait)
		w.Flush(fctx)
		if err := workflow.Sleep(fctx, wait); err != nil && !temporal.IsCanceledError(err) {
			return nil, err
		}
		return nil, nil
	}
	if err := w.Wait(fctx, StepWaitingWithdrawal, wait); err != nil && !temporal.IsCanceledError(err) {
		return nil, err
	}
	// A cancel ends the wait early; the following goes on (following).
	return nil, nil
}

// following is the context the following of a sent action goes on in: ctx, or once the
// operation was cancelled, a context the cancel does not end.
func (w *withdrawal) following(ctx workflow.Context) workflow.Context {
	if ctx.Err() == nil {
		return ctx
	}
	w.Status().CancelRequested = true
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	return dctx
}

// resubmit submits the signed action again (the same bytes); its answer only informs: the history
// decides.
func (w *withdrawal) resubmit(ctx workflow.Context) {
	bctx := workflow.WithActivityOptions(w.following(ctx), workflows.BroadcastOptions(w.Options()))
	var sub acthl.SubmitResult
	err := workflow.ExecuteActivity(bctx, ha.HLSubmit, acthl.SubmitInput{Network: w.in.Network, Delegator: w.in.Delegator, Signed: w.signed, Known: w.known}).Get(bctx, &sub)
	w.Logger().Info("Submitted the same signed action again", "nonce", w.nonce, "outcome", sub.Outcome, "reason", sub.Reason, "error", err)
}

// maxMisses is how many reads may miss the withdrawal of an action the exchange took before the
// operation fails.
const maxMisses = 5

// missWait is the wait before the history is read again for a withdrawal it did not show yet.
func missWait(acc acthl.Account) time.Duration {
	if acc.RecheckAfter > 0 {
		return min(acc.RecheckAfter, time.Minute)
	}
	return time.Minute
}
