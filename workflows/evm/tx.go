package evm

import (
	"math/big"
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
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
	// one lands, or the nonce is proven taken by another transaction.
	following bool
	// cancelling is set once the operation was cancelled after a broadcast: Build, Sign and
	// Broadcast are those of the cancel transaction (a zero-value self-transfer under the nonce).
	cancelling  bool
	cancelBuilt actevm.CancelBuildResult
	// sends counts the broadcasts started; top is the highest fee caps among the builds signed.
	sends          int
	topFee, topTip string
}

// FollowStallAfter is how long a Confirm that follows the builds sent (replacing stopped) waits
// with none mined before it answers "no final word yet": the operation then shows itself stalled,
// naming the ways out, and confirms again.
const FollowStallAfter = 10 * time.Minute

// StopReplacing makes Confirm follow the builds already sent, never asking for a replacement.
func (t *Tx) StopReplacing() { t.following = true }

// Cancel turns the step to its cancel transaction: a zero-value transfer from the staker to
// itself under the step's nonce, priced over every build sent, sent through the worker's RPC.
func (t *Tx) Cancel() bool {
	if len(t.hashes) == 0 {
		return false
	}
	t.cancelling = true
	return true
}

// NewTx is a step doing intent, under the lease's next nonce; Done moves the lease past it.
func NewTx(o *workflows.Operation, network string, intent actevm.Intent, held *lease.Lease) *Tx {
	intent.Nonce = held.Next
	return &Tx{o: o, network: network, intent: intent}
}

// Kind names the step.
func (t *Tx) Kind() string { return string(t.intent.Operation) }

// Build asks for the unsigned transaction; a rebuild raises the fees of the one it replaces.
func (t *Tx) Build(build int) workflows.Call {
	if t.cancelling {
		t.cancelBuilt = actevm.CancelBuildResult{}
		return workflows.Call{Activity: ea.EVMBuildCancel, Input: actevm.CancelBuildInput{
			Network: t.network, Staker: t.intent.Staker.Hex(), Nonce: t.intent.Nonce,
			PrevMaxFeePerGas: t.topFee, PrevMaxPriorityFeePerGas: t.topTip,
		}, Result: &t.cancelBuilt}
	}
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
	if t.cancelling {
		return workflows.Call{Activity: ea.EVMSignCancel, Input: actevm.CancelSignInput{
			Network: t.network, Intent: t.cancelBuilt.Intent, UnsignedTransaction: t.cancelBuilt.UnsignedTransaction,
		}, Result: &t.signed}
	}
	return workflows.Call{Activity: ea.EVMSign, Input: actevm.SignInput{
		Network: t.network, Intent: t.built.Intent, UnsignedTransaction: t.built.UnsignedTransaction,
	}, Result: &t.signed}
}

// Signed records the build's hash among the step's.
func (t *Tx) Signed() workflows.Signed {
	t.hashes = append(t.hashes, t.signed.Hash)
	t.topFee, t.topTip = Higher(t.signed.MaxFeePerGas, t.topFee), Higher(t.signed.MaxPriorityFeePerGas, t.topTip)
	return workflows.Signed{TxID: t.signed.Hash, Expiry: "nonce " + strconv.FormatUint(t.signed.Nonce, 10), MaxFee: t.signed.MaxFee}
}

// Fresh proves the nonce is the address's next, used by no one else.
func (t *Tx) Fresh() workflows.Call {
	return workflows.Call{Activity: ea.EVMCheckFresh, Input: actevm.FreshInput{
		Network: t.network, Staker: t.intent.Staker.Hex(), Nonce: t.intent.Nonce, Hashes: t.hashes,
	}, Result: &t.fresh}
}

// Broadcast sends the signed bytes; the cancel goes through the worker's own RPC.
func (t *Tx) Broadcast() workflows.Call {
	t.sends++
	if t.cancelling {
		return workflows.Call{Activity: ea.EVMSendRPC, Input: actevm.BroadcastInput{
			Network: t.network, Staker: t.intent.Staker.Hex(), Hash: t.signed.Hash, SignedTransaction: t.signed.SignedTransaction,
		}, Result: &t.sent}
	}
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
		in.ReplaceAfter = FollowStallAfter
	}
	if t.cancelling {
		// The newest bytes are the cancel's, sent through the worker's RPC.
		in.ResendRPC = true
	}
	return workflows.Call{Activity: ea.EVMConfirm, Input: in, Result: &t.conf}
}

// Confirmed is where the step ended, and which build landed.
func (t *Tx) Confirmed() workflows.Confirmed {
	return workflows.Confirmed{Outcome: t.conf.Outcome, Block: t.conf.Block, Fee: t.conf.Fee, Error: t.conf.Error, TxID: t.conf.Hash}
}

// Transact runs intent as one step under the lease's next nonce, and moves the lease only to the
// nonce the chain has consumed (see NextNonce).
func Transact(ctx workflow.Context, o *workflows.Operation, network string, intent actevm.Intent, held *lease.Lease) (workflows.TxRecord, error) {
	t := NewTx(o, network, intent, held)
	rec, err := o.Transact(ctx, t)
	held.Next = NextNonce(t.intent.Nonce, t.sends, t.conf, err)
	return rec, err
}

// NextNonce is where a step under nonce leaves its lease, once Transact returned err after sends
// broadcasts started, Confirm's last answer conf:
//   - nonce+1 when the chain consumed the nonce at final depth: a build of the step, or its
//     cancel, landed (finalized or reverted: conf.Hash), or another transaction took it
//     (cannot-land);
//   - nonce when nothing was sent, or when the only send was refused at its first attempt (the
//     bytes never reached the chain): the nonce is unconsumed and nothing signed can land;
//   - nonce+1 otherwise: something signed was sent whose end the chain has not told; the nonce is
//     never handed out again while it may still be consumed (a later step under it would fail its
//     freshness check rather than race it).
func NextNonce(nonce uint64, sends int, conf actevm.ConfirmResult, err error) uint64 {
	switch {
	case conf.Hash != "", conf.Outcome == activities.OutcomeCannotLand:
		return nonce + 1
	case sends == 0:
		return nonce
	case sends == 1 && workflows.IsErrorType(err, activities.ErrTransactionRejected) && conf.Outcome == "":
		return nonce
	}
	return nonce + 1
}

// Higher is the higher of two wei amounts (a that is no number gives b).
func Higher(a, b string) string {
	x, ok := new(big.Int).SetString(a, 10)
	if !ok {
		return b
	}
	if y, ok := new(big.Int).SetString(b, 10); ok && y.Cmp(x) >= 0 {
		return b
	}
	return a
}

var _ workflows.Canceller = (*Tx)(nil)
