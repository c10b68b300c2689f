package evm

import (
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/workflows"
)

// ea is the nil Activities pointer the workflows name EVM activities through.
var ea *actevm.Activities

// Tx is one EVM transaction step (an approve, a delegate, ...) for the core's transact loop. Its
// nonce comes from the address's lease and stays the same for every build: a build after the
// first replaces the previous one with higher fees, so at most one of them can ever land, and
// Confirm follows all of them.
type Tx struct {
	o       *workflows.Operation
	network string
	intent  actevm.Intent
	// hashes lists every build signed under the nonce, the newest last.
	hashes []string
	built  actevm.BuildResult
	signed actevm.SignResult
	fresh  actevm.FreshResult
	sent   actevm.BroadcastResult
	conf   actevm.ConfirmResult
	// following is set once no replacement will be sent: Confirm follows the builds sent until
	// one lands.
	following bool
}

// neverReplace is the ReplaceAfter of a Confirm that must not answer expired.
const neverReplace = 100 * 365 * 24 * time.Hour

// StopReplacing makes Confirm follow the builds already sent, never asking for a replacement.
func (t *Tx) StopReplacing() { t.following = true }

// NewTx is a step doing intent, under the lease's next nonce; Done moves the lease past it.
func NewTx(o *workflows.Operation, network string, intent actevm.Intent, lease *Lease) *Tx {
	intent.Nonce = lease.Next
	return &Tx{o: o, network: network, intent: intent}
}

// Kind names the step.
func (t *Tx) Kind() string { return string(t.intent.Operation) }

// Build asks for the unsigned transaction; a rebuild raises the fees of the one it replaces.
func (t *Tx) Build(build int) workflows.Call {
	t.built = actevm.BuildResult{}
	in := actevm.BuildInput{Network: t.network, Intent: t.intent, Build: build}
	if len(t.hashes) > 0 {
		in.PrevMaxFeePerGas, in.PrevMaxPriorityFeePerGas = t.signed.MaxFeePerGas, t.signed.MaxPriorityFeePerGas
	}
	return workflows.Call{Activity: ea.EVMBuild, Input: in, Result: &t.built}
}

// Check has nothing to check between build and signature: the signer holds the transaction to
// the intent and the values the builder chose, exactly.
func (t *Tx) Check(workflow.Context, *workflows.Operation) error { return nil }

// Sign verifies and signs.
func (t *Tx) Sign() workflows.Call {
	t.signed = actevm.SignResult{}
	return workflows.Call{Activity: ea.EVMSign, Input: actevm.SignInput{
		Network: t.network, Intent: t.built.Intent, UnsignedTransaction: t.built.UnsignedTransaction,
	}, Result: &t.signed}
}

// Signed records the build's hash among the step's.
func (t *Tx) Signed() workflows.Signed {
	t.hashes = append(t.hashes, t.signed.Hash)
	return workflows.Signed{TxID: t.signed.Hash, Expiry: "nonce " + strconv.FormatUint(t.signed.Nonce, 10), MaxFee: t.signed.MaxFee}
}

// Fresh proves the nonce is the address's next, used by no one else.
func (t *Tx) Fresh() workflows.Call {
	return workflows.Call{Activity: ea.EVMCheckFresh, Input: actevm.FreshInput{
		Network: t.network, Staker: t.intent.Staker.Hex(), Nonce: t.intent.Nonce, Hashes: t.hashes,
	}, Result: &t.fresh}
}

// Broadcast sends the signed bytes.
func (t *Tx) Broadcast() workflows.Call {
	return workflows.Call{Activity: ea.EVMBroadcast, Input: actevm.BroadcastInput{
		Network: t.network, Staker: t.intent.Staker.Hex(), Hash: t.signed.Hash, SignedTransaction: t.signed.SignedTransaction,
	}, Result: &t.sent}
}

// Confirm follows every build under the nonce.
func (t *Tx) Confirm() workflows.Call {
	t.conf = actevm.ConfirmResult{}
	in := actevm.ConfirmInput{
		Network: t.network, Staker: t.intent.Staker.Hex(), Nonce: t.intent.Nonce, Hashes: t.hashes,
		SignedTransaction: t.signed.SignedTransaction, PollInterval: t.o.Options().ConfirmPollInterval,
	}
	if t.following {
		in.ReplaceAfter = neverReplace
	}
	return workflows.Call{Activity: ea.EVMConfirm, Input: in, Result: &t.conf}
}

// Confirmed is where the step ended, and which build landed.
func (t *Tx) Confirmed() workflows.Confirmed {
	return workflows.Confirmed{Outcome: t.conf.Outcome, Block: t.conf.Block, Fee: t.conf.Fee, Error: t.conf.Error, TxID: t.conf.Hash}
}

// Transact runs intent as one step under the lease's next nonce and, once a build of it holds
// the nonce on chain (finalized or failed), moves the lease past it.
func Transact(ctx workflow.Context, o *workflows.Operation, network string, intent actevm.Intent, lease *Lease) (workflows.TxRecord, error) {
	t := NewTx(o, network, intent, lease)
	rec, err := o.Transact(ctx, t)
	if err == nil || t.conf.Hash != "" {
		// A build landed (finalized, or reverted: a reverted transaction consumes its nonce too).
		lease.Next = t.intent.Nonce + 1
	}
	return rec, err
}

var _ workflows.Replaceable = (*Tx)(nil)
