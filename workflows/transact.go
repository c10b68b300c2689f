package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
)

// Call names one activity of a transaction step: the activity (a function or method value),
// its input, and where its result decodes.
type Call struct {
	Activity any
	Input    any
	Result   any
	// Local runs a Broadcast as a local activity, with Broadcast's timeouts and retries: in the
	// worker that runs the workflow's tasks, and so signed its transaction (Sign is local), when
	// the signed bytes stayed in that worker's memory and the call names them by hash only (as an
	// EigenLayer proofs batch does: activities/evm's RawCache).
	Local bool
}

// Tx is one chain's side of one transaction step. Transact runs the activities it names, in the
// same order for every chain and with the same options, and keeps the records; the chain says
// what each activity is, what is checked between them, and reads what they returned.
type Tx interface {
	// Kind names the step (stake, unstake, approve, delegate, ...).
	Kind() string
	// Build is the activity that gets a new unsigned transaction; build counts from 1. A build
	// after the first comes only once the previous transaction was proven unable to land
	// (OutcomeCannotLand) or, on a chain with nonces (a Replaceable), to replace it under the same
	// nonce (OutcomeReplace).
	Build(build int) Call
	// Check runs what must be checked between the build and the signature, with what the build
	// returned (the validator the service chose, say); it may do nothing.
	Check(ctx workflow.Context, o *Operation) error
	// Sign is the local activity that verifies the unsigned transaction against the intent and
	// signs it; Signed reads its result.
	Sign() Call
	Signed() Signed
	// Fresh is the activity that proves, before the first send, that the chain has not seen the
	// transaction (nil Activity: the chain needs no such proof).
	Fresh() Call
	// Broadcast is the activity that sends the signed bytes (the same bytes on every retry).
	Broadcast() Call
	// Confirm is the activity that follows the sent transaction to its end; Confirmed reads its
	// result.
	Confirm() Call
	Confirmed() Confirmed
}

// Signed is what a signature gave the step.
type Signed struct {
	// TxID is the signed transaction's ID (Solana signature, EVM hash).
	TxID string
	// Expiry is what bounds where it can land (Solana blockhash, EVM nonce).
	Expiry string
	// MaxFee is the most it pays if it lands, in the chain's base unit.
	MaxFee string
}

// Confirmed is where a sent transaction ended.
type Confirmed struct {
	// Outcome is activities.OutcomeFinalized, OutcomeFailed, OutcomeCannotLand (the chain proved
	// that nothing the step signed can land: a new build is safe, and so is ending the step) or
	// OutcomeReplace (on a chain with nonces: no build landed in time and a replacement under the
	// same nonce is safe, but every build sent may still land; never a reason to end the step).
	// Once a Replaceable stopped replacing, OutcomeReplace means "no final word yet": the step
	// stays open, visibly stalled, and confirms again.
	Outcome string
	// Block is where it was finalized (slot, block number).
	Block uint64
	// Fee is what it paid, in the chain's base unit.
	Fee string
	// Error is the on-chain error of a failed transaction, or the chain's proof that nothing the
	// step signed can land (OutcomeCannotLand: which transaction took the nonce, say).
	Error string
	// TxID is the transaction that landed when it is not the one just signed: on a chain with
	// nonces, an earlier build under the same nonce may land instead of its replacement.
	TxID string
	// NonceFree is, with OutcomeCannotLand on a chain with nonces, that the nonce is still
	// unused: every build sent expired unseen (a Celestia timeout height passed, none of them in
	// the blocks they could be in). Nothing signed can land, and a new build under the same nonce
	// is safe: the step builds again rather than ending.
	NonceFree bool
}

// KindCancel is the Kind of the attempt and of the record of a Canceller's cancel transaction.
const KindCancel = "cancel"

// ErrCannotLand: the chain proved that nothing a step signed can land (on a chain with nonces,
// the nonce was taken at final depth by a transaction the step did not sign, named in the
// message). Non-retryable.
const ErrCannotLand = "CannotLand"

// Transact runs one on-chain step exactly once: build, check, verify and sign, prove the
// transaction new, broadcast, confirm.
//
// The rule it keeps: after the first broadcast attempt of any build, the step ends only with the
// chain's final word on every build it signed: one of them landed at final depth (the step's
// result, whichever build it is: completed, even after a cancel) or every one was proven unable
// to land (OutcomeCannotLand: the step ends with its cause, or cancelled, and the chain's proof).
//
// A transaction is re-sent only as the same signed bytes. A new one is built only when Confirm
// has proven the previous one cannot land or, on a chain with nonces (a Replaceable), asks to
// replace it under the same nonce (so only one of them can land), at most MaxBuilds times. A
// cancel before the first broadcast ends the step with nothing sent.
//
// Once a build of a Replaceable was sent, every exit (a replacement refused at its first send,
// not buildable, not proven fresh, refused by Check or the signer, a cancel at any point, the
// build limit, the fee caps) goes through one path, follow: it confirms every build sent with
// replacing stopped until the chain's final word, stalling visibly while the chain keeps it
// waiting, and, on a cancel, lets a Canceller take the nonce back. On a chain without nonces a
// new build comes only after the previous one was proven unable to land, so an exit there leaves
// nothing that can land.
func (o *Operation) Transact(ctx workflow.Context, tx Tx) (TxRecord, error) {
	s := &step{o: o, tx: tx, kind: tx.Kind(), first: len(o.status.Attempts)}
	s.r, _ = tx.(Replaceable)
	kind := s.kind
	for build := 1; ; build++ {
		if build > o.opts.MaxBuilds {
			if s.r != nil && s.sent > 0 {
				return s.end(ctx, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("%s: %d transactions built under one nonce, none landed in time", kind, o.opts.MaxBuilds),
					ErrTooManyBuilds, nil))
			}
			return TxRecord{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s: %d transactions built, each proven unable to land; none landed", kind, o.opts.MaxBuilds),
				ErrTooManyBuilds, nil)
		}
		if err := ctx.Err(); err != nil {
			return s.end(ctx, s.cancelled("no new build was made"))
		}
		if build > 1 {
			o.metrics.rebuilt()
		}

		if err := o.build(ctx, tx.Build(build)); err != nil {
			// No new build (its fee bump over the caps, the service refusing, a cancel): the builds
			// sent before may still land.
			return s.end(ctx, err)
		}
		attempt := Attempt{Kind: kind, Build: build, BuiltAt: workflow.Now(ctx)}
		if err := tx.Check(ctx, o); err != nil {
			return s.end(ctx, err)
		}

		o.SetStep(ctx, StepSigning)
		sctx := workflow.WithLocalActivityOptions(ctx, SignOptions())
		sign := tx.Sign()
		if err := workflow.ExecuteLocalActivity(sctx, sign.Activity, sign.Input).Get(ctx, sign.Result); err != nil {
			return s.end(ctx, err)
		}
		signed := tx.Signed()
		attempt.TxID, attempt.Expiry, attempt.MaxFee = signed.TxID, signed.Expiry, signed.MaxFee
		attempt.SignedAt = workflow.Now(ctx)
		o.status.Attempts = append(o.status.Attempts, attempt)
		current := &o.status.Attempts[len(o.status.Attempts)-1]

		// The chain, not the service, says whether this transaction is new: a transaction served
		// again after it landed for an earlier operation would be "already processed" and pass for
		// this one's success.
		if fresh := tx.Fresh(); fresh.Activity != nil {
			fctx := workflow.WithActivityOptions(ctx, FreshOptions())
			if err := o.Get(ctx, workflow.ExecuteActivity(fctx, fresh.Activity, fresh.Input), fresh.Result); err != nil {
				current.Outcome = "not-sent"
				current.Error = err.Error()
				return s.end(ctx, err)
			}
		}

		// Last point where a cancel stops this build from being sent.
		if err := ctx.Err(); err != nil {
			current.Outcome = "not-sent"
			return s.end(ctx, s.cancelled("the signed transaction was not sent"))
		}
		// From here on the transaction may land: follow it to its end whatever happens to ctx.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		o.attrs.set(SASignatures.GetName(), SASignatures.ValueSet(o.signaturesAttribute()))
		o.SetStep(ctx, StepBroadcasting)
		current.BroadcastAt = workflow.Now(ctx)
		o.logger.Info("Broadcasting", "txId", signed.TxID, "build", build)
		send := tx.Broadcast()
		if berr := o.Get(dctx, o.broadcast(dctx, send), send.Result); berr != nil {
			if IsErrorType(berr, activities.ErrTransactionRejected) {
				// Refused at its first send: these bytes never reached the chain (the builds sent
				// before them may still land: end follows them).
				current.Outcome = activities.OutcomeFailed
				current.Error = berr.Error()
				return s.end(ctx, berr)
			}
			// Expired, retries exhausted, a refusal after an earlier send whose answer was lost: the
			// earlier send may have landed, so the chain decides below.
			o.logger.Warn("Broadcast did not succeed; checking the chain", "txId", signed.TxID, "error", berr)
			current.BroadcastError = Reason(berr)
		}
		s.sent = build

		rec, conf, err := s.settle(ctx, dctx, build, current)
		switch outcome := conf.Outcome; {
		case err != nil || outcome == activities.OutcomeFinalized:
			return rec, err
		case outcome == activities.OutcomeCannotLand && s.r != nil && !conf.NonceFree:
			// The chain proved that nothing under the nonce can land: another transaction took
			// it, so no build can replace it.
			return TxRecord{}, s.proven(ctx, nil, current.Error)
		case outcome == activities.OutcomeCannotLand:
			// Every build sent is proven dead (and, on a chain with nonces, the nonce is unused):
			// a new build is the only one that can land.
			if ctx.Err() != nil {
				// Proven not to land, and a cancel is pending: stop with nothing done.
				return TxRecord{}, temporal.NewCanceledError("cancelled; the transaction sent expired without landing")
			}
		case s.r == nil:
			// Only a chain with nonces replaces: without one, a build that may still land cannot be
			// followed alongside another.
			return TxRecord{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s: Confirm asked to replace %s, which only a chain with nonces can do", kind, current.TxID),
				ErrCannotLand, nil)
		case ctx.Err() != nil:
			// To be replaced, and a cancel is pending: no replacement; what was sent may still land.
			return s.end(ctx, s.cancelled("no replacement was sent"))
		}
	}
}

// step is one Transact call: its Tx, where its attempts begin in the status, and the newest build
// whose broadcast was started (0: nothing sent yet).
type step struct {
	o     *Operation
	tx    Tx
	r     Replaceable // nil on a chain without nonces
	kind  string
	first int
	sent  int
}

// cancelled is the cause of a step ended by a cancel, saying what was not done.
func (s *step) cancelled(what string) error {
	if s.sent == 0 {
		return temporal.NewCanceledError("cancelled before broadcast; nothing was sent")
	}
	return temporal.NewCanceledError("cancelled; " + what)
}

// end is every exit of a step: once a build of a chain with nonces was sent, it follows what was
// sent to the chain's final word (follow); otherwise it ends with cause, nothing sent able to land.
func (s *step) end(ctx workflow.Context, cause error) (TxRecord, error) {
	if s.r != nil && s.sent > 0 {
		return s.follow(ctx, cause)
	}
	return TxRecord{}, cause
}

// settle follows the step's newest transaction (and, on a chain with nonces, every build under its
// nonce) until Confirm says where it ended, and records that end: a landed build (finalized or
// failed) ends the step; cannot-land and replace are returned for Transact to decide.
func (s *step) settle(ctx, dctx workflow.Context, build int, current *Attempt) (TxRecord, Confirmed, error) {
	o := s.o
	conf, err := o.confirm(ctx, dctx, s.tx)
	if err != nil {
		return TxRecord{}, Confirmed{}, err
	}
	o.metrics.confirmed(conf.Outcome)
	switch conf.Outcome {
	case activities.OutcomeFinalized, activities.OutcomeFailed:
		rec, err := s.landed(ctx, build, conf)
		return rec, conf, err
	case activities.OutcomeCannotLand, activities.OutcomeReplace:
		current.Outcome, current.ConfirmedAt = conf.Outcome, workflow.Now(ctx)
		if conf.Error != "" {
			current.Error = conf.Error
		}
		if conf.Outcome == activities.OutcomeCannotLand && conf.NonceFree {
			// Every earlier build is as dead as this one: the status says so for each.
			s.markDead(ctx, conf.Error)
		}
		o.logger.Warn("Transaction cannot land, or is to be replaced", "txId", current.TxID, "build", build, "outcome", conf.Outcome)
		return TxRecord{}, conf, nil
	}
	return TxRecord{}, Confirmed{}, fmt.Errorf("unknown confirmation outcome %q", conf.Outcome)
}

// landed records the build that landed (conf.TxID, else the newest) and ends the step with it: its
// record when it succeeded, its on-chain error when it failed, and cancelled when it is the
// step's cancel transaction.
func (s *step) landed(ctx workflow.Context, build int, conf Confirmed) (TxRecord, error) {
	o := s.o
	at := s.attempt(conf.TxID)
	at.Outcome, at.Block, at.Fee, at.ConfirmedAt = conf.Outcome, conf.Block, conf.Fee, workflow.Now(ctx)
	if ctx.Err() != nil {
		o.status.CancelRequested = true
	}
	landed := at.TxID
	if conf.TxID != "" {
		landed = conf.TxID
	}
	rec := TxRecord{Kind: at.Kind, TxID: landed, Block: conf.Block, Builds: build, Fee: conf.Fee, FinalizedAt: at.ConfirmedAt}
	if conf.Outcome == activities.OutcomeFailed {
		at.Error = conf.Error
		return TxRecord{}, temporal.NewNonRetryableApplicationError(
			// Cause first: the chain's error, decoded, then which transaction and what it cost.
			fmt.Sprintf("%s; %s transaction %s failed on chain (finalized, fee %s %s paid)", conf.Error, at.Kind, landed, conf.Fee, o.status.Unit),
			ErrTransactionFailed, nil)
	}
	o.status.Transactions = append(o.status.Transactions, rec)
	o.logger.Info("Transaction finalized", "txId", landed, "kind", at.Kind, "block", conf.Block, "fee", conf.Fee)
	if at.Kind == KindCancel {
		o.status.CancelRequested = true
		return TxRecord{}, temporal.NewCanceledError(fmt.Sprintf(
			"cancelled; no %s transaction landed: the chain shows the step's nonce taken by its cancel transaction %s (block %d, fee %s %s)",
			s.kind, landed, conf.Block, conf.Fee, o.status.Unit))
	}
	rec.Kind = s.kind
	return rec, nil
}

// attempt is the step's attempt of txID, or its newest when txID is empty or not the step's.
func (s *step) attempt(txID string) *Attempt {
	atts := s.o.status.Attempts
	for i := len(atts) - 1; i >= s.first && txID != ""; i-- {
		if atts[i].TxID == txID {
			return &atts[i]
		}
	}
	return &atts[len(atts)-1]
}

// proven ends a step whose builds the chain proved unable to land: with cause (or cancelled, when
// a cancel is pending) and the chain's proof in the message.
func (s *step) proven(ctx workflow.Context, cause error, proof string) error {
	o := s.o
	s.markDead(ctx, proof)
	msg := "nothing this step signed can land"
	if proof != "" {
		msg += ": " + proof
	}
	o.logger.Warn("The chain proved that nothing the step signed can land", "proof", proof, "cause", cause)
	if ctx.Err() != nil || temporal.IsCanceledError(cause) {
		return temporal.NewCanceledError("cancelled; " + msg)
	}
	if cause == nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %s", s.kind, msg), ErrCannotLand, nil)
	}
	typ := ErrCannotLand
	var appErr *temporal.ApplicationError
	if errors.As(cause, &appErr) && appErr.Type() != "" {
		typ = appErr.Type()
	}
	return temporal.NewNonRetryableApplicationError(Reason(cause)+"; "+msg, typ, cause)
}

// markDead records every attempt of the step without an end (or to be replaced) as unable to
// land, with the chain's proof.
func (s *step) markDead(ctx workflow.Context, proof string) {
	now := workflow.Now(ctx)
	for i := s.first; i < len(s.o.status.Attempts); i++ {
		if at := &s.o.status.Attempts[i]; at.Outcome == "" || at.Outcome == activities.OutcomeReplace {
			at.Outcome, at.ConfirmedAt = activities.OutcomeCannotLand, now
			if proof != "" {
				at.Error = proof
			}
		}
	}
}

// Replaceable is a Tx whose "replace" outcome means "replace it under the same nonce", not "it
// cannot land": every build sent under the nonce may still land until one does. Once a build was
// sent, no exit of the step abandons them: the core stops replacing and follows what was sent
// until one of the builds lands or the chain proves that none can (OutcomeCannotLand).
type Replaceable interface {
	Tx
	// StopReplacing makes Confirm follow every build already sent and never ask for a
	// replacement again. Confirm may then answer OutcomeReplace only to say "no build landed yet
	// and none is proven unable to": it should do so after a bound (minutes), so that the
	// operation shows itself stalled while the chain keeps it waiting.
	StopReplacing()
}

// Canceller is a Replaceable that can take its nonce back when the operation is cancelled after a
// broadcast, with a harmless transaction under the same nonce (EVM: a zero-value transfer from
// the sender to itself, its fees bumped over every build sent as the pool requires, under the
// caps). The core calls Cancel at most once per step, when a cancel is pending while it follows
// what was sent; if Cancel returns true it runs, on a disconnected context, the Tx's Build, Sign
// (and Signed), Broadcast once more, now those of the cancel transaction (no Check, no Fresh: the
// nonce is the step's own), records it as an attempt of KindCancel, and goes on following: Confirm
// then follows the cancel with every build sent, replacing stopped. If the cancel lands, the step
// ends cancelled with its hash as the chain's proof; if a build of the step lands instead, the
// step completed. A cancel that cannot be built, signed or sent changes nothing: the step follows
// what was sent. A Replaceable that is no Canceller (Celestia: its mempool takes no second
// transaction under a sequence; a cancel waits for the timeout height) just stops replacing.
type Canceller interface {
	Replaceable
	// Cancel turns the Tx's Build, Sign, Signed and Broadcast to the cancel transaction; false
	// when it has nothing to cancel.
	Cancel() bool
}

// follow follows the builds a Replaceable step has sent, with replacing stopped, until the chain's
// final word: one of them landed (the step's result; completed even after a cancel), or all are
// proven unable to land (the step ends with cause, or cancelled, and the proof). While Confirm
// says no build landed yet, the operation stays open and stalled, naming the operator's ways out;
// on a cancel, a Canceller first sends its cancel transaction.
func (s *step) follow(ctx workflow.Context, cause error) (TxRecord, error) {
	o, r := s.o, s.r
	o.logger.Warn("No new build will be sent; following every build sent to the chain's final word", "cause", cause)
	r.StopReplacing()
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	c, canCancel := r.(Canceller)
	cancelTried := false
	var stalled *Stall
	for tries := 1; ; tries++ {
		if ctx.Err() != nil {
			// The status says so while the step follows what was sent, not only at its end.
			o.status.CancelRequested = true
		}
		if ctx.Err() != nil && canCancel && !cancelTried {
			cancelTried = true
			s.sendCancel(ctx, dctx, c)
		}
		conf, err := o.confirm(ctx, dctx, r)
		if err != nil {
			return TxRecord{}, err
		}
		o.metrics.confirmed(conf.Outcome)
		switch conf.Outcome {
		case activities.OutcomeFinalized, activities.OutcomeFailed:
			return s.landed(ctx, s.sent, conf)
		case activities.OutcomeCannotLand:
			return TxRecord{}, s.proven(ctx, cause, conf.Error)
		case activities.OutcomeReplace:
			// Nothing landed and nothing is proven: the chain has not given its word yet.
			if ctx.Err() != nil && canCancel && !cancelTried {
				// Cancelled while Confirm ran: send the cancel before waiting.
				continue
			}
			o.status.Stall = stalled
			wctx := ctx
			if ctx.Err() != nil {
				wctx = dctx
			}
			why := fmt.Errorf("no build of the %s has landed and none is proven unable to land (%s)", s.kind, Reason(cause))
			// A cancel during the wait ends the wait, not the follow.
			_ = o.stallWith(wctx, tries, why, s.waysOut(canCancel, cancelTried))
			stalled = o.status.Stall
		default:
			return TxRecord{}, fmt.Errorf("unknown confirmation outcome %q", conf.Outcome)
		}
	}
}

// waysOut names what an operator can do about a step the chain keeps waiting.
func (s *step) waysOut(canCancel, cancelSent bool) string {
	switch {
	case cancelSent:
		return "wait: the cancel transaction or a build sent takes the nonce once mined, and the operation ends on the chain's word"
	case canCancel:
		return "wait: a build sent may still be mined; speed up: raise the worker's fee caps, then cancel: the cancel is priced under the new caps; " +
			"cancel: a harmless transaction to the sender itself consumes the nonce (completed if a build lands first)"
	}
	return "wait: a build sent may still land; cancel: no more is sent and the operation ends when the chain proves what was sent can no longer land"
}

// sendCancel builds, signs and sends the step's cancel transaction (see Canceller), on dctx. What
// fails is logged and recorded; the follow goes on either way.
func (s *step) sendCancel(ctx, dctx workflow.Context, c Canceller) {
	o := s.o
	if !c.Cancel() {
		return
	}
	build := len(o.status.Attempts) - s.first + 1
	o.logger.Info("Cancelled after a broadcast: taking the nonce back with a harmless transaction", "build", build)
	if err := o.build(dctx, c.Build(build)); err != nil {
		o.logger.Warn("No cancel transaction could be built; following what was sent", "error", err)
		return
	}
	attempt := Attempt{Kind: KindCancel, Build: build, BuiltAt: workflow.Now(ctx)}
	o.SetStep(ctx, StepSigning)
	sctx := workflow.WithLocalActivityOptions(dctx, SignOptions())
	sign := c.Sign()
	if err := workflow.ExecuteLocalActivity(sctx, sign.Activity, sign.Input).Get(dctx, sign.Result); err != nil {
		o.logger.Warn("The cancel transaction was not signed; following what was sent", "error", err)
		return
	}
	signed := c.Signed()
	attempt.TxID, attempt.Expiry, attempt.MaxFee = signed.TxID, signed.Expiry, signed.MaxFee
	attempt.SignedAt = workflow.Now(ctx)
	attempt.BroadcastAt = attempt.SignedAt
	o.status.Attempts = append(o.status.Attempts, attempt)
	current := &o.status.Attempts[len(o.status.Attempts)-1]
	o.attrs.set(SASignatures.GetName(), SASignatures.ValueSet(o.signaturesAttribute()))
	o.SetStep(ctx, StepBroadcasting)
	o.logger.Info("Broadcasting the cancel", "txId", signed.TxID)
	send := c.Broadcast()
	if berr := o.Get(dctx, o.broadcast(dctx, send), send.Result); berr != nil {
		if IsErrorType(berr, activities.ErrTransactionRejected) {
			current.Outcome, current.Error = activities.OutcomeFailed, berr.Error()
			o.logger.Warn("The cancel transaction was refused; following what was sent", "error", berr)
			return
		}
		current.BroadcastError = Reason(berr)
	}
}

// broadcast starts a Broadcast call with BroadcastOptions: as a local activity when it is Local.
func (o *Operation) broadcast(ctx workflow.Context, send Call) workflow.Future {
	opts := BroadcastOptions(o.opts)
	if send.Local {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: opts.StartToCloseTimeout, ScheduleToCloseTimeout: opts.ScheduleToCloseTimeout, RetryPolicy: opts.RetryPolicy,
		})
		return workflow.ExecuteLocalActivity(lctx, send.Activity, send.Input)
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), send.Activity, send.Input)
}

// build runs the build activity. While the service fails (unavailable, rate limited, refusing the
// worker's token), an operation that has already landed a transaction stalls visibly and tries
// again rather than fail half done; one that has not fails after BuildTimeout with nothing sent.
func (o *Operation) build(ctx workflow.Context, call Call) error {
	bctx := workflow.WithActivityOptions(ctx, BuildOptions(o.opts))
	stalls := func(err error) bool { return o.HalfDone() && MayHeal(err) }
	_, err := UntilUnstalled(ctx, o, stalls, func() (struct{}, error) {
		o.SetStep(ctx, StepBuilding)
		return struct{}{}, o.Get(ctx, workflow.ExecuteActivity(bctx, call.Activity, call.Input), call.Result)
	})
	return err
}

// confirm follows a sent transaction until Confirm says where it ended. A Confirm that fails
// (an RPC refusing the worker for good, say) does not end the operation: the transaction may land
// whatever the worker's RPC says, so the step stalls visibly and confirms again.
func (o *Operation) confirm(ctx, dctx workflow.Context, tx Tx) (Confirmed, error) {
	cctx := workflow.WithActivityOptions(dctx, ConfirmOptions())
	stalls := func(err error) bool { return !temporal.IsCanceledError(err) }
	// The stall's wait runs on dctx: a cancel does not stop following a sent transaction.
	return UntilUnstalled(dctx, o, stalls, func() (Confirmed, error) {
		o.SetStep(ctx, StepConfirming)
		call := tx.Confirm()
		confirmed := workflow.ExecuteActivity(cctx, call.Activity, call.Input)
		// Confirming is where a sent transaction rests: its step and transaction ID become searchable.
		o.Flush(dctx)
		if err := o.Get(dctx, confirmed, call.Result); err != nil {
			return Confirmed{}, err
		}
		return tx.Confirmed(), nil
	})
}
