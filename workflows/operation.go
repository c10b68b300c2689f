package workflows

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/approval"
)

// Setup is what a chain's workflow tells the core about a new operation.
type Setup struct {
	Chain     string
	Network   string
	Operation string
	Staker    string
	// Amount in Unit, the chain's base unit (lamports, wei, utia); empty when the chain tells it
	// later (SetAmount).
	Amount string
	Unit   string
	// Validator and Account as Status names them; either may be empty.
	Validator string
	Account   string
	// RequestedBy names who started the operation; that identity cannot approve it.
	RequestedBy string
	Options     Options
	// Waits are the chain's own steps where an operation rests for long (a Solana stake account's
	// deactivation, a Polygon withdrawal delay): StakeflowStep records them.
	Waits []string
	// Labels name the chain's things in the Web UI's current details.
	Labels Labels
	// FormatAmount renders an amount of Unit for people ("2 SOL"); nil shows it with its unit.
	FormatAmount func(amount string) string
	// Continued is what the operation's previous run carried over when it continued as new;
	// nil for a first run. A continued run is not counted as a new operation started.
	Continued *Continued
}

// Labels name a chain's things in the Web UI's current details ("vote account", "slot").
type Labels struct {
	Validator string
	Account   string
	Block     string
}

// Operation is what every operation keeps, whatever its chain: what was asked, where it stands,
// its approval gate and the handlers that expose it (status query, approve and reject updates),
// its search attributes and metrics. A chain's workflow creates one with NewOperation and drives
// its transaction steps through Transact.
type Operation struct {
	setup  Setup
	opts   Options
	status Status
	logger log.Logger
	// metrics records the operation's life; replays record nothing.
	metrics opMetrics
	// policyKnown is set once CheckPolicy answered; approvalsRequired is then its count (0, 1, 2).
	policyKnown       bool
	approvalsRequired int
	// approvers are the policy's configured approvers: with any, decisions must be signed by one.
	approvers []approval.Approver
	// initiatorKey is the key that signed the start (nil: the start was not signed); startErr why
	// a signed start did not verify (the operation then fails before its policy is checked).
	initiatorKey []byte
	startErr     error
	// attrs batches search-attribute changes (see visibility).
	attrs visibility
	// notifyOn is set when the worker posts events (notifySetup); notified counts them by type.
	notifyOn bool
	notified map[string]int
}

// NewOperation records the operation, registers the query and update handlers and tags the
// workflow with its search attributes. Callers validate their input first.
func NewOperation(ctx workflow.Context, s Setup) (*Operation, error) {
	info := workflow.GetInfo(ctx)
	o := &Operation{
		setup: s,
		opts:  s.Options.WithDefaults(),
		status: Status{
			OperationID: info.WorkflowExecution.ID,
			Operation:   s.Operation,
			Chain:       s.Chain,
			Network:     s.Network,
			Staker:      s.Staker,
			Amount:      s.Amount,
			Unit:        s.Unit,
			Validator:   s.Validator,
			Account:     s.Account,
			RequestedBy: s.RequestedBy,
			IntentDigest: approval.Intent{
				OperationID: info.WorkflowExecution.ID, Chain: s.Chain, Network: s.Network, Operation: s.Operation,
				Staker: s.Staker, Amount: s.Amount, Unit: s.Unit, Validator: s.Validator, Account: s.Account,
			}.Digest(),
			StartedAt:    workflow.Now(ctx),
			Approval:     Approval{Decisions: []ApprovalRecord{}},
			Attempts:     []Attempt{},
			Transactions: []TxRecord{},
		},
	}
	if c := s.Continued; c != nil {
		o.status.StartedAt = c.StartedAt
		o.status.Transactions = append(o.status.Transactions, c.Transactions...)
	}
	o.notified = map[string]int{}
	o.readStart(info, dataConverter(ctx))
	o.logger = log.With(workflow.GetLogger(ctx),
		"operationId", info.WorkflowExecution.ID, "runId", info.WorkflowExecution.RunID,
		"operation", s.Operation, "staker", s.Staker, "network", s.Network)
	o.attrs.logger = o.logger
	o.attrs.tagger = operationTagger(ctx)
	o.attrs.resting = append(append([]string{}, restingSteps...), s.Waits...)
	o.metrics = newOpMetrics(ctx, s.Chain, s.Network, s.Operation)

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
				// The validator accepted this input against the same approvers: no error here.
				signer, _ := o.signer(in)
				o.decide(ctx, decision, in, signer)
				return o.status, nil
			},
			workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, in ApprovalInput) error {
				_, err := o.validateDecision(ctx, decision, in)
				return err
			}})
		if err != nil {
			return nil, err
		}
	}
	// Attributes the starter already set at start need no upsert. One the starter left out is
	// upserted at once; one it wrote otherwise (a tag under another search key) is corrected in the
	// next upsert. Whether to upsert at once depends on what the start holds, never on this worker's
	// search key: the operation replays the same on a worker given another one.
	startedWithout := false
	start := workflow.GetTypedSearchAttributes(ctx)
	for _, kw := range []struct {
		key   temporal.SearchAttributeKeyKeyword
		value string
	}{{SAChain, s.Chain}, {SANetwork, s.Network}, {SAOperation, s.Operation}, {SAStaker, s.Staker}} {
		want, shown := o.attrs.keyword(kw.key, kw.value)
		if !shown {
			continue
		}
		switch v, ok := start.GetKeyword(kw.key); {
		case !ok:
			// What the operation is and whose: without these it cannot be found.
			startedWithout = true
		case v != want:
			o.logger.Warn("A search attribute set at start differs from this worker's: the starter and the worker do not share a search key (docs/encryption.md)",
				"attribute", kw.key.GetName())
		default:
			continue
		}
		o.attrs.set(kw.key.GetName(), kw.key.ValueSet(kw.value))
	}
	if n, ok := AmountAttribute(s.Amount); ok {
		if v, set := start.GetInt64(SAAmount); !set || v != n {
			o.attrs.set(SAAmount.GetName(), SAAmount.ValueSet(n))
		}
	}
	if want, shown := o.attrs.keyword(SAStakeAccount, s.Account); s.Account != "" && shown {
		if v, ok := start.GetKeyword(SAStakeAccount); !ok || v != want {
			o.attrs.set(SAStakeAccount.GetName(), SAStakeAccount.ValueSet(s.Account))
		}
	}
	o.attrs.shown, _ = start.GetKeyword(SAStep)
	o.SetStep(ctx, StepValidating)
	if startedWithout {
		// Started without its attributes (not through the starter): make it findable at once.
		o.Flush(ctx)
	}
	if s.Continued == nil {
		o.metrics.started()
	}
	o.notifySetup(ctx)
	return o, nil
}

// Continue is what the operation's next run needs of this one's status (Setup.Continued) when it
// continues as new: when it started and the transactions that landed. Attempts stay behind: each
// landed one is in Transactions.
func (o *Operation) Continue() *Continued {
	return &Continued{StartedAt: o.status.StartedAt, Transactions: append([]TxRecord{}, o.status.Transactions...)}
}

// AmountAttribute is the StakeflowAmount value of an amount: the amount when it is a positive
// whole number that fits an int64.
func AmountAttribute(amount string) (int64, bool) {
	n, err := strconv.ParseInt(amount, 10, 64)
	return n, err == nil && n > 0
}

// Status is where the operation stands; a chain's workflow records its own findings in it
// (WaitingUntil, say).
func (o *Operation) Status() *Status { return &o.status }

// Logger logs with the operation's IDs.
func (o *Operation) Logger() log.Logger { return o.logger }

// Options are the operation's options with their defaults filled in.
func (o *Operation) Options() Options { return o.opts }

// MemoStart is the memo field holding the signed start statement (approval.Signed of an
// approval.Start) when the starter signed the start.
const MemoStart = "stakeflowStart"

// StatementSkew is how far a statement's time may lie after the workflow's clock, or before the
// operation's start: the clocks of an approver's machine and the server differ a little.
const StatementSkew = 5 * time.Minute

// PolicyPending starts the refusal of a decision sent before the operation's policy answered:
// until then the workflow cannot tell whether decisions must be signed. Try again.
const PolicyPending = "the operation's policy is not known yet"

// readStart reads the signed start statement from the memo, when there is one: a valid one names
// the initiator's key, an invalid one fails the operation before its policy (startErr).
func (o *Operation) readStart(info *workflow.Info, dc converter.DataConverter) {
	p, ok := info.Memo.GetFields()[MemoStart]
	if !ok {
		return
	}
	bad := func(reason string) { o.startErr = &InputError{Field: "signed start", Reason: reason} }
	var signed approval.Signed
	if err := dc.FromPayload(p, &signed); err != nil {
		bad("the memo " + MemoStart + " cannot be read")
		return
	}
	pub, err := signed.Verify()
	if err != nil {
		bad(err.Error())
		return
	}
	st, err := approval.ParseStart(signed.Statement)
	if err != nil {
		bad(err.Error())
		return
	}
	switch {
	case st.OperationID != info.WorkflowExecution.ID:
		bad(fmt.Sprintf("it names operation %q, not %q", st.OperationID, info.WorkflowExecution.ID))
	case st.Chain != o.setup.Chain || st.Operation != o.setup.Operation || st.Staker != o.setup.Staker:
		bad(fmt.Sprintf("it names %s %s of %s, not %s %s of %s", st.Chain, st.Operation, st.Staker, o.setup.Chain, o.setup.Operation, o.setup.Staker))
	default:
		o.initiatorKey = pub
		o.status.InitiatorFingerprint = approval.Fingerprint(pub)
	}
}

// signer is the configured approver whose key signed the decision in signed mode (nil in named
// mode), or why the decision's signature or key cannot count. Before the policy answered (only a
// rejection is taken then) a signed decision is named by its key, whose signature must verify:
// whether the key is an approver's cannot be known yet.
func (o *Operation) signer(in ApprovalInput) (*approval.Approver, error) {
	if !o.policyKnown {
		if in.Statement == "" && in.PublicKey == "" && in.Signature == "" {
			return nil, nil
		}
		pub, err := approval.Signed{Statement: in.Statement, PublicKey: in.PublicKey, Signature: in.Signature}.Verify()
		if err != nil {
			return nil, err
		}
		fp := approval.Fingerprint(pub)
		return &approval.Approver{Name: fp, PublicKey: pub, Fingerprint: fp}, nil
	}
	if len(o.approvers) == 0 {
		return nil, nil
	}
	if in.Statement == "" || in.PublicKey == "" || in.Signature == "" {
		return nil, errors.New("this worker takes only signed decisions (its approvers are configured): " +
			"sign the statement with starter approve|reject --key FILE or --ssh-agent")
	}
	signed := approval.Signed{Statement: in.Statement, PublicKey: in.PublicKey, Signature: in.Signature}
	pub, err := signed.Key()
	if err != nil {
		return nil, err
	}
	var who *approval.Approver
	for i := range o.approvers {
		if bytes.Equal(o.approvers[i].PublicKey, pub) {
			who = &o.approvers[i]
		}
	}
	if who == nil {
		return nil, fmt.Errorf("key %s is not one of the worker's approvers", approval.Fingerprint(pub))
	}
	if _, err := signed.Verify(); err != nil {
		return nil, err
	}
	return who, nil
}

// validateDecision refuses an approve or reject update that cannot count: an approval sent
// before the policy answered (until then the workflow cannot tell whether it must be signed; a
// rejection is taken, as it can only stop the operation); in signed mode one not signed by a configured approver's key over a statement
// for this operation, this decision, this intent and a time since its start; the initiator (by
// key when the start was signed, else by name); an approver (key) who already decided; or an
// operation past its approval gate. It returns the signing approver in signed mode.
func (o *Operation) validateDecision(ctx workflow.Context, decision string, in ApprovalInput) (*approval.Approver, error) {
	if !o.policyKnown && o.status.Step != StepValidating {
		// An operation that asks no policy (a chain without approvals) never awaits one.
		return nil, fmt.Errorf("operation is not awaiting approval (step: %s)", o.status.Step)
	}
	if !o.policyKnown && decision == DecisionApproved {
		// A rejection is taken: it can only stop the operation, as a cancel can.
		return nil, errors.New(PolicyPending + " (it decides whether approvals must be signed): try again in a moment")
	}
	who, err := o.signer(in)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(in.Approver)
	if who != nil {
		name = who.Name
		if err := o.checkStatement(ctx, decision, in.Statement); err != nil {
			return nil, err
		}
		if o.initiatorKey != nil && bytes.Equal(o.initiatorKey, who.PublicKey) {
			return nil, fmt.Errorf("key %s signed the start of this operation and cannot also approve or reject it: another person must decide", who.Fingerprint)
		}
	}
	if name == "" {
		return nil, errors.New("approver is required")
	}
	if o.initiatorKey == nil && o.status.RequestedBy != "" && strings.EqualFold(name, o.status.RequestedBy) {
		return nil, fmt.Errorf("%s started this operation and cannot also approve or reject it: another person must decide", name)
	}
	if o.decided() {
		return nil, fmt.Errorf("operation was already %s", o.status.Approval.Decision)
	}
	for _, d := range o.status.Approval.Decisions {
		if who != nil && d.Fingerprint == who.Fingerprint {
			return nil, fmt.Errorf("key %s (%s) already %s this operation at %s; a second approval must come from another approver's key",
				d.Fingerprint, d.Approver, d.Decision, d.At.UTC().Format(time.RFC3339))
		}
		if who == nil && strings.EqualFold(d.Approver, name) {
			return nil, fmt.Errorf("%s already %s this operation at %s; a second approval must come from someone else",
				d.Approver, d.Decision, d.At.UTC().Format(time.RFC3339))
		}
	}
	if o.status.Step != StepValidating && o.status.Step != StepAwaitingApproval {
		return nil, fmt.Errorf("operation is not awaiting approval (step: %s)", o.status.Step)
	}
	return who, nil
}

// checkStatement refuses a signed statement that is not for this operation, this decision, this
// intent, or whose time lies too far ahead of the workflow's clock or before the operation began.
func (o *Operation) checkStatement(ctx workflow.Context, decision, text string) error {
	st, err := approval.ParseStatement(text)
	if err != nil {
		return err
	}
	want := approval.Approve
	if decision == DecisionRejected {
		want = approval.Reject
	}
	switch now := workflow.Now(ctx); {
	case st.OperationID != o.status.OperationID:
		return fmt.Errorf("the statement is for operation %q, not %q", st.OperationID, o.status.OperationID)
	case st.Decision != want:
		return fmt.Errorf("the statement says %s, but this update is %s", st.Decision, want)
	case st.Intent != o.status.IntentDigest:
		return fmt.Errorf("the statement signs intent %s, but this operation's intent is %s: read the status again", st.Intent, o.status.IntentDigest)
	case st.At.After(now.Add(StatementSkew)):
		return fmt.Errorf("the statement is dated %s, more than %s after the workflow's clock (%s)",
			st.At.UTC().Format(time.RFC3339), StatementSkew, now.UTC().Format(time.RFC3339))
	case st.At.Before(o.status.StartedAt.Add(-StatementSkew)):
		return fmt.Errorf("the statement is dated %s, before the operation started (%s)",
			st.At.UTC().Format(time.RFC3339), o.status.StartedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// decide records an accepted approve or reject decision; signer is the configured approver who
// signed it (nil in named mode).
func (o *Operation) decide(ctx workflow.Context, decision string, in ApprovalInput, signer *approval.Approver) {
	rec := ApprovalRecord{Approver: strings.TrimSpace(in.Approver), Decision: decision, Reason: in.Reason, At: workflow.Now(ctx)}
	if signer != nil {
		rec.Approver, rec.Fingerprint = signer.Name, signer.Fingerprint
	}
	ap := &o.status.Approval
	ap.Decisions = append(ap.Decisions, rec)
	ap.Approver, ap.Reason, ap.At = rec.Approver, rec.Reason, rec.At
	switch {
	case decision == DecisionRejected:
		ap.Decision = DecisionRejected
	case o.policyKnown && o.approvals() >= max(o.approvalsRequired, 1):
		ap.Decision = DecisionApproved
	}
	o.logger.Info("Approval decision", "decision", decision, "approver", rec.Approver, "fingerprint", rec.Fingerprint,
		"approvals", o.approvals(), "required", o.approvalsRequired)
}

// approvals counts the approve decisions recorded.
func (o *Operation) approvals() int {
	n := 0
	for _, d := range o.status.Approval.Decisions {
		if d.Decision == DecisionApproved {
			n++
		}
	}
	return n
}

// decided reports whether the approval gate has its outcome.
func (o *Operation) decided() bool {
	return o.status.Approval.Decision != ""
}

// Flush sends the queued search-attribute updates as one upsert.
func (o *Operation) Flush(ctx workflow.Context) { o.attrs.flush(ctx, o.status.Step) }

// Get waits for f, first sending the queued search attributes when the operation has just left a
// resting step.
func (o *Operation) Get(ctx workflow.Context, f workflow.Future, v any) error {
	if o.attrs.leftRest(o.status.Step) {
		o.Flush(ctx)
	}
	return f.Get(ctx, v)
}

// SetAmount records the amount (in the chain's base unit) once the chain told it.
func (o *Operation) SetAmount(amount string) {
	o.status.Amount = amount
	if n, ok := AmountAttribute(amount); ok {
		o.attrs.set(SAAmount.GetName(), SAAmount.ValueSet(n))
	}
}

// SetAccount records the on-chain account the operation acts on.
func (o *Operation) SetAccount(addr string) {
	if addr == "" || addr == o.status.Account {
		return
	}
	o.status.Account = addr
	o.attrs.set(SAStakeAccount.GetName(), SAStakeAccount.ValueSet(addr))
}

// SetValidator records the validator the operation stakes to or from.
func (o *Operation) SetValidator(v string) { o.status.Validator = v }

// SetStep records the step in the status, the StakeflowStep search attribute and the workflow's
// current details shown by the Web UI.
func (o *Operation) SetStep(ctx workflow.Context, step string) {
	o.status.Step = step
	o.status.StepSince = workflow.Now(ctx)
	o.attrs.setStep(step)
	workflow.SetCurrentDetails(ctx, o.details())
	if step == StepDone || step == StepFailed || step == StepCancelled || step == StepStalled {
		o.Flush(ctx)
	}
	if step == StepDone {
		// Every workflow ends a successful operation by stepping to done, exactly once.
		o.metrics.completed()
	}
}

// Wait rests the operation in step (one of Setup.Waits) for d with a durable timer, visible in the
// status (WaitingUntil), the search attributes and the Web UI. A cancel ends the wait with the
// cancellation.
func (o *Operation) Wait(ctx workflow.Context, step string, d time.Duration) error {
	o.status.WaitingUntil = workflow.Now(ctx).Add(d)
	o.SetStep(ctx, step)
	o.Flush(ctx)
	return workflow.Sleep(ctx, d)
}

func (o *Operation) amount(amount string) string {
	if o.setup.FormatAmount != nil {
		return o.setup.FormatAmount(amount)
	}
	return amount + " " + o.status.Unit
}

func (o *Operation) details() string {
	l := o.setup.Labels
	s := fmt.Sprintf("**%s**: %s", o.status.Step, o.status.Operation)
	if _, ok := new(big.Int).SetString(o.status.Amount, 10); ok && o.status.Amount != "0" {
		s += " " + o.amount(o.status.Amount)
	}
	if o.status.Account != "" {
		s += fmt.Sprintf("\n\n%s: %s", l.Account, o.status.Account)
	}
	if o.status.Validator != "" {
		s += fmt.Sprintf("\n\n%s: %s", l.Validator, o.status.Validator)
	}
	if c := o.status.Checkpoint; c != nil && c.Timestamp != 0 {
		s += fmt.Sprintf("\n\ncheckpoint %d: %d proofs remaining, %d batches sent", c.Timestamp, c.ProofsRemaining, c.BatchesSent)
	}
	if ap := o.status.Approval; ap.Required {
		s += fmt.Sprintf("\n\napprovals: %d of %d", o.approvals(), max(ap.ApprovalsRequired, 1))
		switch ap.Mode {
		case ModeSigned:
			s += " (signed by configured approvers' keys)"
		case ModeNamed:
			s += " (named in free text: not separation of duties, anyone who can send updates can type any name)"
		}
		for _, d := range ap.Decisions {
			if d.Fingerprint != "" {
				s += fmt.Sprintf("\n\n%s by %s (%s)", d.Decision, d.Approver, d.Fingerprint)
			}
		}
	}
	for _, t := range o.status.Transactions {
		s += fmt.Sprintf("\n\n%s: %s (%s %d, fee %s %s)", t.Kind, t.TxID, l.Block, t.Block, t.Fee, o.status.Unit)
	}
	if n := len(o.status.Attempts); n > 0 {
		last := o.status.Attempts[n-1]
		if last.Outcome == "" && last.TxID != "" {
			s += fmt.Sprintf("\n\npending %s: %s (build %d)", last.Kind, last.TxID, last.Build)
		}
	}
	if !o.status.WaitingUntil.IsZero() && o.isWait(o.status.Step) {
		s += "\n\nnext check: " + o.status.WaitingUntil.UTC().Format(time.RFC3339)
	}
	if st := o.status.Stall; st != nil {
		s += fmt.Sprintf("\n\nstalled in %s since %s (%d tries): %s\n\nnext try: %s", st.Step,
			st.Since.UTC().Format(time.RFC3339), st.Tries, st.LastError, st.NextTryAt.UTC().Format(time.RFC3339))
		if st.WaysOut != "" {
			s += "\n\nways out: " + st.WaysOut
		}
	}
	if o.status.Reason != "" {
		s += "\n\nfailed: " + o.status.Reason
	}
	return s
}

func (o *Operation) isWait(step string) bool {
	for _, w := range o.setup.Waits {
		if w == step {
			return true
		}
	}
	return false
}

// Done ends the operation successfully.
func (o *Operation) Done(ctx workflow.Context) {
	o.SetStep(ctx, StepDone)
	o.notify(ctx, notify.EventCompleted)
}

// Fail records err as the operation's end (Status.Reason in one line, Status.Error whole) and
// returns the error the workflow ends with: the reason as its message, err as its cause.
func (o *Operation) Fail(ctx workflow.Context, err error) error {
	o.metrics.failed(err)
	if temporal.IsCanceledError(err) {
		o.SetStep(ctx, StepCancelled)
		o.logger.Info("Operation cancelled", "step", o.status.Step)
		o.notify(ctx, notify.EventCancelled)
		return err
	}
	o.status.Reason = Reason(err)
	o.status.Error = err.Error()
	o.SetStep(ctx, StepFailed)
	o.logger.Error("Operation failed", "reason", o.status.Reason, "error", err)
	o.notify(ctx, notify.EventFailed)
	return failure(err, o.status.Reason)
}

// TotalFee sums the fees the operation's transactions paid, in the chain's base unit.
func (o *Operation) TotalFee() *big.Int {
	sum := new(big.Int)
	for _, t := range o.status.Transactions {
		if f, ok := new(big.Int).SetString(t.Fee, 10); ok {
			sum.Add(sum, f)
		}
	}
	return sum
}

// CheckPolicy applies the worker's policy through the chain's policy activity (a local activity
// taking arg and answering an activities.PolicyDecision) and, when it asks for approvals, waits
// for them. It runs before anything is built: a transaction built before a long approval wait
// could expire (a Solana blockhash) or go stale (EVM fees).
func (o *Operation) CheckPolicy(ctx workflow.Context, activity, arg any) error {
	if o.startErr != nil {
		return temporal.NewNonRetryableApplicationError(o.startErr.Error()+"; nothing was built or signed", activities.ErrInvalidInput, o.startErr)
	}
	lctx := workflow.WithLocalActivityOptions(ctx, PolicyOptions())
	var decision activities.PolicyDecision
	if err := workflow.ExecuteLocalActivity(lctx, activity, arg).Get(ctx, &decision); err != nil {
		return err
	}
	required := decision.ApprovalsRequired
	if required == 0 && decision.ApprovalRequired {
		required = 1
	}
	o.policyKnown, o.approvalsRequired = true, required
	o.approvers = decision.Approvers
	ap := &o.status.Approval
	ap.Mode = ModeNamed
	if len(o.approvers) > 0 {
		ap.Mode = ModeSigned
	}
	ap.Required, ap.ApprovalsRequired = required > 0, required
	ap.Threshold, ap.DualThreshold = threshold(decision.ApprovalThreshold), threshold(decision.DualApprovalThreshold)
	if ap.Decision == "" && o.approvals() >= max(required, 1) {
		// Approved before the policy was known.
		ap.Decision = DecisionApproved
	}
	if required == 0 && ap.Decision != DecisionRejected {
		// A rejection sent before the policy was known still stops the operation.
		return nil
	}
	if !o.decided() {
		o.SetStep(ctx, StepAwaitingApproval)
		o.logger.Info("Awaiting approval", "required", required, "threshold", decision.ApprovalThreshold, "timeout", o.opts.ApprovalTimeout)
		o.Flush(ctx)
		o.notify(ctx, notify.EventAwaitingApproval)
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

func threshold(v uint64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatUint(v, 10)
}

// CheckValidator runs the chain's validator pre-flight (activity, with input) in the
// checking-validator step.
func (o *Operation) CheckValidator(ctx workflow.Context, activity, input, result any) error {
	o.SetStep(ctx, StepCheckingValidator)
	actx := workflow.WithActivityOptions(ctx, ValidatorOptions())
	return o.Get(ctx, workflow.ExecuteActivity(actx, activity, input), result)
}

// UntilUnstalled runs try until it succeeds or fails in a way stalls does not accept; each failure
// it accepts stalls the operation (see stall) before the next try. The stall record goes once the
// step gets past what stalled it.
func UntilUnstalled[T any](ctx workflow.Context, o *Operation, stalls func(error) bool, try func() (T, error)) (T, error) {
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

// HalfDone reports whether a transaction of this operation has landed: failing now would leave the
// operation part done, so failures that may heal stall it instead.
func (o *Operation) HalfDone() bool { return len(o.status.Transactions) > 0 }

// stall records that the current step cannot go on for a reason that does not heal by retrying
// at once (an RPC or service refusing the worker), shows it (status, StakeflowStep = stalled, the
// Web UI's current details, a metric) and waits before the next try: 30 seconds, doubling, at most
// MaxStallWait. The step the operation was in is kept in the stall record and resumed after; the
// record stays, with its last failure, until the step gets past what stalled it.
func (o *Operation) stall(ctx workflow.Context, tries int, cause error) error {
	return o.stallWith(ctx, tries, cause, "")
}

// stallWith is stall with the operator's ways out named in the stall record (Stall.WaysOut).
func (o *Operation) stallWith(ctx workflow.Context, tries int, cause error, waysOut string) error {
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
	o.SetStep(ctx, StepStalled)
	o.status.Stall = &Stall{Step: step, Since: since, Tries: tries, LastError: Reason(cause), NextTryAt: now.Add(wait), WaysOut: waysOut}
	workflow.SetCurrentDetails(ctx, o.details())
	if tries == 1 {
		o.notify(ctx, notify.EventStalled)
	}
	if err := workflow.Sleep(ctx, wait); err != nil {
		return err
	}
	o.SetStep(ctx, step)
	return nil
}

// IsErrorType reports whether err carries an application error of type typ.
func IsErrorType(err error, typ string) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == typ
}

// MayHeal reports whether an activity's failure may go away without anyone changing the request:
// the service or chain unavailable, rate limited or refusing the worker's credentials, the
// staker's funds short of the fees (a top-up cures it), or a timeout of the retries.
func MayHeal(err error) bool {
	if temporal.IsCanceledError(err) {
		return false
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return true
	}
	for _, t := range []string{activities.ErrServiceUnavailable, activities.ErrRateLimited, activities.ErrServiceUnauthorized,
		activities.ErrChainUnavailable, activities.ErrChainRejected, activities.ErrInsufficientFunds} {
		if IsErrorType(err, t) {
			return true
		}
	}
	return false
}

// MaxSignaturesAttribute is how many transaction IDs StakeflowSignatures holds: the newest. The
// server refuses a search attribute value over 2 KB (limit.searchAttributesSize.error) and
// terminates the workflow that upserts one: about 29 EVM hashes or 22 Solana signatures. An
// operation that signs more (an EigenLayer checkpoint) continues as new before its run signs
// this many, and each run's StakeflowSignatures (visibility keeps every run) names its own.
const MaxSignaturesAttribute = 20

// signaturesAttribute is StakeflowSignatures' value: the newest MaxSignaturesAttribute TxIDs.
func (o *Operation) signaturesAttribute() []string {
	ids := o.TxIDs()
	if len(ids) > MaxSignaturesAttribute {
		ids = ids[len(ids)-MaxSignaturesAttribute:]
	}
	return ids
}

// TxIDs lists every transaction ID this operation has sent or may have sent.
func (o *Operation) TxIDs() []string {
	out := make([]string, 0, len(o.status.Attempts))
	for _, at := range o.status.Attempts {
		if at.TxID != "" {
			out = append(out, at.TxID)
		}
	}
	return out
}
