package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/internal/metrics"
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
	metrics metrics.Operation
	// decided is set once an approve or reject update was accepted, or the approval timed out.
	decided bool
	// attributes is how search-attribute changes reach visibility (versionSearchAttributes): at
	// once, once per workflow task, or only where the operation rests. Queued changes wait in
	// pending until the next flush.
	attributes workflow.Version
	pending    []pendingAttribute
	// shown is the StakeflowStep value last sent (or set at start).
	shown string
}

// pendingAttribute is a search-attribute update waiting for the next flush.
type pendingAttribute struct {
	name   string
	update temporal.SearchAttributeUpdate
}

// versionSearchAttributes guards how search-attribute changes are sent. Each upsert is a history
// event and a visibility write, the largest cost an operation adds to the Temporal server.
const versionSearchAttributes = "coalesced-search-attributes"

const (
	// attributesPerChange upserts every change at once (histories from before the versioned change).
	attributesPerChange = workflow.DefaultVersion
	// attributesPerTask queues changes and sends them as one upsert before each wait.
	attributesPerTask workflow.Version = 1
	// attributesAtRest queues changes and sends them only where an operation can rest (awaiting
	// approval, confirming a sent transaction, waiting for deactivation), when it leaves one, and
	// at its end: StakeflowStep never names a resting step the operation has left. Steps in
	// between (checking the validator, building, signing, broadcasting) take milliseconds when the
	// service answers; when it does not, the Web UI shows the pending activity with its last
	// failure, and the status query and current details always carry the exact step.
	attributesAtRest workflow.Version = 2
)

// setup validates nothing itself (callers validate their input first), records the intent,
// registers the query and update handlers and tags the workflow with its search attributes.
func newOperation(ctx workflow.Context, intent activities.Intent, opts Options) (*operation, error) {
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
			StartedAt:    workflow.Now(ctx),
			Attempts:     []Attempt{},
			Transactions: []TxRecord{},
		},
	}
	o.logger = log.With(workflow.GetLogger(ctx),
		"operationId", info.WorkflowExecution.ID, "runId", info.WorkflowExecution.RunID,
		"operation", string(intent.Operation), "staker", intent.Staker, "network", intent.Network)
	o.metrics = metrics.ForOperation(workflow.GetMetricsHandler(ctx), intent.Chain, intent.Network, string(intent.Operation))
	o.attributes = workflow.GetVersion(ctx, versionSearchAttributes, attributesPerChange, attributesAtRest)

	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return o.status, nil }); err != nil {
		return nil, err
	}
	for _, name := range []string{UpdateApprove, UpdateReject} {
		decision := "approved"
		if name == UpdateReject {
			decision = "rejected"
		}
		err := workflow.SetUpdateHandlerWithOptions(ctx, name,
			func(ctx workflow.Context, in ApprovalInput) (Status, error) {
				o.decided = true
				o.status.Approval.Decision = decision
				o.status.Approval.Approver = in.Approver
				o.status.Approval.Reason = in.Reason
				o.status.Approval.At = workflow.Now(ctx)
				o.logger.Info("Approval decision", "decision", decision, "approver", in.Approver)
				return o.status, nil
			},
			workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, in ApprovalInput) error {
				if in.Approver == "" {
					return errors.New("approver is required")
				}
				if o.decided {
					return fmt.Errorf("operation was already %s by %s", o.status.Approval.Decision, o.status.Approval.Approver)
				}
				if o.status.Step != StepValidating && o.status.Step != StepAwaitingApproval {
					return fmt.Errorf("operation is not awaiting approval (step: %s)", o.status.Step)
				}
				return nil
			}})
		if err != nil {
			return nil, err
		}
	}
	startedWithout := false
	if o.attributes != attributesPerChange {
		// Attributes the starter already set at start need no upsert.
		start := workflow.GetTypedSearchAttributes(ctx)
		for _, kw := range []struct {
			key   temporal.SearchAttributeKeyKeyword
			value string
		}{{SAChain, intent.Chain}, {SANetwork, intent.Network}, {SAOperation, string(intent.Operation)}, {SAStaker, intent.Staker}} {
			if v, ok := start.GetKeyword(kw.key); !ok || v != kw.value {
				o.set(ctx, kw.key.GetName(), kw.key.ValueSet(kw.value))
				// What the operation is and whose: without these it cannot be found.
				startedWithout = true
			}
		}
		if v, ok := start.GetInt64(SAAmount); !ok || v != int64(intent.Lamports) {
			o.setAmount(ctx, intent.Lamports)
		}
		if v, ok := start.GetKeyword(SAStakeAccount); intent.StakeAccount != "" && (!ok || v != intent.StakeAccount) {
			o.set(ctx, SAStakeAccount.GetName(), SAStakeAccount.ValueSet(intent.StakeAccount))
		}
		o.shown, _ = start.GetKeyword(SAStep)
	} else {
		o.upsert(ctx,
			SAChain.ValueSet(intent.Chain), SANetwork.ValueSet(intent.Network),
			SAOperation.ValueSet(string(intent.Operation)), SAStaker.ValueSet(intent.Staker))
		o.setAmount(ctx, intent.Lamports)
		if intent.StakeAccount != "" {
			o.upsert(ctx, SAStakeAccount.ValueSet(intent.StakeAccount))
		}
	}
	o.setStep(ctx, StepValidating)
	if startedWithout && o.attributes == attributesAtRest {
		// Started without its attributes (not through StartOptions): make it findable at once.
		o.flush(ctx)
	}
	o.metrics.Started()
	return o, nil
}

func (o *operation) upsert(ctx workflow.Context, updates ...temporal.SearchAttributeUpdate) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		o.logger.Warn("Search attributes not updated", "error", err)
	}
}

// set records a search-attribute update: queued until the next flush, or (histories from before
// coalescing) sent at once.
func (o *operation) set(ctx workflow.Context, name string, update temporal.SearchAttributeUpdate) {
	if o.attributes == attributesPerChange {
		o.upsert(ctx, update)
		return
	}
	for i := range o.pending {
		if o.pending[i].name == name {
			o.pending[i].update = update
			return
		}
	}
	o.pending = append(o.pending, pendingAttribute{name: name, update: update})
}

// unset drops a queued update of the named attribute.
func (o *operation) unset(name string) {
	o.pending = slices.DeleteFunc(o.pending, func(p pendingAttribute) bool { return p.name == name })
}

// flush sends the queued search-attribute updates as one upsert. It runs where the operation
// rests (an approval wait, a confirmation, a deactivation wait) and when it ends; in histories
// from before attributesAtRest also before every other wait (see get).
func (o *operation) flush(ctx workflow.Context) {
	if len(o.pending) == 0 {
		return
	}
	updates := make([]temporal.SearchAttributeUpdate, len(o.pending))
	for i, p := range o.pending {
		updates[i] = p.update
		if p.name == SAStep.GetName() {
			o.shown = o.status.Step
		}
	}
	o.pending = o.pending[:0]
	o.upsert(ctx, updates...)
}

// get waits for f. It flushes the queued search attributes first when the operation has just
// left a resting step (and, in histories from before attributesAtRest, always).
func (o *operation) get(ctx workflow.Context, f workflow.Future, v any) error {
	if o.attributes == attributesPerTask || (o.attributes == attributesAtRest && o.leftRest()) {
		o.flush(ctx)
	}
	return f.Get(ctx, v)
}

// leftRest reports whether StakeflowStep still names a resting step the operation has left.
func (o *operation) leftRest() bool {
	switch o.shown {
	case StepAwaitingApproval, StepConfirming, StepWaitingDeactivation:
		return o.status.Step != o.shown
	}
	return false
}

func (o *operation) setAmount(ctx workflow.Context, lamports uint64) {
	o.intent.Lamports = lamports
	o.status.Lamports = lamports
	if lamports > 0 && lamports <= maxLamports {
		o.set(ctx, SAAmount.GetName(), SAAmount.ValueSet(int64(lamports)))
	}
}

func (o *operation) setStakeAccount(ctx workflow.Context, addr string) {
	if addr == "" || addr == o.status.StakeAccount {
		return
	}
	o.intent.StakeAccount = addr
	o.status.StakeAccount = addr
	o.set(ctx, SAStakeAccount.GetName(), SAStakeAccount.ValueSet(addr))
}

// setStep records the step in the status, the StakeflowStep search attribute and the workflow's
// current details shown by the Web UI.
func (o *operation) setStep(ctx workflow.Context, step string) {
	o.status.Step = step
	o.status.StepSince = workflow.Now(ctx)
	if o.attributes == attributesAtRest && step == o.shown {
		// Visibility shows it already (a wait re-entered, say): nothing to send.
		o.unset(SAStep.GetName())
	} else {
		o.set(ctx, SAStep.GetName(), SAStep.ValueSet(step))
	}
	workflow.SetCurrentDetails(ctx, o.details())
	if step == StepDone || step == StepFailed || step == StepCancelled {
		o.flush(ctx)
	}
	if step == StepDone {
		// Every workflow ends a successful operation by stepping to done, exactly once.
		o.metrics.Completed()
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
	for _, t := range o.status.Transactions {
		s += fmt.Sprintf("\n\n%s: %s (slot %d)", t.Kind, t.Signature, t.Slot)
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
	if o.status.Error != "" {
		s += "\n\nerror: " + o.status.Error
	}
	return s
}

// fail records err as the operation's end and returns it.
func (o *operation) fail(ctx workflow.Context, err error) error {
	o.metrics.Failed(err)
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
	return Result{
		Operation:       o.intent.Operation,
		Network:         o.intent.Network,
		Staker:          o.intent.Staker,
		Lamports:        o.status.Lamports,
		StakeAccount:    o.status.StakeAccount,
		VoteAccount:     o.status.VoteAccount,
		Transactions:    o.status.Transactions,
		CancelRequested: o.status.CancelRequested,
	}
}

// checkPolicy applies the worker's policy and, when it asks for one, waits for an approval
// decision. It runs before anything is built: blockhashes expire, so a transaction built before
// a long approval wait could not land.
func (o *operation) checkPolicy(ctx workflow.Context) error {
	lctx := workflow.WithLocalActivityOptions(ctx, policyOptions())
	var decision activities.PolicyDecision
	if err := workflow.ExecuteLocalActivity(lctx, a.CheckPolicy, o.intent).Get(ctx, &decision); err != nil {
		return err
	}
	o.status.Approval.Required = decision.ApprovalRequired
	o.status.Approval.Threshold = decision.ApprovalThreshold
	if !decision.ApprovalRequired && o.status.Approval.Decision != "rejected" {
		// A rejection sent before the policy was known still stops the operation.
		return nil
	}
	if !o.decided {
		o.setStep(ctx, StepAwaitingApproval)
		o.logger.Info("Awaiting approval", "threshold", decision.ApprovalThreshold, "timeout", o.opts.ApprovalTimeout)
		o.flush(ctx)
		ok, err := workflow.AwaitWithTimeout(ctx, o.opts.ApprovalTimeout, func() bool { return o.decided })
		if err != nil {
			return err
		}
		if !ok {
			o.decided = true
			o.status.Approval.Decision = "timed-out"
			o.status.Approval.At = workflow.Now(ctx)
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("no approval within %s; nothing was built or signed", o.opts.ApprovalTimeout), ErrApprovalTimeout, nil)
		}
	}
	if o.status.Approval.Decision == "rejected" {
		msg := fmt.Sprintf("rejected by %s", o.status.Approval.Approver)
		if o.status.Approval.Reason != "" {
			msg += ": " + o.status.Approval.Reason
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
// a stalled read shows in the Web UI as a pending activity with its last failure.
func (o *operation) readStakeState(ctx workflow.Context) (activities.StakeState, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	})
	var st activities.StakeState
	err := o.get(ctx, workflow.ExecuteActivity(actx, a.ReadStakeState,
		activities.StakeStateInput{Network: o.intent.Network, StakeAccount: o.intent.StakeAccount}), &st)
	return st, err
}

// transact runs one on-chain step exactly once: build, verify and sign, broadcast, confirm.
//
// A transaction is re-sent only as the same signed bytes. A new one is built only when Confirm has
// proven the previous one cannot land (blockhash expired, signature absent), at most MaxBuilds
// times. A cancel before the first broadcast ends the step with nothing sent; once a broadcast was
// started the step goes on, on a disconnected context, until the transaction's fate is known.
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
			o.metrics.Rebuilt()
		}

		o.setStep(ctx, StepBuilding)
		bctx := workflow.WithActivityOptions(ctx, buildOptions(o.opts))
		var built activities.BuildResult
		if err := o.get(ctx, workflow.ExecuteActivity(bctx, a.Build, intent), &built); err != nil {
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
		attempt.SignedAt = workflow.Now(ctx)
		o.status.Attempts = append(o.status.Attempts, attempt)
		current := &o.status.Attempts[len(o.status.Attempts)-1]
		if intent.Operation == activities.OpStake {
			o.setStakeAccount(ctx, signed.StakeAccount)
			o.status.VoteAccount = signed.VoteAccount
		}

		// Last point where a cancel ends the operation with nothing sent.
		if err := ctx.Err(); err != nil {
			current.Outcome = "not-sent"
			return TxRecord{}, temporal.NewCanceledError("cancelled before broadcast; the signed transaction was not sent")
		}
		// From here on the transaction may land: follow it to its end whatever happens to ctx.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		o.set(ctx, SASignatures.GetName(), SASignatures.ValueSet(o.signatures()))
		o.setStep(ctx, StepBroadcasting)
		current.BroadcastAt = workflow.Now(ctx)
		o.logger.Info("Broadcasting", "txSig", signed.Signature, "build", build)
		brctx := workflow.WithActivityOptions(dctx, broadcastOptions(o.opts))
		var sent activities.BroadcastResult
		berr := o.get(dctx, workflow.ExecuteActivity(brctx, a.Broadcast, activities.BroadcastInput{
			Intent: intent, Signature: signed.Signature, SignedTransaction: signed.SignedTransaction,
		}), &sent)
		if berr != nil {
			var appErr *temporal.ApplicationError
			if errors.As(berr, &appErr) && appErr.Type() == activities.ErrTransactionRejected {
				current.Outcome = activities.OutcomeFailed
				current.Error = appErr.Error()
				return TxRecord{}, berr
			}
			// Blockhash expired, retries exhausted, or the answer was lost: the chain decides below.
			o.logger.Warn("Broadcast did not succeed; checking the chain", "txSig", signed.Signature, "error", berr)
		}

		o.setStep(ctx, StepConfirming)
		cctx := workflow.WithActivityOptions(dctx, confirmOptions())
		var conf activities.ConfirmResult
		confirmed := workflow.ExecuteActivity(cctx, a.Confirm, activities.ConfirmInput{
			Network: intent.Network, Signature: signed.Signature, RecentBlockhash: signed.RecentBlockhash,
			PollInterval: o.opts.ConfirmPollInterval,
		})
		// Confirming is where a sent transaction rests: its step and signature become searchable.
		o.flush(dctx)
		if err := o.get(dctx, confirmed, &conf); err != nil {
			return TxRecord{}, err
		}
		o.metrics.Confirmed(conf.Outcome)
		current.Outcome = conf.Outcome
		current.Slot = conf.Slot
		current.ConfirmedAt = workflow.Now(ctx)
		switch conf.Outcome {
		case activities.OutcomeFinalized:
			rec := TxRecord{Kind: intent.Operation, Signature: signed.Signature, Slot: conf.Slot, Builds: build, FinalizedAt: current.ConfirmedAt}
			o.status.Transactions = append(o.status.Transactions, rec)
			o.logger.Info("Transaction finalized", "txSig", signed.Signature, "slot", conf.Slot)
			if ctx.Err() != nil {
				o.status.CancelRequested = true
			}
			return rec, nil
		case activities.OutcomeFailed:
			current.Error = conf.Error
			return TxRecord{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s transaction %s failed on chain: %s", intent.Operation, signed.Signature, conf.Error),
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
