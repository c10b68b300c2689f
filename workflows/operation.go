package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
)

// a is the nil Activities pointer the workflows name activities through.
var a *activities.Activities

// operation is the state every workflow keeps: what was asked, where it stands, and the handlers
// that expose it (status query, approve and reject updates).
type operation struct {
	opts   Options
	intent activities.Intent
	status Status
	logger log.Logger
	// metrics records the operation's life; replays record nothing.
	metrics opMetrics
	// policyKnown is set once CheckPolicy answered; approvalsRequired is then its count (0, 1, 2).
	policyKnown       bool
	approvalsRequired int
	// attrs batches search-attribute changes (see visibility).
	attrs visibility
}

// newOperation records the intent, registers the query and update handlers and tags the workflow
// with its search attributes. Callers validate their input first.
func newOperation(ctx workflow.Context, intent activities.Intent, opts Options, requestedBy string) (*operation, error) {
	info := workflow.GetInfo(ctx)
	o := &operation{
		opts:   opts.withDefaults(),
		intent: intent,
		status: Status{
			OperationID:  info.WorkflowExecution.ID,
			Operation:    intent.Operation,
			Chain:        intent.Chain,
			Network:      intent.Network,
			Staker:       intent.Staker,
			Lamports:     intent.Lamports,
			VoteAccount:  intent.VoteAccount,
			StakeAccount: intent.StakeAccount,
			RequestedBy:  requestedBy,
			StartedAt:    workflow.Now(ctx),
			Approval:     Approval{Decisions: []ApprovalRecord{}},
			Attempts:     []Attempt{},
			Transactions: []TxRecord{},
		},
	}
	o.logger = log.With(workflow.GetLogger(ctx),
		"operationId", info.WorkflowExecution.ID, "runId", info.WorkflowExecution.RunID,
		"operation", string(intent.Operation), "staker", intent.Staker, "network", intent.Network)
	o.attrs.logger = o.logger
	o.metrics = newOpMetrics(ctx, intent)

	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return o.status, nil }); err != nil {
		return nil, err
	}
	for _, name := range []string{UpdateApprove, UpdateReject} {
		decision := DecisionApproved
		if name == UpdateReject {
			decision = DecisionRejected
		}
		err := workflow.SetUpdateHandlerWithOptions(ctx, name,
			func(ctx workflow.Context, in ApprovalInput) (Status, error) {
				o.decide(ctx, decision, in)
				return o.status, nil
			},
			workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, in ApprovalInput) error {
				return o.validateDecision(in)
			}})
		if err != nil {
			return nil, err
		}
	}
	// Attributes the starter already set at start need no upsert.
	startedWithout := false
	start := workflow.GetTypedSearchAttributes(ctx)
	for _, kw := range []struct {
		key   temporal.SearchAttributeKeyKeyword
		value string
	}{{SAChain, intent.Chain}, {SANetwork, intent.Network}, {SAOperation, string(intent.Operation)}, {SAStaker, intent.Staker}} {
		if v, ok := start.GetKeyword(kw.key); !ok || v != kw.value {
			o.attrs.set(kw.key.GetName(), kw.key.ValueSet(kw.value))
			// What the operation is and whose: without these it cannot be found.
			startedWithout = true
		}
	}
	if v, ok := start.GetInt64(SAAmount); !ok || v != int64(intent.Lamports) {
		o.setAmount(intent.Lamports)
	}
	if v, ok := start.GetKeyword(SAStakeAccount); intent.StakeAccount != "" && (!ok || v != intent.StakeAccount) {
		o.attrs.set(SAStakeAccount.GetName(), SAStakeAccount.ValueSet(intent.StakeAccount))
	}
	o.attrs.shown, _ = start.GetKeyword(SAStep)
	o.setStep(ctx, StepValidating)
	if startedWithout {
		// Started without its attributes (not through the starter): make it findable at once.
		o.flush(ctx)
	}
	o.metrics.started()
	return o, nil
}

// validateDecision refuses an approve or reject update that cannot count: no approver, the
// identity that started the operation, an approver who already decided, or an operation past its
// approval gate.
func (o *operation) validateDecision(in ApprovalInput) error {
	if strings.TrimSpace(in.Approver) == "" {
		return errors.New("approver is required")
	}
	if o.status.RequestedBy != "" && strings.EqualFold(strings.TrimSpace(in.Approver), o.status.RequestedBy) {
		return fmt.Errorf("%s started this operation and cannot also approve or reject it: another person must decide", in.Approver)
	}
	if o.decided() {
		return fmt.Errorf("operation was already %s", o.status.Approval.Decision)
	}
	for _, d := range o.status.Approval.Decisions {
		if strings.EqualFold(d.Approver, strings.TrimSpace(in.Approver)) {
			return fmt.Errorf("%s already %s this operation at %s; a second approval must come from someone else",
				d.Approver, d.Decision, d.At.UTC().Format(time.RFC3339))
		}
	}
	if o.status.Step != StepValidating && o.status.Step != StepAwaitingApproval {
		return fmt.Errorf("operation is not awaiting approval (step: %s)", o.status.Step)
	}
	return nil
}

// decide records an accepted approve or reject decision.
func (o *operation) decide(ctx workflow.Context, decision string, in ApprovalInput) {
	rec := ApprovalRecord{Approver: strings.TrimSpace(in.Approver), Decision: decision, Reason: in.Reason, At: workflow.Now(ctx)}
	ap := &o.status.Approval
	ap.Decisions = append(ap.Decisions, rec)
	ap.Approver, ap.Reason, ap.At = rec.Approver, rec.Reason, rec.At
	switch {
	case decision == DecisionRejected:
		ap.Decision = DecisionRejected
	case o.policyKnown && o.approvals() >= max(o.approvalsRequired, 1):
		ap.Decision = DecisionApproved
	}
	o.logger.Info("Approval decision", "decision", decision, "approver", rec.Approver,
		"approvals", o.approvals(), "required", o.approvalsRequired)
}

// approvals counts the approve decisions recorded.
func (o *operation) approvals() int {
	n := 0
	for _, d := range o.status.Approval.Decisions {
		if d.Decision == DecisionApproved {
			n++
		}
	}
	return n
}

// decided reports whether the approval gate has its outcome.
func (o *operation) decided() bool {
	return o.status.Approval.Decision != ""
}

// flush sends the queued search-attribute updates as one upsert.
func (o *operation) flush(ctx workflow.Context) { o.attrs.flush(ctx, o.status.Step) }

// get waits for f, first sending the queued search attributes when the operation has just left a
// resting step.
func (o *operation) get(ctx workflow.Context, f workflow.Future, v any) error {
	if o.attrs.leftRest(o.status.Step) {
		o.flush(ctx)
	}
	return f.Get(ctx, v)
}

func (o *operation) setAmount(lamports uint64) {
	o.intent.Lamports = lamports
	o.status.Lamports = lamports
	if lamports > 0 && lamports <= maxLamports {
		o.attrs.set(SAAmount.GetName(), SAAmount.ValueSet(int64(lamports)))
	}
}

func (o *operation) setStakeAccount(addr string) {
	if addr == "" || addr == o.status.StakeAccount {
		return
	}
	o.intent.StakeAccount = addr
	o.status.StakeAccount = addr
	o.attrs.set(SAStakeAccount.GetName(), SAStakeAccount.ValueSet(addr))
}

// setStep records the step in the status, the StakeflowStep search attribute and the workflow's
// current details shown by the Web UI.
func (o *operation) setStep(ctx workflow.Context, step string) {
	o.status.Step = step
	o.status.StepSince = workflow.Now(ctx)
	o.attrs.setStep(step)
	workflow.SetCurrentDetails(ctx, o.details())
	if step == StepDone || step == StepFailed || step == StepCancelled || step == StepStalled {
		o.flush(ctx)
	}
	if step == StepDone {
		// Every workflow ends a successful operation by stepping to done, exactly once.
		o.metrics.completed()
	}
}

func (o *operation) details() string {
	s := fmt.Sprintf("**%s**: %s", o.status.Step, o.status.Operation)
	if o.status.Lamports > 0 {
		s += " " + FormatSOL(o.status.Lamports)
	}
	if o.status.StakeAccount != "" {
		s += "\n\nstake account: " + o.status.StakeAccount
	}
	if o.status.VoteAccount != "" {
		s += "\n\nvote account: " + o.status.VoteAccount
	}
	if ap := o.status.Approval; ap.Required {
		s += fmt.Sprintf("\n\napprovals: %d of %d", o.approvals(), max(ap.ApprovalsRequired, 1))
	}
	for _, t := range o.status.Transactions {
		s += fmt.Sprintf("\n\n%s: %s (slot %d, fee %d lamports)", t.Kind, t.Signature, t.Slot, t.FeeLamports)
	}
	if n := len(o.status.Attempts); n > 0 {
		last := o.status.Attempts[n-1]
		if last.Outcome == "" && last.Signature != "" {
			s += fmt.Sprintf("\n\npending %s: %s (build %d)", last.Kind, last.Signature, last.Build)
		}
	}
	if !o.status.WaitingUntil.IsZero() && o.status.Step == StepWaitingDeactivation {
		s += "\n\nnext check: " + o.status.WaitingUntil.UTC().Format(time.RFC3339)
	}
	if st := o.status.Stall; st != nil {
		s += fmt.Sprintf("\n\nstalled in %s since %s (%d tries): %s\n\nnext try: %s", st.Step,
			st.Since.UTC().Format(time.RFC3339), st.Tries, st.LastError, st.NextTryAt.UTC().Format(time.RFC3339))
	}
	if o.status.Error != "" {
		s += "\n\nerror: " + o.status.Error
	}
	return s
}

// fail records err as the operation's end and returns it.
func (o *operation) fail(ctx workflow.Context, err error) error {
	o.metrics.failed(err)
	if temporal.IsCanceledError(err) {
		o.setStep(ctx, StepCancelled)
		o.logger.Info("Operation cancelled", "step", o.status.Step)
		return err
	}
	o.status.Error = err.Error()
	o.setStep(ctx, StepFailed)
	o.logger.Error("Operation failed", "error", err)
	return err
}

// result is the Result of a finished operation.
func (o *operation) result() Result {
	var fees uint64
	for _, t := range o.status.Transactions {
		fees += t.FeeLamports
	}
	return Result{
		Operation:       o.intent.Operation,
		Network:         o.intent.Network,
		Staker:          o.intent.Staker,
		Lamports:        o.status.Lamports,
		StakeAccount:    o.status.StakeAccount,
		VoteAccount:     o.status.VoteAccount,
		Transactions:    o.status.Transactions,
		FeeLamports:     fees,
		CancelRequested: o.status.CancelRequested,
	}
}

// checkPolicy applies the worker's policy and, when it asks for approvals, waits for them. It runs
// before anything is built: blockhashes expire, so a transaction built before a long approval
// wait could not land.
func (o *operation) checkPolicy(ctx workflow.Context) error {
	lctx := workflow.WithLocalActivityOptions(ctx, policyOptions())
	var decision activities.PolicyDecision
	if err := workflow.ExecuteLocalActivity(lctx, a.CheckPolicy, o.intent).Get(ctx, &decision); err != nil {
		return err
	}
	required := decision.ApprovalsRequired
	if required == 0 && decision.ApprovalRequired {
		required = 1
	}
	o.policyKnown, o.approvalsRequired = true, required
	ap := &o.status.Approval
	ap.Required, ap.ApprovalsRequired = required > 0, required
	ap.Threshold, ap.DualThreshold = decision.ApprovalThreshold, decision.DualApprovalThreshold
	if ap.Decision == "" && o.approvals() >= max(required, 1) {
		// Approved before the policy was known.
		ap.Decision = DecisionApproved
	}
	if required == 0 && ap.Decision != DecisionRejected {
		// A rejection sent before the policy was known still stops the operation.
		return nil
	}
	if !o.decided() {
		o.setStep(ctx, StepAwaitingApproval)
		o.logger.Info("Awaiting approval", "required", required, "threshold", decision.ApprovalThreshold, "timeout", o.opts.ApprovalTimeout)
		o.flush(ctx)
		ok, err := workflow.AwaitWithTimeout(ctx, o.opts.ApprovalTimeout, o.decided)
		if err != nil {
			return err
		}
		if !ok {
			ap.Decision = DecisionTimedOut
			ap.At = workflow.Now(ctx)
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%d of %d approvals within %s; nothing was built or signed", o.approvals(), required, o.opts.ApprovalTimeout),
				ErrApprovalTimeout, nil)
		}
	}
	if ap.Decision == DecisionRejected {
		msg := fmt.Sprintf("rejected by %s", ap.Approver)
		if ap.Reason != "" {
			msg += ": " + ap.Reason
		}
		return temporal.NewNonRetryableApplicationError(msg+"; nothing was built or signed", ErrRejected, nil)
	}
	return nil
}

// checkValidator refuses a vote account the service does not report as active.
func (o *operation) checkValidator(ctx workflow.Context, vote string) error {
	o.setStep(ctx, StepCheckingValidator)
	actx := workflow.WithActivityOptions(ctx, validatorOptions())
	var res activities.ValidatorCheckResult
	return o.get(ctx, workflow.ExecuteActivity(actx, a.CheckValidator,
		activities.ValidatorCheckInput{Network: o.intent.Network, VoteAccount: vote}), &res)
}

// readStakeState reads a stake account and the epoch clock. Reads retry until the chain answers:
// a slow read shows in the Web UI as a pending activity with its last failure. A read the RPC
// refuses for good (ChainRejected) stalls an operation that has already landed a transaction,
// visibly, and fails one that has not.
func (o *operation) readStakeState(ctx workflow.Context) (activities.StakeState, error) {
	actx := workflow.WithActivityOptions(ctx, readOptions())
	stalls := func(err error) bool { return o.halfDone() && isErrorType(err, activities.ErrChainRejected) }
	return untilUnstalled(ctx, o, stalls, func() (activities.StakeState, error) {
		var st activities.StakeState
		err := o.get(ctx, workflow.ExecuteActivity(actx, a.ReadStakeState,
			activities.StakeStateInput{Network: o.intent.Network, StakeAccount: o.intent.StakeAccount}), &st)
		return st, err
	})
}

// untilUnstalled runs try until it succeeds or fails in a way stalls does not accept; each failure
// it accepts stalls the operation (see stall) before the next try. The stall record goes once the
// step gets past what stalled it.
func untilUnstalled[T any](ctx workflow.Context, o *operation, stalls func(error) bool, try func() (T, error)) (T, error) {
	for tries := 1; ; tries++ {
		v, err := try()
		if err == nil || !stalls(err) {
			o.status.Stall = nil
			return v, err
		}
		if serr := o.stall(ctx, tries, err); serr != nil {
			return v, serr
		}
	}
}

// halfDone reports whether a transaction of this operation has landed: failing now would leave the
// operation part done, so failures that may heal stall it instead.
func (o *operation) halfDone() bool { return len(o.status.Transactions) > 0 }

// stall records that the current step cannot go on for a reason that does not heal by retrying
// at once (an RPC or service refusing the worker), shows it (status, StakeflowStep = stalled, the
// Web UI's current details, a metric) and waits before the next try: 30 seconds, doubling, at most
// MaxStallWait. The step the operation was in is kept in the stall record and resumed after; the
// record stays, with its last failure, until the step gets past what stalled it.
func (o *operation) stall(ctx workflow.Context, tries int, cause error) error {
	step := o.status.Step
	if st := o.status.Stall; st != nil {
		step = st.Step
	}
	wait := min(30*time.Second<<min(tries-1, 10), o.opts.MaxStallWait)
	now := workflow.Now(ctx)
	since := now
	if st := o.status.Stall; st != nil {
		since = st.Since
	}
	o.logger.Warn("Operation stalled", "step", step, "tries", tries, "error", cause, "nextTry", wait)
	if o.status.Stall == nil {
		o.metrics.stalled()
	}
	o.setStep(ctx, StepStalled)
	o.status.Stall = &Stall{Step: step, Since: since, Tries: tries, LastError: cause.Error(), NextTryAt: now.Add(wait)}
	workflow.SetCurrentDetails(ctx, o.details())
	if err := workflow.Sleep(ctx, wait); err != nil {
		return err
	}
	o.setStep(ctx, step)
	return nil
}

// isErrorType reports whether err carries an application error of type typ.
func isErrorType(err error, typ string) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == typ
}

// transact runs one on-chain step exactly once: build, verify and sign, check that the transaction
// is new, broadcast, confirm.
//
// A transaction is re-sent only as the same signed bytes. A new one is built only when Confirm has
// proven the previous one cannot land (blockhash expired, signature absent, on an RPC proven to be
// the right cluster), at most MaxBuilds times. A cancel before the first broadcast ends the step
// with nothing sent; once a broadcast was started the step goes on, on a disconnected context,
// until the transaction's fate is known.
func (o *operation) transact(ctx workflow.Context, intent activities.Intent) (TxRecord, error) {
	for build := 1; ; build++ {
		if build > o.opts.MaxBuilds {
			return TxRecord{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s: %d transactions built, each expired before landing; none landed", intent.Operation, o.opts.MaxBuilds),
				ErrTooManyBuilds, nil)
		}
		if err := ctx.Err(); err != nil {
			return TxRecord{}, temporal.NewCanceledError("cancelled before broadcast; nothing was sent")
		}
		if build > 1 {
			o.metrics.rebuilt()
		}

		built, err := o.build(ctx, intent)
		if err != nil {
			return TxRecord{}, err
		}
		attempt := Attempt{Kind: intent.Operation, Build: build, BuiltAt: workflow.Now(ctx)}

		signIntent := intent
		if intent.Operation == activities.OpStake && intent.VoteAccount == "" {
			// The service chose the validator. Check it, then hold the signer to exactly that one.
			if built.VoteAccount == "" {
				return TxRecord{}, temporal.NewNonRetryableApplicationError(
					"the service did not name the vote account of the stake", activities.ErrVerificationFailed, nil)
			}
			if err := o.checkValidator(ctx, built.VoteAccount); err != nil {
				return TxRecord{}, err
			}
			signIntent.VoteAccount = built.VoteAccount
		}

		o.setStep(ctx, StepSigning)
		sctx := workflow.WithLocalActivityOptions(ctx, signOptions())
		var signed activities.SignResult
		if err := workflow.ExecuteLocalActivity(sctx, a.Sign,
			activities.SignInput{Intent: signIntent, UnsignedTransaction: built.UnsignedTransaction}).Get(ctx, &signed); err != nil {
			return TxRecord{}, err
		}
		attempt.Signature = signed.Signature
		attempt.RecentBlockhash = signed.RecentBlockhash
		attempt.MaxFeeLamports = signed.FeeLamports
		attempt.SignedAt = workflow.Now(ctx)
		o.status.Attempts = append(o.status.Attempts, attempt)
		current := &o.status.Attempts[len(o.status.Attempts)-1]
		if intent.Operation == activities.OpStake {
			o.setStakeAccount(signed.StakeAccount)
			o.status.VoteAccount = signed.VoteAccount
		}

		// The chain, not the service, says whether this transaction is new: a transaction served
		// again after it landed for an earlier operation would be "already processed" and pass for
		// this one's success.
		fctx := workflow.WithActivityOptions(ctx, freshOptions())
		fresh := activities.FreshInput{Network: intent.Network, Signature: signed.Signature}
		if intent.Operation == activities.OpStake {
			fresh.NewStakeAccount = signed.StakeAccount
		}
		var freshRes activities.FreshResult
		if err := o.get(ctx, workflow.ExecuteActivity(fctx, a.CheckFresh, fresh), &freshRes); err != nil {
			current.Outcome = "not-sent"
			current.Error = err.Error()
			return TxRecord{}, err
		}

		// Last point where a cancel ends the operation with nothing sent.
		if err := ctx.Err(); err != nil {
			current.Outcome = "not-sent"
			return TxRecord{}, temporal.NewCanceledError("cancelled before broadcast; the signed transaction was not sent")
		}
		// From here on the transaction may land: follow it to its end whatever happens to ctx.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		o.attrs.set(SASignatures.GetName(), SASignatures.ValueSet(o.signatures()))
		o.setStep(ctx, StepBroadcasting)
		current.BroadcastAt = workflow.Now(ctx)
		o.logger.Info("Broadcasting", "txSig", signed.Signature, "build", build)
		brctx := workflow.WithActivityOptions(dctx, broadcastOptions(o.opts))
		var sent activities.BroadcastResult
		berr := o.get(dctx, workflow.ExecuteActivity(brctx, a.Broadcast, activities.BroadcastInput{
			Intent: intent, Signature: signed.Signature, SignedTransaction: signed.SignedTransaction,
		}), &sent)
		if berr != nil {
			if isErrorType(berr, activities.ErrTransactionRejected) {
				// Refused at its first send: these bytes never reached the chain.
				current.Outcome = activities.OutcomeFailed
				current.Error = berr.Error()
				return TxRecord{}, berr
			}
			// Blockhash expired, retries exhausted, a refusal after an earlier send whose answer was
			// lost: the earlier send may have landed, so the chain decides below.
			o.logger.Warn("Broadcast did not succeed; checking the chain", "txSig", signed.Signature, "error", berr)
		}

		conf, err := o.confirm(ctx, dctx, activities.ConfirmInput{
			Network: intent.Network, Operation: intent.Operation, Signature: signed.Signature,
			RecentBlockhash: signed.RecentBlockhash, PollInterval: o.opts.ConfirmPollInterval,
		})
		if err != nil {
			return TxRecord{}, err
		}
		o.metrics.confirmed(conf.Outcome)
		current.Outcome = conf.Outcome
		current.Slot = conf.Slot
		current.FeeLamports = conf.Fee
		current.ConfirmedAt = workflow.Now(ctx)
		switch conf.Outcome {
		case activities.OutcomeFinalized:
			rec := TxRecord{Kind: intent.Operation, Signature: signed.Signature, Slot: conf.Slot, Builds: build,
				FeeLamports: conf.Fee, FinalizedAt: current.ConfirmedAt}
			o.status.Transactions = append(o.status.Transactions, rec)
			o.logger.Info("Transaction finalized", "txSig", signed.Signature, "slot", conf.Slot, "feeLamports", conf.Fee)
			if ctx.Err() != nil {
				o.status.CancelRequested = true
			}
			return rec, nil
		case activities.OutcomeFailed:
			current.Error = conf.Error
			return TxRecord{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s transaction %s failed on chain (finalized, fee %d lamports paid): %s", intent.Operation, signed.Signature, conf.Fee, conf.Error),
				ErrTransactionFailed, nil)
		case activities.OutcomeExpired:
			o.logger.Warn("Transaction expired without landing", "txSig", signed.Signature, "build", build)
			if ctx.Err() != nil {
				// Proven not to land, and a cancel is pending: stop with nothing done.
				return TxRecord{}, temporal.NewCanceledError("cancelled; the transaction sent expired without landing")
			}
		default:
			return TxRecord{}, fmt.Errorf("unknown confirmation outcome %q", conf.Outcome)
		}
	}
}

// build asks the service for the unsigned transaction. While the service fails (unavailable, rate
// limited, refusing the worker's token), an operation that has already landed a transaction stalls
// visibly and tries again rather than fail half done; one that has not fails after BuildTimeout
// with nothing sent.
func (o *operation) build(ctx workflow.Context, intent activities.Intent) (activities.BuildResult, error) {
	bctx := workflow.WithActivityOptions(ctx, buildOptions(o.opts))
	stalls := func(err error) bool { return o.halfDone() && mayHeal(err) }
	return untilUnstalled(ctx, o, stalls, func() (activities.BuildResult, error) {
		o.setStep(ctx, StepBuilding)
		var built activities.BuildResult
		err := o.get(ctx, workflow.ExecuteActivity(bctx, a.Build, intent), &built)
		return built, err
	})
}

// mayHeal reports whether an activity's failure may go away without anyone changing the request:
// the service or chain unavailable, rate limited or refusing the worker's credentials, or a
// timeout of the retries.
func mayHeal(err error) bool {
	if temporal.IsCanceledError(err) {
		return false
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return true
	}
	for _, t := range []string{activities.ErrServiceUnavailable, activities.ErrRateLimited, activities.ErrServiceUnauthorized,
		activities.ErrChainUnavailable, activities.ErrChainRejected} {
		if isErrorType(err, t) {
			return true
		}
	}
	return false
}

// confirm follows a sent transaction until Confirm says where it ended. An RPC that refuses the
// worker for good (ChainRejected) does not end the operation: the transaction may land whatever
// the worker's RPC says, so the step stalls visibly and confirms again.
func (o *operation) confirm(ctx, dctx workflow.Context, in activities.ConfirmInput) (activities.ConfirmResult, error) {
	cctx := workflow.WithActivityOptions(dctx, confirmOptions())
	stalls := func(err error) bool { return isErrorType(err, activities.ErrChainRejected) }
	// The stall's wait runs on dctx: a cancel does not stop following a sent transaction.
	return untilUnstalled(dctx, o, stalls, func() (activities.ConfirmResult, error) {
		o.setStep(ctx, StepConfirming)
		confirmed := workflow.ExecuteActivity(cctx, a.Confirm, in)
		// Confirming is where a sent transaction rests: its step and signature become searchable.
		o.flush(dctx)
		var conf activities.ConfirmResult
		err := o.get(dctx, confirmed, &conf)
		return conf, err
	})
}

// signatures lists every signature this operation has sent or may have sent.
func (o *operation) signatures() []string {
	out := make([]string, 0, len(o.status.Attempts))
	for _, at := range o.status.Attempts {
		if at.Signature != "" {
			out = append(out, at.Signature)
		}
	}
	return out
}

// waitInactive waits until the stake account is fully inactive, with durable timers sized from
// the slots left in the current epoch (capped at MaxEpochWait), re-reading the account after each.
func (o *operation) waitInactive(ctx workflow.Context) (activities.StakeState, error) {
	for {
		st, err := o.readStakeState(ctx)
		if err != nil {
			return st, err
		}
		switch st.State {
		case activities.StakeInactive, activities.StakeInitialized:
			o.status.WaitingUntil = time.Time{}
			return st, nil
		case activities.StakeDeactivating:
		default:
			return st, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("stake account %s is %s, not deactivating: unstake it first", st.StakeAccount, st.State),
				activities.ErrStakeAccountState, nil)
		}
		left := st.SlotsInEpoch - st.SlotIndex
		if st.SlotIndex >= st.SlotsInEpoch {
			left = 1
		}
		slot := o.opts.SlotDuration
		if st.SlotDuration > 0 {
			slot = st.SlotDuration
		}
		wait := time.Duration(left+1) * slot
		limit := o.opts.MaxEpochWait
		if st.RecheckAfter > 0 {
			limit = min(limit, st.RecheckAfter)
		}
		wait = min(max(wait, time.Second), limit)
		o.status.WaitingUntil = workflow.Now(ctx).Add(wait)
		o.setStep(ctx, StepWaitingDeactivation)
		o.logger.Info("Waiting for deactivation", "stakeAccount", st.StakeAccount, "epoch", st.Epoch,
			"deactivationEpoch", st.DeactivationEpoch, "wait", wait)
		o.flush(ctx)
		if err := workflow.Sleep(ctx, wait); err != nil {
			return st, temporal.NewCanceledError("cancelled while waiting for deactivation; withdraw was not sent")
		}
	}
}
