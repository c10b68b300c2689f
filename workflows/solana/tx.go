package solana

import (
	"strconv"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/workflows"
)

// a is the nil Activities pointer the workflows name activities through.
var a *actsolana.Activities

// tx is one Solana transaction step (stake, deactivate, withdraw) for the core's transact loop:
// the service builds it, the signer verifies it by exact expectation and signs it, the chain
// proves it new before the first send, and Confirm follows it until it is finalized or its
// blockhash is proven expired with the signature absent.
type tx struct {
	o      *workflows.Operation
	op     *operation
	intent actsolana.Intent
	// signIntent is the intent the signer holds the transaction to: the intent, with the vote
	// account the service chose once it was checked.
	signIntent actsolana.Intent
	built      actsolana.BuildResult
	signed     actsolana.SignResult
	fresh      actsolana.FreshResult
	sent       actsolana.BroadcastResult
	conf       actsolana.ConfirmResult
}

func (t *tx) Kind() string { return string(t.intent.Operation) }

func (t *tx) Build(int) workflows.Call {
	t.built = actsolana.BuildResult{}
	return workflows.Call{Activity: a.Build, Input: t.intent, Result: &t.built}
}

// Check re-reads the staker's balance (it may have changed while the operation waited for an
// approval or a deactivation), and holds a stake whose validator the service chose to exactly
// that one, once it passed the validator pre-flight.
func (t *tx) Check(ctx workflow.Context, _ *workflows.Operation) error {
	t.signIntent = t.intent
	if err := t.op.preflight(ctx, t.intent.Operation); err != nil {
		return err
	}
	if t.intent.Operation != actsolana.OpStake || t.intent.VoteAccount != "" {
		return nil
	}
	if t.built.VoteAccount == "" {
		return temporal.NewNonRetryableApplicationError(
			"the service did not name the vote account of the stake", activities.ErrVerificationFailed, nil)
	}
	if err := t.op.checkValidator(ctx, t.built.VoteAccount); err != nil {
		return err
	}
	t.signIntent.VoteAccount = t.built.VoteAccount
	return nil
}

func (t *tx) Sign() workflows.Call {
	t.signed = actsolana.SignResult{}
	return workflows.Call{Activity: a.Sign,
		Input:  actsolana.SignInput{Intent: t.signIntent, UnsignedTransaction: t.built.UnsignedTransaction},
		Result: &t.signed}
}

// Signed records what the signature fixed: the transaction's signature and blockhash and, for a
// stake, the new stake account and its vote account.
func (t *tx) Signed() workflows.Signed {
	if t.intent.Operation == actsolana.OpStake {
		t.o.SetAccount(t.signed.StakeAccount)
		t.op.intent.StakeAccount = t.signed.StakeAccount
		t.o.SetValidator(t.signed.VoteAccount)
	}
	return workflows.Signed{TxID: t.signed.Signature, Expiry: t.signed.RecentBlockhash, MaxFee: amountString(t.signed.FeeLamports)}
}

func (t *tx) Fresh() workflows.Call {
	in := actsolana.FreshInput{Network: t.intent.Network, Signature: t.signed.Signature}
	if t.intent.Operation == actsolana.OpStake {
		in.NewStakeAccount = t.signed.StakeAccount
	}
	return workflows.Call{Activity: a.CheckFresh, Input: in, Result: &t.fresh}
}

func (t *tx) Broadcast() workflows.Call {
	return workflows.Call{Activity: a.Broadcast, Input: actsolana.BroadcastInput{
		Intent: t.intent, Signature: t.signed.Signature, SignedTransaction: t.signed.SignedTransaction,
	}, Result: &t.sent}
}

func (t *tx) Confirm() workflows.Call {
	t.conf = actsolana.ConfirmResult{}
	return workflows.Call{Activity: a.Confirm, Input: actsolana.ConfirmInput{
		Network: t.intent.Network, Operation: t.intent.Operation, Signature: t.signed.Signature,
		RecentBlockhash: t.signed.RecentBlockhash, PollInterval: t.o.Options().ConfirmPollInterval,
	}, Result: &t.conf}
}

func (t *tx) Confirmed() workflows.Confirmed {
	return workflows.Confirmed{Outcome: t.conf.Outcome, Block: t.conf.Slot, Fee: amountString(t.conf.Fee), Error: t.conf.Error}
}

// amountString writes an amount of lamports as the core carries amounts; zero is no amount.
func amountString(n uint64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10)
}
