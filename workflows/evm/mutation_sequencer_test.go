package evm

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	actevm "github.com/stakeflow/stakeflow/activities/evm"
)

// A grant refused for a conflict gives no lease: the next operation in the queue is answered at
// once, without anyone releasing.
func TestSequencerConflictHoldsNoLease(t *testing.T) {
	r := newSequencerRun(t, actevm.Nonces{Latest: 4, Pending: 5, Finalized: 4}, settled(5))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.run(time.Hour)
	require.Equal(t, []string{"op-a", "op-b"}, r.order)
	require.NotEmpty(t, r.grants["op-a"][0].Error)
	assert.Equal(t, []Grant{{Nonce: 5}}, r.grants["op-b"], "the first known nonce is the chain's")
}

// After a conflict where nonces were used behind stakeflow's back, the next operation starts at the
// chain's count.
func TestSequencerAfterNoncesUsedElsewhereContinuesAtTheChainsCount(t *testing.T) {
	r := newSequencerRun(t, settled(4), settled(4), settled(7))
	r.acquire(time.Second, "op-a")
	r.release(time.Minute, "op-a", 4) // nothing used; the chain agrees
	r.acquire(2*time.Minute, "op-b")  // sees 3 nonces used elsewhere
	r.acquire(3*time.Minute, "op-c")
	r.run(time.Hour)
	require.Contains(t, r.grants["op-b"][0].Error, "nonces 4 to 6 of "+addr)
	require.Contains(t, r.grants["op-b"][0].Error, "the next operation starts at nonce 7")
	assert.Equal(t, []Grant{{Nonce: 7}}, r.grants["op-c"])
}

func TestSequencerPendingConflictNamesTheRange(t *testing.T) {
	r := newSequencerRun(t, actevm.Nonces{Latest: 4, Pending: 7, Finalized: 4})
	r.acquire(time.Second, "op-a")
	r.run(time.Hour)
	require.Contains(t, r.grants["op-a"][0].Error, addr+" has 3 transaction(s) pending that stakeflow did not send (nonces 4 to 6)")
}

// A release with a lower next nonce than the sequencer knows never moves it back.
func TestSequencerReleaseNeverMovesTheNonceBack(t *testing.T) {
	r := newSequencerRun(t, settled(4), settled(6))
	r.acquire(time.Second, "op-a")
	r.release(time.Minute, "op-a", 6)
	r.acquire(2*time.Minute, "op-b")
	r.release(3*time.Minute, "op-b", 2)
	r.acquire(4*time.Minute, "op-c")
	r.run(time.Hour)
	assert.Equal(t, []Grant{{Nonce: 6}}, r.grants["op-b"])
	assert.Equal(t, []Grant{{Nonce: 6}}, r.grants["op-c"])
}

// The holder asking again (its wait restarted) is granted again from the same nonce; an operation
// asking twice while queued is queued once; a release from an operation neither holding nor
// queued changes nothing.
func TestSequencerRepeatedAsksAndStrayReleases(t *testing.T) {
	r := newSequencerRun(t, settled(4), settled(4), settled(5))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.acquire(3*time.Second, "op-b")
	r.acquire(4*time.Second, "op-a")
	r.release(5*time.Second, "op-x", 9)
	r.release(time.Minute, "op-a", 5)
	r.run(time.Hour)
	assert.Equal(t, []Grant{{Nonce: 4}, {Nonce: 4}}, r.grants["op-a"], "the holder is granted its lease again")
	assert.Equal(t, []Grant{{Nonce: 5}}, r.grants["op-b"], "queued once; the stray release moved nothing")
	assert.Equal(t, []string{"op-a", "op-a", "op-b"}, r.order)
}

// A grant that cannot be delivered (the operation is gone) frees the lease for the next.
func TestSequencerUndeliveredGrantFreesTheLease(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(NonceSequencerWorkflow, workflow.RegisterOptions{Name: SequencerWorkflowType})
	env.RegisterActivity(ea)
	env.OnActivity(ea.EVMReadNonces, mock.Anything, mock.Anything).Return(settled(4), nil)
	env.OnActivity(ea.EVMLeaseHolder, mock.Anything, mock.Anything).Return(actevm.HolderState{Running: true, Status: "Running"}, nil).Maybe()
	var granted []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalGrant, mock.Anything).
		Return(func(_, id, _, _ string, arg any) error {
			granted = append(granted, id)
			if id == "op-gone" {
				return errors.New("workflow not found")
			}
			assert.Equal(t, Grant{Nonce: 4}, arg.(Grant))
			return nil
		})
	for i, id := range []string{"op-gone", "op-b"} {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(SignalAcquire, actevm.SequencerRequest{Network: "dev", Address: addr, WorkflowID: id})
		}, time.Duration(i+1)*time.Second)
	}
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(SequencerWorkflowType, SequencerState{Network: "dev", Address: addr})
	assert.Equal(t, []string{"op-gone", "op-b"}, granted)
	assert.True(t, temporal.IsCanceledError(env.GetWorkflowError()), "a sequencer stops only when cancelled")
}

func TestSequencerUnreadableChainGrantsNothing(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(NonceSequencerWorkflow, workflow.RegisterOptions{Name: SequencerWorkflowType})
	env.RegisterActivity(ea)
	env.OnActivity(ea.EVMReadNonces, mock.Anything, mock.Anything).
		Return(actevm.Nonces{}, temporal.NewNonRetryableApplicationError("rpc 403", "ChainRejected", nil))
	var g Grant
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalGrant, mock.Anything).
		Return(func(_, _, _, _ string, arg any) error { g = arg.(Grant); return nil })
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalAcquire, actevm.SequencerRequest{Network: "dev", Address: addr, WorkflowID: "op-a"})
	}, time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(SequencerWorkflowType, SequencerState{Network: "dev", Address: addr})
	assert.Contains(t, g.Error, "reading the nonces of "+addr)
	assert.Zero(t, g.Nonce)
}

// A sequencer keeps its history short: after 200 grants, with no lease held and nothing queued,
// it continues as new carrying the next nonce.
func TestSequencerContinuesAsNewAfter200Grants(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(NonceSequencerWorkflow, workflow.RegisterOptions{Name: SequencerWorkflowType})
	env.RegisterActivity(ea)
	next := uint64(10)
	env.OnActivity(ea.EVMReadNonces, mock.Anything, mock.Anything).Return(func(context.Context, actevm.NoncesInput) (actevm.Nonces, error) {
		return settled(next), nil
	})
	grants := 0
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalGrant, mock.Anything).
		Return(func(_, _, _, _ string, _ any) error { grants++; return nil })
	for i := range 201 {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(SignalAcquire, actevm.SequencerRequest{Network: "dev", Address: addr, WorkflowID: "op"})
		}, time.Duration(2*i+1)*time.Second)
		env.RegisterDelayedCallback(func() {
			next++
			env.SignalWorkflow(SignalRelease, Release{WorkflowID: "op", Next: next})
		}, time.Duration(2*i+2)*time.Second)
	}
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(SequencerWorkflowType, SequencerState{Network: "dev", Address: addr})
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can), "want continue-as-new, got %v", err)
	assert.Equal(t, 200, grants)
	var st SequencerState
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &st))
	assert.Equal(t, uint64(210), st.Next)
	assert.True(t, st.Known)
	assert.Nil(t, st.Holder)
}
