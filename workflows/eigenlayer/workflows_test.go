package eigenlayer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

const (
	owner   = "0x1111111111111111111111111111111111111111"
	pod     = "0x2222222222222222222222222222222222222222"
	network = "dev"
)

// fakePod is a pod's checkpoint as the fake chain keeps it: a landed startCheckpoint starts a
// checkpoint of validators; each landed batch proves its proofs.
type fakePod struct {
	mu                  sync.Mutex
	validators          uint64
	ts, last, remaining uint64
	starts              []actel.StartBuildInput
	proofBuilds         []actel.ProofsBuildInput
	signs               []actel.ProofsSignInput
	sent                []actevm.BroadcastInput
	confirms            []actevm.ConfirmInput
	// buildErrs answer proofs builds in turn (nil: build); frontRun has another party prove the
	// next batch's validators just before it lands: it lands, and the pod skips their proofs (as
	// EigenLayer's EigenPod does: it skips a validator already checkpointed, it does not revert).
	buildErrs []error
	frontRun  bool
	// otherParty proves that many validators when the next proofs build is asked.
	otherParty uint64
	batch      map[string]uint64
	// leases lists the addresses whose nonce lease was requested, in turn.
	leases []string
}

func (f *fakePod) requestLease(_ context.Context, in lease.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leases = append(f.leases, in.Address)
	return nil
}

func (f *fakePod) read(context.Context, actel.PodInput) (actel.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return actel.Pod{Pod: pod, CheckpointTimestamp: f.ts, LastCheckpointTimestamp: f.last, ProofsRemaining: f.remaining,
		ActiveValidators: f.validators, BeaconBlockRoot: "0xroot", StartTx: "0xstart-found-in-logs"}, nil
}

func (f *fakePod) buildStart(_ context.Context, in actel.StartBuildInput) (actel.StartBuildResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ts != 0 {
		return actel.StartBuildResult{}, temporal.NewNonRetryableApplicationError("active", actel.ErrCheckpointActive, nil)
	}
	f.starts = append(f.starts, in)
	return actel.StartBuildResult{UnsignedTransaction: "0xstart", Intent: in.Intent}, nil
}

func (f *fakePod) buildProofs(_ context.Context, in actel.ProofsBuildInput) (actel.ProofsBuildResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.proofBuilds = append(f.proofBuilds, in)
	if f.otherParty > 0 {
		f.prove(f.otherParty)
		f.otherParty = 0
	}
	if len(f.buildErrs) > 0 {
		err := f.buildErrs[0]
		f.buildErrs = f.buildErrs[1:]
		if err != nil {
			return actel.ProofsBuildResult{}, err
		}
	}
	return actel.ProofsBuildResult{Batch: actel.BatchRef{Owner: in.Owner, ActivateTx: in.ActivateTx, Digest: fmt.Sprintf("0x%064x", len(f.proofBuilds))},
		Proofs: int(min(80, f.remaining))}, nil
}

func (f *fakePod) prove(n uint64) {
	f.remaining -= min(n, f.remaining)
	if f.remaining == 0 {
		f.last, f.ts = f.ts, 0
	}
}

func (f *fakePod) signStart(_ context.Context, in actel.StartSignInput) (actevm.SignResult, error) {
	return actevm.SignResult{Hash: fmt.Sprintf("0xstart-%d", in.Intent.Nonce), SignedTransaction: "0xs", Nonce: in.Intent.Nonce, MaxFee: "1", MaxFeePerGas: "1", MaxPriorityFeePerGas: "1"}, nil
}

func (f *fakePod) signProofs(_ context.Context, in actel.ProofsSignInput) (actevm.SignResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signs = append(f.signs, in)
	h := fmt.Sprintf("0xproofs-%d-%d", in.Intent.Nonce, len(f.proofBuilds))
	f.batch[h] = min(80, f.remaining)
	return actevm.SignResult{Hash: h, Nonce: in.Intent.Nonce, MaxFee: "1", MaxFeePerGas: "1", MaxPriorityFeePerGas: "1"}, nil
}

func (f *fakePod) broadcast(_ context.Context, in actevm.BroadcastInput) (actevm.BroadcastResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, in)
	return actevm.BroadcastResult{Hash: in.Hash}, nil
}

func (f *fakePod) confirm(_ context.Context, in actevm.ConfirmInput) (actevm.ConfirmResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.confirms = append(f.confirms, in)
	h := in.Hashes[len(in.Hashes)-1]
	ok := actevm.ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: h, Block: 10, Fee: "100"}
	if strings.HasPrefix(h, "0xstart") {
		f.ts, f.remaining = 1000, f.validators
		return ok, nil
	}
	if f.frontRun {
		f.frontRun = false
		f.prove(f.batch[h]) // another party's transaction, first in the block
		return ok, nil      // ours lands and proves nothing: every proof skipped
	}
	f.prove(f.batch[h])
	return ok, nil
}

type env struct {
	*testsuite.TestWorkflowEnvironment
	pod *fakePod
}

func newEnv(t *testing.T, p *fakePod) *env {
	var suite testsuite.WorkflowTestSuite
	p.batch = map[string]uint64{}
	e := &env{TestWorkflowEnvironment: suite.NewTestWorkflowEnvironment(), pod: p}
	Register(e)
	e.RegisterActivity(ea)
	e.RegisterActivity(el)
	e.OnActivity(ea.EVMRequestLease, mock.Anything, mock.Anything).Return(p.requestLease).Maybe()
	e.OnActivity(el.EigenReadPod, mock.Anything, mock.Anything).Return(p.read).Maybe()
	e.OnActivity(el.EigenBuildStart, mock.Anything, mock.Anything).Return(p.buildStart).Maybe()
	e.OnActivity(el.EigenSignStart, mock.Anything, mock.Anything).Return(p.signStart).Maybe()
	e.OnActivity(el.EigenBuildProofs, mock.Anything, mock.Anything).Return(p.buildProofs).Maybe()
	e.OnActivity(el.EigenSignProofs, mock.Anything, mock.Anything).Return(p.signProofs).Maybe()
	e.OnActivity(ea.EVMCheckFresh, mock.Anything, mock.Anything).Return(actevm.FreshResult{}, nil).Maybe()
	e.OnActivity(ea.EVMSendRPC, mock.Anything, mock.Anything).Return(p.broadcast).Maybe()
	e.OnActivity(ea.EVMConfirm, mock.Anything, mock.Anything).Return(p.confirm).Maybe()
	e.OnSignalExternalWorkflow(mock.Anything, lease.ID(lease.EVM, network, common.HexToAddress(owner).Hex()), "", lease.SignalRelease, mock.Anything).Return(nil).Maybe()
	e.RegisterDelayedCallback(func() {
		for _, n := range []uint64{5, 6} {
			e.SignalWorkflow(lease.SignalGrant, lease.Grant{Nonce: n})
		}
	}, 0)
	t.Cleanup(func() { e.AssertExpectations(t) })
	return e
}

func (e *env) result(t *testing.T) Result {
	t.Helper()
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var r Result
	require.NoError(t, e.GetWorkflowResult(&r))
	return r
}

func (e *env) status(t *testing.T) workflows.Status {
	t.Helper()
	v, err := e.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, err)
	var st workflows.Status
	require.NoError(t, v.Get(&st))
	return st
}

// TestCheckpointStartsOnceAndProvesInBatches: a pod of 200 validators: one startCheckpoint, then
// three batches (80, 80, 40), endpoint 5 asked with the start's hash as activateTx.
func TestCheckpointStartsOnceAndProvesInBatches(t *testing.T) {
	e := newEnv(t, &fakePod{validators: 200})
	e.ExecuteWorkflow(CheckpointWorkflowType, CheckpointInput{Network: network, Owner: owner})
	r := e.result(t)
	require.Len(t, e.pod.starts, 1)
	assert.EqualValues(t, 5, e.pod.starts[0].Intent.Nonce)
	require.Len(t, e.pod.proofBuilds, 3)
	for i, b := range e.pod.proofBuilds {
		assert.Equal(t, "0xstart-5", b.ActivateTx)
		assert.EqualValues(t, 6+i, b.Nonce, "consecutive nonces")
		assert.EqualValues(t, 1000, b.CheckpointTimestamp)
	}
	assert.Len(t, e.pod.sent, 4, "1 + 3 transactions")
	for _, in := range e.pod.sent {
		assert.Equal(t, actel.ChainEigenLayer, in.Chain, "counted under eigenlayer")
	}
	require.Len(t, e.pod.confirms, 4)
	for _, in := range e.pod.confirms {
		assert.True(t, in.ResendRPC, "re-sent through the worker's RPC, never endpoint 4")
	}
	assert.Equal(t, 3, r.BatchesSent)
	assert.EqualValues(t, 1000, r.CheckpointTimestamp)
	assert.Equal(t, "0xstart-5", r.StartTx)
	assert.False(t, r.Resumed)
	st := e.status(t)
	require.NotNil(t, st.Checkpoint)
	assert.Equal(t, 3, st.Checkpoint.BatchesSent)
	assert.Zero(t, st.Checkpoint.ProofsRemaining)
	assert.Equal(t, []string{common.HexToAddress(owner).Hex()}, e.pod.leases,
		"the owner, which starts the checkpoint and submits the proofs, leases its nonces once")
}

// TestCheckpointSubmitterLeasesItsOwnNonces: a submitter other than the owner sends the proofs
// under its own lease's nonces; the owner's lease is held for the start alone.
func TestCheckpointSubmitterLeasesItsOwnNonces(t *testing.T) {
	const submitter = "0x3333333333333333333333333333333333333333"
	e := newEnv(t, &fakePod{validators: 100})
	e.OnSignalExternalWorkflow(mock.Anything, lease.ID(lease.EVM, network, common.HexToAddress(submitter).Hex()), "", lease.SignalRelease, mock.Anything).Return(nil).Once()
	e.ExecuteWorkflow(CheckpointWorkflowType, CheckpointInput{Network: network, Owner: owner, Submitter: submitter})
	r := e.result(t)
	assert.Equal(t, []string{common.HexToAddress(owner).Hex(), common.HexToAddress(submitter).Hex()}, e.pod.leases)
	require.Len(t, e.pod.starts, 1)
	assert.EqualValues(t, 5, e.pod.starts[0].Intent.Nonce, "the owner's first granted nonce")
	require.Len(t, e.pod.proofBuilds, 2)
	for i, b := range e.pod.proofBuilds {
		assert.EqualValues(t, 6+i, b.Nonce, "from the submitter's grant")
	}
	assert.Equal(t, 2, r.BatchesSent)
}

// TestCheckpointResumesAnActiveOne: an active checkpoint is proven on; no startCheckpoint is built.
func TestCheckpointResumesAnActiveOne(t *testing.T) {
	e := newEnv(t, &fakePod{validators: 200, ts: 900, remaining: 120})
	e.ExecuteWorkflow(CheckpointWorkflowType, CheckpointInput{Network: network, Owner: owner})
	r := e.result(t)
	assert.Empty(t, e.pod.starts)
	assert.Len(t, e.pod.sent, 2)
	assert.True(t, r.Resumed)
	assert.Equal(t, "0xstart-found-in-logs", e.pod.proofBuilds[0].ActivateTx)
	assert.EqualValues(t, 900, r.CheckpointTimestamp)
}

// TestCheckpointAnotherPartyProvesFirst: a batch found already proven before signing is read past,
// and one another party proves while it is in flight lands with its proofs skipped; neither is a
// failure, and the operation proves the rest.
func TestCheckpointAnotherPartyProvesFirst(t *testing.T) {
	f := &fakePod{validators: 200, otherParty: 80,
		buildErrs: []error{temporal.NewNonRetryableApplicationError("proven", actel.ErrAlreadyProven, nil)},
	}
	e := newEnv(t, f)
	f.frontRun = true
	e.ExecuteWorkflow(CheckpointWorkflowType, CheckpointInput{Network: network, Owner: owner})
	r := e.result(t)
	assert.Len(t, e.pod.starts, 1)
	assert.Equal(t, 2, r.BatchesSent, "the other party proved 80 before the first build and 80 more under a batch that landed proving nothing; the operation's second batch the last 40")
	assert.Zero(t, e.pod.remaining)
	assert.EqualValues(t, 1000, e.pod.last)
}

// TestCheckpointRefusedBatchFailsWithNothingSent: a proofs transaction the verifier refuses ends
// the operation; only the start was sent.
func TestCheckpointRefusedBatchFailsWithNothingSent(t *testing.T) {
	f := &fakePod{validators: 200, buildErrs: []error{
		temporal.NewNonRetryableApplicationError("to: want pod, got another; nothing was signed", activities.ErrVerificationFailed, nil)}}
	e := newEnv(t, f)
	e.ExecuteWorkflow(CheckpointWorkflowType, CheckpointInput{Network: network, Owner: owner})
	require.True(t, e.IsWorkflowCompleted())
	require.Error(t, e.GetWorkflowError())
	assert.ErrorContains(t, e.GetWorkflowError(), "nothing was signed")
	require.Len(t, e.pod.sent, 1)
	assert.Equal(t, "0xstart-5", e.pod.sent[0].Hash)
}

// TestCheckpointInputRefused: a bad owner is refused before anything runs.
func TestCheckpointInputRefused(t *testing.T) {
	e := newEnv(t, &fakePod{})
	e.ExecuteWorkflow(CheckpointWorkflowType, CheckpointInput{Network: network, Owner: "nope"})
	require.Error(t, e.GetWorkflowError())
	assert.Empty(t, e.pod.sent)
}

// TestCheckpointContinuesAsNewOnItsBudget: with one batch a run, a pod of 200 validators is
// checkpointed in three runs (start + batch, batch, batch): each run ends continuing as new with
// the same workflow type, carrying the checkpoint, the batches sent and the transactions that
// landed (references, no transaction's bytes); the next run proves on without a second start,
// and the last returns every transaction of the operation.
func TestCheckpointContinuesAsNewOnItsBudget(t *testing.T) {
	f := &fakePod{validators: 200}
	in := CheckpointInput{Network: network, Owner: owner, BatchesPerRun: 1}
	var r Result
	runs := 0
	for ; runs < 5; runs++ {
		e := newEnv(t, f)
		e.ExecuteWorkflow(CheckpointWorkflowType, in)
		require.True(t, e.IsWorkflowCompleted())
		var can *workflow.ContinueAsNewError
		if err := e.GetWorkflowError(); errors.As(err, &can) {
			assert.Equal(t, CheckpointWorkflowType, can.WorkflowType.Name)
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
			carried, err := json.Marshal(in)
			require.NoError(t, err)
			assert.Less(t, len(carried), 4096, "references only: %s", carried)
			require.NotNil(t, in.Continued)
			assert.Equal(t, runs+1, in.Continued.Run)
			assert.Equal(t, runs+1, in.Continued.Progress.BatchesSent)
			assert.EqualValues(t, 1000, in.Continued.Progress.Timestamp)
			assert.Len(t, in.Continued.Operation.Transactions, runs+2, "the start and each batch that landed")
			continue
		}
		r = e.result(t)
		break
	}
	assert.Equal(t, 2, runs, "three runs")
	assert.Len(t, f.starts, 1, "one startCheckpoint across the runs")
	assert.Equal(t, 3, r.BatchesSent)
	assert.Len(t, r.Transactions, 4, "1 + 3 transactions, across the runs")
	assert.Equal(t, "400", r.Fee, "the fees of every run")
	assert.Equal(t, "0xstart-5", r.StartTx)
	assert.Zero(t, f.remaining)
	for _, b := range f.proofBuilds {
		assert.Equal(t, "0xstart-5", b.ActivateTx, "every run proves the checkpoint the first started")
	}
}

// TestCheckpointSignsTheBatchItBuilt: the signature is asked for the batch the build named (its
// digest), the workflow holding no proofs transaction's bytes, and each batch is sent by hash
// from the worker that signed it.
func TestCheckpointSignsTheBatchItBuilt(t *testing.T) {
	e := newEnv(t, &fakePod{validators: 200})
	var localSends []string
	e.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, args []interface{}) {
		if info.ActivityType.Name == "EVMSendRPC" {
			localSends = append(localSends, args[0].(actevm.BroadcastInput).Hash)
		}
	})
	e.ExecuteWorkflow(CheckpointWorkflowType, CheckpointInput{Network: network, Owner: owner})
	e.result(t)
	assert.Len(t, localSends, 3, "each batch sent by the worker that signed it (a local activity); the start as before")
	require.Len(t, e.pod.signs, 3)
	for i, in := range e.pod.signs {
		assert.Equal(t, fmt.Sprintf("0x%064x", i+1), in.Batch.Digest)
		assert.Empty(t, in.ServedTransaction)
	}
	for _, in := range e.pod.sent[1:] {
		assert.Empty(t, in.SignedTransaction, "sent by hash")
	}
}

// TestCheckpointSignaturesAttributeBounded: a run that signs more transactions than
// StakeflowSignatures holds (30 batches in one run here) lists the newest
// workflows.MaxSignaturesAttribute: the server terminates a workflow whose attribute value passes
// 2 KB (about 29 EVM hashes).
func TestCheckpointSignaturesAttributeBounded(t *testing.T) {
	f := &fakePod{validators: 30 * 80}
	e := newEnv(t, f)
	var last []string
	e.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		for k, v := range args.Get(0).(temporal.SearchAttributes).GetUntypedValues() {
			if k.GetName() == workflows.SASignatures.GetName() {
				last = v.([]string)
			}
		}
	}).Return(nil)
	e.ExecuteWorkflow(CheckpointWorkflowType, CheckpointInput{Network: network, Owner: owner, BatchesPerRun: 100})
	r := e.result(t)
	require.Equal(t, 30, r.BatchesSent)
	var sent []string
	for _, in := range f.sent {
		sent = append(sent, in.Hash)
	}
	require.Len(t, sent, 31)
	assert.Equal(t, sent[len(sent)-workflows.MaxSignaturesAttribute:], last, "the newest, in order")
}
