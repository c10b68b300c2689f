package workflows

import (
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
}

// Tx is one chain's side of one transaction step. Transact runs the activities it names, in the
// same order for every chain and with the same options, and keeps the records; the chain says
// what each activity is, what is checked between them, and reads what they returned.
type Tx interface {
	// Kind names the step (stake, unstake, approve, delegate, ...).
	Kind() string
	// Build is the activity that gets a new unsigned transaction; build counts from 1. A build
	// after the first comes only once the previous transaction was proven unable to land (or, on a
	// chain with nonces, is built to replace it under the same nonce).
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
	// Outcome is activities.OutcomeFinalized, OutcomeFailed, OutcomeCannotLand (proven unable to
	// land) or OutcomeReplace (to be replaced under the same nonce): either way a new build is safe.
	Outcome string
	// Block is where it was finalized (slot, block number).
	Block uint64
	// Fee is what it paid, in the chain's base unit.
	Fee string
	// Error is the on-chain error of a failed transaction.
	Error string
	// TxID is the transaction that landed when it is not the one just signed: on a chain with
	// nonces, an earlier build under the same nonce may land instead of its replacement.
	TxID string
}

// Transact runs one on-chain step exactly once: build, check, verify and sign, prove the
// transaction new, broadcast, confirm.
//
// A transaction is re-sent only as the same signed bytes. A new one is built only when Confirm has
// proven the previous one cannot land (or that it is replaced under the same nonce, so only one of
// them can), at most MaxBuilds times. A cancel before the first broadcast ends the step with
// nothing sent; once a broadcast was started the step goes on, on a disconnected context, until
// the transaction's fate is known.
func (o *Operation) Transact(ctx workflow.Context, tx Tx) (TxRecord, error) {
	kind := tx.Kind()
	for build := 1; ; build++ {
		if build > o.opts.MaxBuilds {
			return TxRecord{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s: %d transactions built, each proven unable to land; none landed", kind, o.opts.MaxBuilds),
				ErrTooManyBuilds, nil)
		}
		if err := ctx.Err(); err != nil {
			return TxRecord{}, temporal.NewCanceledError("cancelled before broadcast; nothing was sent")
		}
		if build > 1 {
			o.metrics.rebuilt()
		}

		if err := o.build(ctx, tx.Build(build)); err != nil {
			if r, ok := tx.(Replaceable); ok && build > 1 {
				// No replacement could be built (its fee bump over the caps, say): the build sent
				// before may still land.
				return o.followSent(ctx, r, build-1, err)
			}
			return TxRecord{}, err
		}
		attempt := Attempt{Kind: kind, Build: build, BuiltAt: workflow.Now(ctx)}
		if err := tx.Check(ctx, o); err != nil {
			return TxRecord{}, err
		}

		o.SetStep(ctx, StepSigning)
		sctx := workflow.WithLocalActivityOptions(ctx, SignOptions())
		sign := tx.Sign()
		if err := workflow.ExecuteLocalActivity(sctx, sign.Activity, sign.Input).Get(ctx, sign.Result); err != nil {
			return TxRecord{}, err
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
				return TxRecord{}, err
			}
		}

		// Last point where a cancel ends the operation with nothing sent.
		if err := ctx.Err(); err != nil {
			current.Outcome = "not-sent"
			return TxRecord{}, temporal.NewCanceledError("cancelled before broadcast; the signed transaction was not sent")
		}
		// From here on the transaction may land: follow it to its end whatever happens to ctx.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		o.attrs.set(SASignatures.GetName(), SASignatures.ValueSet(o.TxIDs()))
		o.SetStep(ctx, StepBroadcasting)
		current.BroadcastAt = workflow.Now(ctx)
		o.logger.Info("Broadcasting", "txId", signed.TxID, "build", build)
		brctx := workflow.WithActivityOptions(dctx, BroadcastOptions(o.opts))
		send := tx.Broadcast()
		if berr := o.Get(dctx, workflow.ExecuteActivity(brctx, send.Activity, send.Input), send.Result); berr != nil {
			if IsErrorType(berr, activities.ErrTransactionRejected) {
				// Refused at its first send: these bytes never reached the chain.
				current.Outcome = activities.OutcomeFailed
				current.Error = berr.Error()
				return TxRecord{}, berr
			}
			// Expired, retries exhausted, a refusal after an earlier send whose answer was lost: the
			// earlier send may have landed, so the chain decides below.
			o.logger.Warn("Broadcast did not succeed; checking the chain", "txId", signed.TxID, "error", berr)
			current.BroadcastError = Reason(berr)
		}

		rec, expired, err := o.settle(ctx, dctx, tx, build, current)
		if !expired {
			return rec, err
		}
		if ctx.Err() != nil {
			if r, ok := tx.(Replaceable); ok {
				// An earlier build may still land: follow it rather than stop.
				return o.followSent(ctx, r, build, temporal.NewCanceledError("cancelled; no replacement was sent"))
			}
			// Proven not to land, and a cancel is pending: stop with nothing done.
			return TxRecord{}, temporal.NewCanceledError("cancelled; the transaction sent expired without landing")
		}
	}
}

// settle follows the step's newest transaction (and, on a chain with nonces, every build under its
// nonce) until Confirm says where it ended, and records that end. expired is true when a new build
// is safe (proven unable to land, or to be replaced under the same nonce).
func (o *Operation) settle(ctx, dctx workflow.Context, tx Tx, build int, current *Attempt) (rec TxRecord, expired bool, err error) {
	kind := tx.Kind()
	conf, err := o.confirm(ctx, dctx, tx)
	if err != nil {
		return TxRecord{}, false, err
	}
	o.metrics.confirmed(conf.Outcome)
	current.Outcome = conf.Outcome
	current.Block = conf.Block
	current.Fee = conf.Fee
	current.ConfirmedAt = workflow.Now(ctx)
	switch conf.Outcome {
	case activities.OutcomeFinalized:
		landed := current.TxID
		if conf.TxID != "" {
			landed = conf.TxID
		}
		rec := TxRecord{Kind: kind, TxID: landed, Block: conf.Block, Builds: build,
			Fee: conf.Fee, FinalizedAt: current.ConfirmedAt}
		o.status.Transactions = append(o.status.Transactions, rec)
		o.logger.Info("Transaction finalized", "txId", landed, "block", conf.Block, "fee", conf.Fee)
		if ctx.Err() != nil {
			o.status.CancelRequested = true
		}
		return rec, false, nil
	case activities.OutcomeFailed:
		current.Error = conf.Error
		return TxRecord{}, false, temporal.NewNonRetryableApplicationError(
			// Cause first: the chain's error, decoded, then which transaction and what it cost.
			fmt.Sprintf("%s; %s transaction %s failed on chain (finalized, fee %s %s paid)", conf.Error, kind, current.TxID, conf.Fee, o.status.Unit),
			ErrTransactionFailed, nil)
	case activities.OutcomeCannotLand, activities.OutcomeReplace:
		o.logger.Warn("Transaction cannot land, or is to be replaced", "txId", current.TxID, "build", build)
		return TxRecord{}, true, nil
	}
	return TxRecord{}, false, fmt.Errorf("unknown confirmation outcome %q", conf.Outcome)
}

// Replaceable is a Tx whose "replace" outcome means "replace it under the same nonce", not "it
// cannot land": every build sent under the nonce may still land until one does. When no
// replacement can be built, or a cancel arrives, the core does not stop there: it stops replacing
// and follows what was sent until one of the builds lands (or the nonce is proven taken).
type Replaceable interface {
	Tx
	// StopReplacing makes Confirm follow the builds already sent without ever answering expired.
	StopReplacing()
}

// followSent follows the builds a Replaceable step has sent, with replacing stopped, until one
// lands; cause is why no new build is sent, returned if none can land after all.
func (o *Operation) followSent(ctx workflow.Context, r Replaceable, build int, cause error) (TxRecord, error) {
	o.logger.Warn("No replacement will be sent; following the transactions already sent", "cause", cause)
	r.StopReplacing()
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	current := &o.status.Attempts[len(o.status.Attempts)-1]
	rec, expired, err := o.settle(ctx, dctx, r, build, current)
	if expired {
		return TxRecord{}, cause
	}
	return rec, err
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

// confirm follows a sent transaction until Confirm says where it ended. An RPC that refuses the
// worker for good (ChainRejected) does not end the operation: the transaction may land whatever
// the worker's RPC says, so the step stalls visibly and confirms again.
func (o *Operation) confirm(ctx, dctx workflow.Context, tx Tx) (Confirmed, error) {
	cctx := workflow.WithActivityOptions(dctx, ConfirmOptions())
	stalls := func(err error) bool { return IsErrorType(err, activities.ErrChainRejected) }
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
