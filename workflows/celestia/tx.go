package celestia

import (
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

// ca is the nil Activities pointer the workflows name Celestia activities through.
var ca *actcelestia.Activities

// neverReplace is the ReplaceAfter of a Confirm that must not answer expired.
const neverReplace = 100 * 365 * 24 * time.Hour

// Tx is one Celestia transaction step. Its account sequence is the next one of the delegator's
// lease (package lease, read from the chain): every build reuses it, so at most one build can
// ever land, and Confirm follows all of them by hash. Every build carries a timeout height a
// bounded number of blocks ahead of the chain's height at its build, chosen by the build and
// pinned here: a replacement (Confirm answered replace: unseen, the sequence unused, the timeout
// height ahead) reuses it, and is the same bytes sent again (the signature is deterministic); a
// build after Confirm proved the others cannot land by their timeout heights (the sequence still
// unused) takes a new one, and the step goes on under the same sequence. Confirm proves "cannot
// land" by the chain passing every build's timeout height with none of them in the blocks they
// could be in, or by another transaction read in a block holding the sequence.
type Tx struct {
	o        *workflows.Operation
	intent   actcelestia.Intent
	sequence *uint64
	hashes   []string
	// timeouts are the timeout heights of hashes, in order; timeout is the newest build's;
	// fromHeight the lowest height a build can be in (one past the chain's height at the first
	// build).
	timeouts   []uint64
	timeout    uint64
	fromHeight uint64
	built      actcelestia.BuildResult
	signed     actcelestia.SignResult
	sent       actcelestia.BroadcastResult
	conf       actcelestia.ConfirmResult
	following  bool
}

// Kind names the step.
func (t *Tx) Kind() string { return t.intent.Operation }

// Build builds under the step's sequence (the chain's, at the first build). A replacement keeps
// the timeout height of the build it replaces; any other build lets the build choose one.
func (t *Tx) Build(build int) workflows.Call {
	timeout := uint64(0)
	if build > 1 && t.conf.Outcome == activities.OutcomeReplace {
		timeout = t.timeout
	}
	t.built = actcelestia.BuildResult{}
	return workflows.Call{Activity: ca.CelestiaBuild, Input: actcelestia.BuildInput{Intent: t.intent, Sequence: t.sequence, Build: build,
		TimeoutHeight: timeout}, Result: &t.built}
}

// Check records the build's timeout height and where its blocks start; the signer holds the
// transaction to the intent, the sequence and that timeout height.
func (t *Tx) Check(workflow.Context, *workflows.Operation) error {
	t.timeout = t.built.Intent.TimeoutHeight
	if from := t.built.Height + 1; t.built.Height > 0 && (t.fromHeight == 0 || from < t.fromHeight) {
		t.fromHeight = from
	}
	return nil
}

// Sign verifies and signs.
func (t *Tx) Sign() workflows.Call {
	t.signed = actcelestia.SignResult{}
	return workflows.Call{Activity: ca.CelestiaSign, Input: actcelestia.SignInput{
		Intent: t.built.Intent, Unsigned: t.built.Unsigned, Account: t.built.Account}, Result: &t.signed}
}

// Signed records the build's hash and timeout height among the step's (once: a replacement may
// be the same bytes).
func (t *Tx) Signed() workflows.Signed {
	if !slices.Contains(t.hashes, t.signed.Hash) {
		t.hashes = append(t.hashes, t.signed.Hash)
		t.timeouts = append(t.timeouts, t.timeout)
	}
	expiry := "sequence " + strconv.FormatUint(t.signed.Sequence, 10)
	if t.timeout > 0 {
		expiry += ", timeout height " + strconv.FormatUint(t.timeout, 10)
	}
	return workflows.Signed{TxID: t.signed.Hash, Expiry: expiry, MaxFee: t.signed.MaxFee}
}

// Fresh: none; the sequence is proof enough (a used one cannot land again).
func (t *Tx) Fresh() workflows.Call { return workflows.Call{} }

// Broadcast sends the signed bytes through endpoint 3.
func (t *Tx) Broadcast() workflows.Call {
	return workflows.Call{Activity: ca.CelestiaBroadcast, Input: actcelestia.BroadcastInput{
		Network: t.intent.Network, TxBase64: t.signed.TxBase64, Hash: t.signed.Hash}, Result: &t.sent}
}

// Confirm follows every build under the sequence; once replacing stopped it never answers
// replace: it follows until one build is included or none can be.
func (t *Tx) Confirm() workflows.Call {
	t.conf = actcelestia.ConfirmResult{}
	in := actcelestia.ConfirmInput{Network: t.intent.Network, Delegator: t.intent.Delegator, Sequence: *t.sequence,
		Hashes: t.hashes, TimeoutHeights: t.timeouts, FromHeight: t.fromHeight, PollInterval: t.o.Options().ConfirmPollInterval}
	if t.following {
		in.ReplaceAfter = neverReplace
	}
	return workflows.Call{Activity: ca.CelestiaConfirm, Input: in, Result: &t.conf}
}

// Confirmed is where the step ended and which build landed (or, cannot land, the proof).
func (t *Tx) Confirmed() workflows.Confirmed {
	return workflows.Confirmed{Outcome: t.conf.Outcome, Block: t.conf.Height, Fee: t.conf.Fee, Error: t.conf.Error, TxID: t.conf.Hash,
		// Proven by the timeout heights, not by another transaction holding the sequence: the
		// sequence is unused and a build with a new timeout height can land.
		NonceFree: t.conf.Outcome == activities.OutcomeCannotLand && t.conf.Holder == ""}
}

// StopReplacing makes Confirm follow the builds already sent, never answering replace: on
// Celestia the mempool takes no second transaction under a sequence, so a cancelled step waits
// for the chain's word (one of its builds included, or every timeout height passed).
func (t *Tx) StopReplacing() { t.following = true }

var _ workflows.Replaceable = (*Tx)(nil)

// transact runs intent as one step under the lease's next sequence and, once a build of it used
// the sequence on chain (included, with code 0 or not), moves the lease past it.
func transact(ctx workflow.Context, o *workflows.Operation, intent actcelestia.Intent, held *lease.Lease) (workflows.TxRecord, error) {
	seq := held.Next
	t := &Tx{o: o, intent: intent, sequence: &seq}
	rec, err := o.Transact(ctx, t)
	// The sequence is consumed when one of the builds was included (with code 0 or not) or another
	// transaction was proven to hold it.
	if err == nil || t.conf.Hash != "" || t.conf.Holder != "" {
		held.Next = seq + 1
	}
	return rec, err
}
