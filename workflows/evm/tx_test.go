package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/workflows"
)

const addr = "0x1111111111111111111111111111111111111111"

// An operation of an EVM chain reduced to its lease and its steps: it leases the address's
// nonces, runs its steps (one EVM Tx each) and gives the lease back whatever happened.

type leaseInput struct {
	Steps   []string
	Options workflows.Options
}

type leaseResult struct {
	Records []workflows.TxRecord
}

func leaseWorkflow(ctx workflow.Context, in leaseInput) (leaseResult, error) {
	o, err := workflows.NewOperation(ctx, workflows.Setup{Chain: "evmtest", Network: "dev", Operation: "delegate",
		Staker: addr, Unit: "wei", Options: in.Options, Waits: []string{lease.StepWaitingNonce}})
	if err != nil {
		return leaseResult{}, err
	}
	held, err := lease.Acquire(ctx, o, lease.EVM, "dev", addr, ea.EVMRequestLease)
	if err != nil {
		return leaseResult{}, o.Fail(ctx, err)
	}
	var res leaseResult
	for _, op := range in.Steps {
		rec, err := Transact(ctx, o, "dev", actevm.Intent{Operation: actevm.Operation(op), ChainID: 1337,
			Staker: common.HexToAddress(addr)}, held)
		if err != nil {
			_ = held.Release(ctx)
			return leaseResult{}, o.Fail(ctx, err)
		}
		res.Records = append(res.Records, rec)
	}
	if err := held.Release(ctx); err != nil {
		return leaseResult{}, err
	}
	o.Done(ctx)
	return res, nil
}

// evmChain fakes the EVM activities of a step; every input is recorded.
type evmChain struct {
	mu       sync.Mutex
	builds   []actevm.BuildInput
	signs    []actevm.SignInput
	fresh    []actevm.FreshInput
	sent     []actevm.BroadcastInput
	confirms []actevm.ConfirmInput
	// answers are Confirm's answers in turn (the last repeats); none: finalized, the newest hash.
	answers  []actevm.ConfirmResult
	releases []lease.Release
	requests []lease.Request
	// buildErrs fail the builds in order (nil: the build succeeds); broadcastErrs fail the n-th
	// broadcast (from 0); freshErr fails every freshness check.
	buildErrs     []error
	broadcastErrs map[int]error
	freshErr      error
	// confirmAfter is how long each Confirm takes.
	confirmAfter time.Duration
}

func (c *evmChain) build(_ context.Context, in actevm.BuildInput) (actevm.BuildResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds = append(c.builds, in)
	if n := len(c.builds) - 1; n < len(c.buildErrs) && c.buildErrs[n] != nil {
		return actevm.BuildResult{}, c.buildErrs[n]
	}
	it := in.Intent
	it.MaxFeePerGas = big.NewInt(int64(100 * in.Build))
	it.MaxPriorityFeePerGas = big.NewInt(int64(in.Build))
	return actevm.BuildResult{UnsignedTransaction: fmt.Sprintf("0xunsigned-%d", len(c.builds)), Intent: it}, nil
}

func (c *evmChain) sign(_ context.Context, in actevm.SignInput) (actevm.SignResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signs = append(c.signs, in)
	n := len(c.signs)
	return actevm.SignResult{Hash: fmt.Sprintf("0xhash-%d", n), SignedTransaction: fmt.Sprintf("0xsigned-%d", n),
		Nonce: in.Intent.Nonce, MaxFee: "5000", MaxFeePerGas: in.Intent.MaxFeePerGas.String(),
		MaxPriorityFeePerGas: in.Intent.MaxPriorityFeePerGas.String()}, nil
}

func (c *evmChain) checkFresh(_ context.Context, in actevm.FreshInput) (actevm.FreshResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh = append(c.fresh, in)
	return actevm.FreshResult{}, c.freshErr
}

func (c *evmChain) broadcast(_ context.Context, in actevm.BroadcastInput) (actevm.BroadcastResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, in)
	if err := c.broadcastErrs[len(c.sent)-1]; err != nil {
		return actevm.BroadcastResult{}, err
	}
	return actevm.BroadcastResult{Hash: in.Hash}, nil
}

func (c *evmChain) confirm(_ context.Context, in actevm.ConfirmInput) (actevm.ConfirmResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.confirms = append(c.confirms, in)
	if len(c.answers) == 0 {
		return actevm.ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: in.Hashes[len(in.Hashes)-1], Block: 50, Fee: "21000"}, nil
	}
	a := c.answers[min(len(c.confirms), len(c.answers))-1]
	return a, nil
}

// newLeaseEnv runs leaseWorkflow against c; grants are the sequencer's answers, sent at grantAt.
func newLeaseEnv(t *testing.T, c *evmChain, grantAt time.Duration, grants ...lease.Grant) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(leaseWorkflow)
	env.RegisterActivity(ea)
	env.OnActivity(ea.EVMRequestLease, mock.Anything, mock.Anything).Return(func(_ context.Context, r lease.Request) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.requests = append(c.requests, r)
		return nil
	})
	env.OnActivity(ea.EVMBuild, mock.Anything, mock.Anything).Return(c.build).Maybe()
	env.OnActivity(ea.EVMSign, mock.Anything, mock.Anything).Return(c.sign).Maybe()
	env.OnActivity(ea.EVMCheckFresh, mock.Anything, mock.Anything).Return(c.checkFresh).Maybe()
	env.OnActivity(ea.EVMBroadcast, mock.Anything, mock.Anything).Return(c.broadcast).Maybe()
	env.OnActivity(ea.EVMConfirm, mock.Anything, mock.Anything).Return(c.confirm).After(c.confirmAfter).Maybe()
	env.OnSignalExternalWorkflow(mock.Anything, lease.ID(lease.EVM, "dev", addr), "", lease.SignalRelease, mock.Anything).
		Return(func(_, _, _, _ string, arg any) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.releases = append(c.releases, arg.(lease.Release))
			return nil
		}).Maybe()
	env.RegisterDelayedCallback(func() {
		for _, g := range grants {
			env.SignalWorkflow(lease.SignalGrant, g)
		}
	}, grantAt)
	return env
}

func leaseStatus(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.Status {
	t.Helper()
	v, err := env.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, err)
	var st workflows.Status
	require.NoError(t, v.Get(&st))
	return st
}

func TestLeaseStepsUseConsecutiveNoncesAndReleaseTheNextUnused(t *testing.T) {
	c := &evmChain{}
	env := newLeaseEnv(t, c, time.Minute, lease.Grant{Nonce: 7})
	var waiting workflows.Status
	env.RegisterDelayedCallback(func() { waiting = leaseStatus(t, env) }, 30*time.Second)
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"approve", "delegate"}, Options: workflows.Options{ConfirmPollInterval: 3 * time.Second}})
	require.NoError(t, env.GetWorkflowError())
	var r leaseResult
	require.NoError(t, env.GetWorkflowResult(&r))

	assert.Equal(t, lease.StepWaitingNonce, waiting.Step, "the operation rests visibly while another holds the address")
	require.Len(t, c.requests, 1)
	assert.Equal(t, lease.Request{Chain: lease.EVM, Network: "dev", Address: addr, WorkflowID: "default-test-workflow-id", RunID: "default-test-run-id",
		Lease: "nonce-lease/evm/dev/" + addr}, c.requests[0])
	require.Len(t, c.builds, 2)
	assert.Equal(t, uint64(7), c.builds[0].Intent.Nonce)
	assert.Equal(t, uint64(8), c.builds[1].Intent.Nonce)
	assert.Equal(t, "dev", c.builds[0].Network)
	assert.Equal(t, 1, c.builds[0].Build)
	assert.Empty(t, c.builds[0].PrevMaxFeePerGas, "a first build replaces nothing")
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 9}}, c.releases)

	require.Len(t, c.signs, 2)
	assert.Equal(t, "0xunsigned-1", c.signs[0].UnsignedTransaction)
	assert.Equal(t, "dev", c.signs[0].Network)
	assert.Equal(t, big.NewInt(100), c.signs[0].Intent.MaxFeePerGas, "the signer holds the transaction to what the builder chose")
	assert.Equal(t, []actevm.FreshInput{{Network: "dev", Staker: addr, Nonce: 7, Hashes: []string{"0xhash-1"}}}, c.fresh[:1])
	assert.Equal(t, actevm.BroadcastInput{Network: "dev", Staker: addr, Hash: "0xhash-1", SignedTransaction: "0xsigned-1"}, c.sent[0])
	assert.Equal(t, actevm.ConfirmInput{Network: "dev", Staker: addr, Nonce: 7, Hashes: []string{"0xhash-1"},
		SignedTransaction: "0xsigned-1", PollInterval: 3 * time.Second}, c.confirms[0])

	require.Len(t, r.Records, 2)
	assert.Equal(t, "approve", r.Records[0].Kind)
	assert.Equal(t, "0xhash-1", r.Records[0].TxID)
	assert.Equal(t, "0xhash-2", r.Records[1].TxID)
	st := leaseStatus(t, env)
	assert.Equal(t, "nonce 7", st.Attempts[0].Expiry)
	assert.Equal(t, "nonce 8", st.Attempts[1].Expiry)
	assert.Equal(t, "5000", st.Attempts[0].MaxFee)
}

// A build after the first replaces the previous one under the same nonce with higher fees, and
// Confirm follows both; whichever landed is the step's transaction.
func TestLeaseReplacementKeepsTheNonceAndFollowsEveryBuild(t *testing.T) {
	c := &evmChain{answers: []actevm.ConfirmResult{
		{Outcome: activities.OutcomeReplace},
		{Outcome: activities.OutcomeFinalized, Hash: "0xhash-1", Block: 51, Fee: "30000"},
	}}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Nonce: 3})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}})
	require.NoError(t, env.GetWorkflowError())
	var r leaseResult
	require.NoError(t, env.GetWorkflowResult(&r))

	require.Len(t, c.builds, 2)
	assert.Equal(t, uint64(3), c.builds[1].Intent.Nonce, "the replacement keeps the nonce")
	assert.Equal(t, 2, c.builds[1].Build)
	assert.Equal(t, "100", c.builds[1].PrevMaxFeePerGas, "the replacement is priced from the one it replaces")
	assert.Equal(t, "1", c.builds[1].PrevMaxPriorityFeePerGas)
	assert.Equal(t, []string{"0xhash-1", "0xhash-2"}, c.confirms[1].Hashes)
	assert.Equal(t, []string{"0xhash-1", "0xhash-2"}, c.fresh[1].Hashes)
	assert.Equal(t, "0xhash-1", r.Records[0].TxID, "the earlier build landed")
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 4}}, c.releases)
}

// A reverted transaction consumed its nonce: the lease moves past it although the step failed.
func TestLeaseRevertedTransactionStillUsesItsNonce(t *testing.T) {
	c := &evmChain{answers: []actevm.ConfirmResult{{Outcome: activities.OutcomeFailed, Hash: "0xhash-1", Block: 9, Fee: "40000", Error: "execution reverted"}}}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Nonce: 3})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate", "claim"}})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &appErr))
	assert.Equal(t, workflows.ErrTransactionFailed, appErr.Type())
	assert.Len(t, c.builds, 1)
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 4}}, c.releases)
}

// Finding 2 of issue 26: the build limit proves nothing on a nonce chain. The builds sent are
// followed to the chain's word, and the lease moves past the nonce the chain consumed.
func TestLeaseBuildLimitFollowsWhatWasSentAndReleasesPastTheConsumedNonce(t *testing.T) {
	c := &evmChain{answers: []actevm.ConfirmResult{
		{Outcome: activities.OutcomeReplace},
		{Outcome: activities.OutcomeReplace},
		{Outcome: activities.OutcomeFinalized, Hash: "0xhash-1", Block: 70, Fee: "21000"},
	}}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Nonce: 3})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}, Options: workflows.Options{MaxBuilds: 2}})
	require.NoError(t, env.GetWorkflowError())
	var r leaseResult
	require.NoError(t, env.GetWorkflowResult(&r))
	assert.Equal(t, "0xhash-1", r.Records[0].TxID, "build 1 landed after the limit")
	require.Len(t, c.confirms, 3)
	assert.Equal(t, FollowStallAfter, c.confirms[2].ReplaceAfter, "followed with replacing stopped")
	assert.Equal(t, []string{"0xhash-1", "0xhash-2"}, c.confirms[2].Hashes)
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 4}}, c.releases)
}

// A nonce taken at final depth by a transaction none of ours (the chain's proof that nothing
// signed can land) ends the step, naming it, and the lease moves past the consumed nonce.
func TestLeaseNonceTakenByAnotherTransactionReleasesPastIt(t *testing.T) {
	c := &evmChain{answers: []actevm.ConfirmResult{{Outcome: activities.OutcomeCannotLand, Other: "0xother",
		Error: "nonce 3 of 0x11 was used, finally, by transaction 0xother, none of this step's builds [0xhash-1]: they can never land"}}}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Nonce: 3})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &appErr))
	assert.Equal(t, workflows.ErrCannotLand, appErr.Type())
	assert.Contains(t, appErr.Error(), "0xother")
	assert.Len(t, c.builds, 1, "no build can replace a nonce taken")
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 4}}, c.releases)
}

// Nothing was sent (the first build not proven fresh): the lease goes back at the nonce it
// started from.
func TestLeaseNothingSentReleasesTheStartingNonce(t *testing.T) {
	c := &evmChain{freshErr: temporal.NewNonRetryableApplicationError("pending: a transaction stakeflow did not send", lease.ErrNonceConflict, nil)}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Nonce: 3})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}})
	require.Error(t, env.GetWorkflowError())
	assert.Empty(t, c.sent)
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 3}}, c.releases)
}

// Finding 1 of issue 26 on EVM: a replacement the node refuses at its first send leaves build 1
// open: it is followed, lands, and the lease moves past it (never back to the starting nonce
// with build 1 open).
func TestLeaseRefusedReplacementFollowsBuildOneAndReleasesPastIt(t *testing.T) {
	c := &evmChain{
		answers: []actevm.ConfirmResult{
			{Outcome: activities.OutcomeReplace},
			{Outcome: activities.OutcomeFinalized, Hash: "0xhash-1", Block: 60, Fee: "21000"},
		},
		broadcastErrs: map[int]error{1: temporal.NewNonRetryableApplicationError("insufficient funds for gas * price + value", activities.ErrTransactionRejected, nil)},
	}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Nonce: 5})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}})
	require.NoError(t, env.GetWorkflowError())
	var r leaseResult
	require.NoError(t, env.GetWorkflowResult(&r))
	assert.Equal(t, "0xhash-1", r.Records[0].TxID)
	require.Len(t, c.sent, 2)
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 6}}, c.releases)
}

// A cancel after a broadcast takes the nonce back: the cancel (a zero-value self-transfer priced
// over every build sent) is built, signed, sent through the worker's RPC and followed with the
// builds; it takes the nonce, the operation ends cancelled with its hash on record, and the lease
// moves past the nonce.
func TestLeaseCancelAfterBroadcastTakesTheNonceBack(t *testing.T) {
	c := &evmChain{answers: []actevm.ConfirmResult{
		{Outcome: activities.OutcomeReplace},
		{Outcome: activities.OutcomeFinalized, Hash: "0xcancel", Block: 61, Fee: "21000"},
	}, confirmAfter: time.Hour}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Nonce: 5})
	var cancelBuilds []actevm.CancelBuildInput
	var rpcSent []actevm.BroadcastInput
	env.OnActivity(ea.EVMBuildCancel, mock.Anything, mock.Anything).Return(func(_ context.Context, in actevm.CancelBuildInput) (actevm.CancelBuildResult, error) {
		cancelBuilds = append(cancelBuilds, in)
		return actevm.CancelBuildResult{UnsignedTransaction: "0xunsigned-cancel", Intent: signerevm.CancelIntent{Nonce: in.Nonce,
			MaxFeePerGas: big.NewInt(113), MaxPriorityFeePerGas: big.NewInt(3)}}, nil
	})
	env.OnActivity(ea.EVMSignCancel, mock.Anything, mock.Anything).Return(func(_ context.Context, in actevm.CancelSignInput) (actevm.SignResult, error) {
		return actevm.SignResult{Hash: "0xcancel", SignedTransaction: "0xsigned-cancel", Nonce: in.Intent.Nonce, MaxFee: "2373000",
			MaxFeePerGas: "113", MaxPriorityFeePerGas: "3"}, nil
	})
	env.OnActivity(ea.EVMSendRPC, mock.Anything, mock.Anything).Return(func(_ context.Context, in actevm.BroadcastInput) (actevm.BroadcastResult, error) {
		rpcSent = append(rpcSent, in)
		return actevm.BroadcastResult{Hash: in.Hash}, nil
	})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}})
	require.True(t, temporal.IsCanceledError(env.GetWorkflowError()), "got %v", env.GetWorkflowError())

	require.Len(t, cancelBuilds, 1)
	assert.Equal(t, actevm.CancelBuildInput{Network: "dev", Staker: addr, Nonce: 5, PrevMaxFeePerGas: "100", PrevMaxPriorityFeePerGas: "1"}, cancelBuilds[0],
		"priced over the build sent")
	assert.Equal(t, []actevm.BroadcastInput{{Network: "dev", Staker: addr, Hash: "0xcancel", SignedTransaction: "0xsigned-cancel"}}, rpcSent)
	require.Len(t, c.confirms, 2)
	assert.Equal(t, []string{"0xhash-1", "0xcancel"}, c.confirms[1].Hashes, "the cancel is followed with every build")
	assert.True(t, c.confirms[1].ResendRPC)
	assert.Len(t, c.builds, 1, "no replacement after a cancel")
	st := leaseStatus(t, env)
	assert.Equal(t, workflows.StepCancelled, st.Step)
	require.Len(t, st.Transactions, 1)
	assert.Equal(t, workflows.TxRecord{Kind: workflows.KindCancel, TxID: "0xcancel", Block: 61, Builds: 1, Fee: "21000",
		FinalizedAt: st.Transactions[0].FinalizedAt}, st.Transactions[0], "the chain's proof: which transaction took the nonce")
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 6}}, c.releases)
}

func TestLeaseConflictFailsNonRetryablyBeforeAnyBuild(t *testing.T) {
	c := &evmChain{}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Error: "0x11 has 1 transaction(s) pending that stakeflow did not send"})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &appErr))
	assert.Equal(t, lease.ErrNonceConflict, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	assert.Contains(t, appErr.Error(), "pending that stakeflow did not send")
	assert.Empty(t, c.builds)
}

func TestLeaseCancelWhileWaitingLeavesTheQueueWithNoNonceUsed(t *testing.T) {
	c := &evmChain{}
	env := newLeaseEnv(t, c, 2*time.Hour, lease.Grant{Nonce: 3})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}})
	assert.True(t, temporal.IsCanceledError(env.GetWorkflowError()), "got %v", env.GetWorkflowError())
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 0}}, c.releases)
	assert.Empty(t, c.builds)
}

func TestNilLeaseReleasesNothing(t *testing.T) {
	var l *lease.Lease
	assert.NoError(t, l.Release(nil))
}

// A replacement that cannot be built (its fee bump over the caps) leaves the build sent: Confirm
// follows it and is told never to ask for a replacement, for longer than any operation lives.
func TestLeaseReplacementNotBuiltFollowsWithoutReplacing(t *testing.T) {
	c := &evmChain{
		answers: []actevm.ConfirmResult{
			{Outcome: activities.OutcomeReplace},
			{Outcome: activities.OutcomeFinalized, Hash: "0xhash-1", Block: 60, Fee: "21000"},
		},
		buildErrs: []error{nil, temporal.NewNonRetryableApplicationError("fee bump over the cap", activities.ErrPolicy, nil)},
	}
	env := newLeaseEnv(t, c, time.Second, lease.Grant{Nonce: 5})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"delegate"}})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, c.confirms, 2)
	assert.Zero(t, c.confirms[0].ReplaceAfter, "the first Confirm may ask for a replacement")
	assert.Equal(t, FollowStallAfter, c.confirms[1].ReplaceAfter, "no replacement: an answer past the bound only stalls the step visibly")
	assert.Equal(t, []string{"0xhash-1"}, c.confirms[1].Hashes)
	assert.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 6}}, c.releases)
}
