package celestia

import (
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	"github.com/stakeflow/stakeflow/workflows"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

// ca is the nil Activities pointer the workflows name Celestia activities through.
var ca *actcelestia.Activities

// neverReplace is the ReplaceAfter of a Confirm that must not answer expired.
const neverReplace = 100 * 365 * 24 * time.Hour

// Tx is one Celestia transaction step. Its account sequence is the next one of the delegator's
// lease (the sequencer's, read from the chain): every build reuses it, so at most one build can
// ever land, and Confirm follows all of them by hash.
type Tx struct {
	o         *workflows.Operation
	intent    actcelestia.Intent
	sequence  *uint64
	hashes    []string
	built     actcelestia.BuildResult
	signed    actcelestia.SignResult
	sent      actcelestia.BroadcastResult
	conf      actcelestia.ConfirmResult
	following bool
}

// Kind names the step.
func (t *Tx) Kind() string { return t.intent.Operation }

// Build builds under the step's sequence (the chain's, at the first build).
func (t *Tx) Build(build int) workflows.Call {
	t.built = actcelestia.BuildResult{}
	return workflows.Call{Activity: ca.CelestiaBuild, Input: actcelestia.BuildInput{Intent: t.intent, Sequence: t.sequence, Build: build}, Result: &t.built}
}

// Check has nothing to check: the signer holds the transaction to the intent and the sequence.
func (t *Tx) Check(workflow.Context, *workflows.Operation) error { return nil }

// Sign verifies and signs.
func (t *Tx) Sign() workflows.Call {
	t.signed = actcelestia.SignResult{}
	return workflows.Call{Activity: ca.CelestiaSign, Input: actcelestia.SignInput{
		Intent: t.built.Intent, Unsigned: t.built.Unsigned, Account: t.built.Account}, Result: &t.signed}
}

// Signed records the build's hash among the step's.
func (t *Tx) Signed() workflows.Signed {
	t.hashes = append(t.hashes, t.signed.Hash)
	return workflows.Signed{TxID: t.signed.Hash, Expiry: "sequence " + strconv.FormatUint(t.signed.Sequence, 10), MaxFee: t.signed.MaxFee}
}

// Fresh: none; the sequence is proof enough (a used one cannot land again).
func (t *Tx) Fresh() workflows.Call { return workflows.Call{} }

// Broadcast sends the signed bytes through endpoint 3.
func (t *Tx) Broadcast() workflows.Call {
	return workflows.Call{Activity: ca.CelestiaBroadcast, Input: actcelestia.BroadcastInput{
		Network: t.intent.Network, TxBase64: t.signed.TxBase64, Hash: t.signed.Hash}, Result: &t.sent}
}

// Confirm follows every build under the sequence.
func (t *Tx) Confirm() workflows.Call {
	t.conf = actcelestia.ConfirmResult{}
	in := actcelestia.ConfirmInput{Network: t.intent.Network, Delegator: t.intent.Delegator, Sequence: *t.sequence,
		Hashes: t.hashes, PollInterval: t.o.Options().ConfirmPollInterval}
	if t.following {
		in.ReplaceAfter = neverReplace
	}
	return workflows.Call{Activity: ca.CelestiaConfirm, Input: in, Result: &t.conf}
}

// Confirmed is where the step ended and which build landed.
func (t *Tx) Confirmed() workflows.Confirmed {
	return workflows.Confirmed{Outcome: t.conf.Outcome, Block: t.conf.Height, Fee: t.conf.Fee, Error: t.conf.Error, TxID: t.conf.Hash}
}

// StopReplacing makes Confirm follow the builds already sent.
func (t *Tx) StopReplacing() { t.following = true }

var _ workflows.Replaceable = (*Tx)(nil)

// transact runs intent as one step under the lease's next sequence and, once a build of it used
// the sequence on chain (included, with code 0 or not), moves the lease past it.
func transact(ctx workflow.Context, o *workflows.Operation, intent actcelestia.Intent, lease *wfevm.Lease) (workflows.TxRecord, error) {
	seq := lease.Next
	t := &Tx{o: o, intent: intent, sequence: &seq}
	rec, err := o.Transact(ctx, t)
	if err == nil || t.conf.Hash != "" {
		lease.Next = seq + 1
	}
	return rec, err
}
