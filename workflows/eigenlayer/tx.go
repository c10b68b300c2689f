package eigenlayer

import (
	"strconv"

	"go.temporal.io/sdk/workflow"

	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/workflows"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

// Nil Activities pointers the workflow names activities through.
var (
	ea *actevm.Activities
	el *actel.Activities
)

// Step kinds.
const (
	KindStart  = "start-checkpoint"
	KindProofs = "verify-checkpoint-proofs"
)

// tx is one checkpoint transaction (the owner's startCheckpoint or one proofs batch) for the
// core's transact loop, under one nonce of the sender's lease: a later build replaces the earlier
// with higher fees, and Confirm follows all of them (as workflows/evm's Tx).
type tx struct {
	o       *workflows.Operation
	network string
	sender  string
	nonce   uint64
	start   *signerevm.StartIntent  // set for KindStart
	proofs  *actel.ProofsBuildInput // set for KindProofs
	hashes  []string

	startBuilt  actel.StartBuildResult
	proofsBuilt actel.ProofsBuildResult
	signed      actevm.SignResult
	fresh       actevm.FreshResult
	sent        actevm.BroadcastResult
	conf        actevm.ConfirmResult
	following   bool
	// sends counts the broadcasts started; topFee and topTip are the highest fee caps signed.
	sends          int
	topFee, topTip string
	// cancelling: Build, Sign and Broadcast are those of the cancel transaction (a zero-value
	// transfer from the sender to itself under the nonce), after a cancel once a build was sent.
	cancelling  bool
	cancelBuilt actevm.CancelBuildResult
}

// Cancel turns the step to its cancel transaction (see workflows.Canceller).
func (t *tx) Cancel() bool {
	if len(t.hashes) == 0 {
		return false
	}
	t.cancelling = true
	return true
}

func (t *tx) Kind() string {
	if t.start != nil {
		return KindStart
	}
	return KindProofs
}

func (t *tx) StopReplacing() { t.following = true }

func (t *tx) Build(build int) workflows.Call {
	if t.cancelling {
		t.cancelBuilt = actevm.CancelBuildResult{}
		return workflows.Call{Activity: ea.EVMBuildCancel, Input: actevm.CancelBuildInput{
			Network: t.network, Staker: t.sender, Nonce: t.nonce, PrevMaxFeePerGas: t.topFee, PrevMaxPriorityFeePerGas: t.topTip,
		}, Result: &t.cancelBuilt}
	}
	prevFee, prevTip := "", ""
	if len(t.hashes) > 0 {
		prevFee, prevTip = t.signed.MaxFeePerGas, t.signed.MaxPriorityFeePerGas
	}
	if t.start != nil {
		in := actel.StartBuildInput{Network: t.network, Intent: *t.start, Build: build, PrevMaxFeePerGas: prevFee, PrevMaxPriorityFeePerGas: prevTip}
		in.Intent.Nonce = t.nonce
		t.startBuilt = actel.StartBuildResult{}
		return workflows.Call{Activity: el.EigenBuildStart, Input: in, Result: &t.startBuilt}
	}
	in := *t.proofs
	in.Nonce, in.Build, in.PrevMaxFeePerGas, in.PrevMaxPriorityFeePerGas = t.nonce, build, prevFee, prevTip
	t.proofsBuilt = actel.ProofsBuildResult{}
	return workflows.Call{Activity: el.EigenBuildProofs, Input: in, Result: &t.proofsBuilt}
}

func (t *tx) Check(workflow.Context, *workflows.Operation) error { return nil }

func (t *tx) Sign() workflows.Call {
	t.signed = actevm.SignResult{}
	if t.cancelling {
		return workflows.Call{Activity: ea.EVMSignCancel, Input: actevm.CancelSignInput{
			Network: t.network, Intent: t.cancelBuilt.Intent, UnsignedTransaction: t.cancelBuilt.UnsignedTransaction,
		}, Result: &t.signed}
	}
	if t.start != nil {
		return workflows.Call{Activity: el.EigenSignStart, Input: actel.StartSignInput{
			Network: t.network, Intent: t.startBuilt.Intent, UnsignedTransaction: t.startBuilt.UnsignedTransaction,
		}, Result: &t.signed}
	}
	return workflows.Call{Activity: el.EigenSignProofs, Input: actel.ProofsSignInput{
		Network: t.network, Intent: t.proofsBuilt.Intent, Batch: t.proofsBuilt.Batch, ServedTransaction: t.proofsBuilt.ServedTransaction,
	}, Result: &t.signed}
}

func (t *tx) Signed() workflows.Signed {
	t.hashes = append(t.hashes, t.signed.Hash)
	t.topFee, t.topTip = wfevm.Higher(t.signed.MaxFeePerGas, t.topFee), wfevm.Higher(t.signed.MaxPriorityFeePerGas, t.topTip)
	return workflows.Signed{TxID: t.signed.Hash, Expiry: "nonce " + strconv.FormatUint(t.signed.Nonce, 10), MaxFee: t.signed.MaxFee}
}

func (t *tx) Fresh() workflows.Call {
	return workflows.Call{Activity: ea.EVMCheckFresh, Input: actevm.FreshInput{
		Network: t.network, Staker: t.sender, Nonce: t.nonce, Hashes: t.hashes,
	}, Result: &t.fresh}
}

// Broadcast sends through the worker's own RPC of the network: the staking service has no
// broadcast endpoint for checkpoint transactions (its endpoint 4 is Polygon's). A proofs batch
// signed by reference (its bytes in the signing worker's RawCache, named by hash) is sent by a
// local activity, in the worker that signed it.
func (t *tx) Broadcast() workflows.Call {
	t.sends++
	return workflows.Call{Activity: ea.EVMSendRPC, Input: actevm.BroadcastInput{
		Network: t.network, Staker: t.sender, Hash: t.signed.Hash, SignedTransaction: t.signed.SignedTransaction, Chain: actel.ChainEigenLayer,
	}, Result: &t.sent, Local: t.signed.SignedTransaction == ""}
}

func (t *tx) Confirm() workflows.Call {
	t.conf = actevm.ConfirmResult{}
	in := actevm.ConfirmInput{
		Network: t.network, Staker: t.sender, Nonce: t.nonce, Hashes: t.hashes,
		SignedTransaction: t.signed.SignedTransaction, ResendRPC: true, PollInterval: t.o.Options().ConfirmPollInterval,
	}
	if t.following {
		in.ReplaceAfter = wfevm.FollowStallAfter
	}
	return workflows.Call{Activity: ea.EVMConfirm, Input: in, Result: &t.conf}
}

func (t *tx) Confirmed() workflows.Confirmed {
	return workflows.Confirmed{Outcome: t.conf.Outcome, Block: t.conf.Block, Fee: t.conf.Fee, Error: t.conf.Error, TxID: t.conf.Hash}
}

// transact runs t under the lease's next nonce and moves the lease only to the nonce the chain
// has consumed (wfevm.NextNonce).
func transact(ctx workflow.Context, o *workflows.Operation, t *tx, held *lease.Lease) (workflows.TxRecord, error) {
	t.nonce = held.Next
	rec, err := o.Transact(ctx, t)
	held.Next = wfevm.NextNonce(t.nonce, t.sends, t.conf, err)
	return rec, err
}

var _ workflows.Canceller = (*tx)(nil)
