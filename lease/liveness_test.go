package lease

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/workflows"
)

// A holder terminated while holding the lease (its transaction at nonce 4 still open) does not
// keep its address forever: the sequencer's check finds it closed, tells the operation waiting
// (a stall naming the holder), waits for the chain's last word on what the holder sent, and
// grants the next operation at the nonce the chain has consumed at final depth.
func TestSequencerFreesTheLeaseOfATerminatedHolderAtTheChainsCount(t *testing.T) {
	r := newSequencerRun(t, settled(4))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	// op-a signed nonce 4 and was terminated; its transaction is pending, then lands, then is final.
	r.chainAt(30*time.Second, Nonces{Latest: 4, Pending: 5, Finalized: 4})
	r.closeAt(time.Minute, "op-a", "Terminated")
	r.chainAt(5*time.Minute, Nonces{Latest: 5, Pending: 5, Finalized: 4})
	r.chainAt(7*time.Minute, settled(5))
	var st State
	r.env.RegisterDelayedCallback(func() { st = r.state(t) }, 50*time.Minute)
	r.runFrom(time.Hour, State{Network: "dev", Address: addr, CheckEvery: 2 * time.Minute})

	require.Equal(t, []string{"op-a", "op-b"}, r.order)
	assert.Equal(t, []Grant{{Nonce: 5}}, r.grants["op-b"], "granted at the chain's consumed nonce, after the holder's transaction landed final")
	assert.Contains(t, r.checks, HolderInput{WorkflowID: "op-a", RunID: "run-op-a"}, "the holder's own run is described")
	notices := r.notices["op-b"]
	require.GreaterOrEqual(t, len(notices), 2)
	assert.Equal(t, Notice{Holder: "op-a"}, notices[0], "the waiter is told whom it waits on")
	assert.True(t, notices[1].Stalled)
	assert.Equal(t, "op-a", notices[1].Holder)
	assert.Contains(t, notices[1].Reason, "op-a closed (Terminated) holding the nonce lease of "+addr)
	require.Len(t, st.Events, 1)
	assert.Equal(t, EventHolderClosed, st.Events[0].Kind)
	assert.Equal(t, "op-a", st.Events[0].Holder)
	assert.Equal(t, uint64(5), st.Events[0].Next)
	assert.Equal(t, "op-b", st.Holder.WorkflowID)
	assert.Nil(t, st.Settling)
}

// A live holder is left alone: the check describes it and the lease stays where it is.
func TestSequencerLeavesALiveHolderItsLease(t *testing.T) {
	r := newSequencerRun(t, settled(4))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.runFrom(time.Hour, State{Network: "dev", Address: addr, CheckEvery: 2 * time.Minute})
	assert.Equal(t, []string{"op-a"}, r.order, "op-b still waits")
	assert.GreaterOrEqual(t, len(r.checks), 20, "checked every two minutes for an hour")
	assert.Equal(t, []Notice{{Holder: "op-a"}}, r.notices["op-b"])
}

// A release above the nonce the chain has consumed at final depth is not trusted: the next
// operation is not granted above the gap, it is told why; it is granted once the chain catches up.
func TestSequencerDoesNotTrustAReleaseAboveTheChainsCount(t *testing.T) {
	r := newSequencerRun(t, settled(4))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.release(time.Minute, "op-a", 6) // a says nonces 4 and 5 landed; the chain counts 4
	var during State
	r.env.RegisterDelayedCallback(func() { during = r.state(t) }, 20*time.Minute)
	r.chainAt(30*time.Minute, settled(6))
	r.runFrom(time.Hour, State{Network: "dev", Address: addr, CheckEvery: 2 * time.Minute})

	assert.Equal(t, []string{"op-a", "op-b"}, r.order)
	assert.Equal(t, []Grant{{Nonce: 6}}, r.grants["op-b"], "granted only once the chain counts what a said")
	require.NotNil(t, during.Settling, "no grant while the chain disagrees")
	assert.Equal(t, uint64(6), during.Settling.Claim)
	assert.Nil(t, during.Holder)
	var told *Notice
	for _, n := range r.notices["op-b"] {
		if n.Stalled {
			told = &n
		}
	}
	require.NotNil(t, told, "the waiter is told why it waits")
	assert.Contains(t, told.Reason, "op-a gave back the nonce lease of "+addr+" at nonce 6, but the chain has consumed nonces only up to 4 at final depth")
}

// An operator's resync takes the chain's count for a release the chain never agrees with.
func TestSequencerResyncTakesTheChainsCount(t *testing.T) {
	r := newSequencerRun(t, settled(4))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.release(time.Minute, "op-a", 6)
	r.at(30*time.Minute, SignalResync, nil)
	var st State
	r.env.RegisterDelayedCallback(func() { st = r.state(t) }, 50*time.Minute)
	r.runFrom(time.Hour, State{Network: "dev", Address: addr, CheckEvery: 2 * time.Minute})
	assert.Equal(t, []Grant{{Nonce: 4}}, r.grants["op-b"])
	require.Len(t, st.Events, 1)
	assert.Equal(t, EventResync, st.Events[0].Kind)
	assert.Equal(t, uint64(6), st.Events[0].Claimed)
}

// A release below the chain's count (a build of the holder landed past what it said) takes the
// chain's count, recorded, without reporting the holder's own transaction as someone else's.
func TestSequencerTakesTheChainsCountWhenAReleaseIsBelowIt(t *testing.T) {
	r := newSequencerRun(t, settled(4))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	// a gave up on its build at nonce 4 (still pending) and says nothing was used; it lands.
	r.chainAt(50*time.Second, Nonces{Latest: 4, Pending: 5, Finalized: 4})
	r.release(time.Minute, "op-a", 4)
	r.chainAt(3*time.Minute, settled(5))
	var st State
	r.env.RegisterDelayedCallback(func() { st = r.state(t) }, 50*time.Minute)
	r.runFrom(time.Hour, State{Network: "dev", Address: addr, CheckEvery: 2 * time.Minute})
	assert.Equal(t, []Grant{{Nonce: 5}}, r.grants["op-b"], "the chain's count, no conflict")
	require.Len(t, st.Events, 1)
	assert.Equal(t, EventChainAhead, st.Events[0].Kind)
	assert.Equal(t, uint64(4), st.Events[0].Claimed)
	assert.Equal(t, uint64(5), st.Events[0].Next)
}

// A sequencer continues as new while a lease is held or settling, carrying the holder, the queue,
// the lease settling, its events and its check interval; the next run goes on from them.
func TestSequencerContinuesAsNewCarryingItsLease(t *testing.T) {
	defer func(n int) { stepsPerRun = n }(stepsPerRun)
	stepsPerRun = 4
	r := newSequencerRun(t, settled(4))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.acquire(3*time.Second, "op-c")
	r.release(4*time.Second, "op-a", 6) // the chain counts 4: settling
	r.runFrom(time.Hour, State{Network: "dev", Address: addr, CheckEvery: 2 * time.Minute})
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(r.env.GetWorkflowError(), &can), "want continue-as-new, got %v", r.env.GetWorkflowError())
	var st State
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &st))
	require.NotNil(t, st.Settling)
	assert.Equal(t, "op-a", st.Settling.WorkflowID)
	assert.Equal(t, uint64(6), st.Settling.Claim)
	assert.Equal(t, uint64(4), st.Next)
	assert.Equal(t, 2*time.Minute, st.CheckEvery)
	require.Len(t, st.Queue, 2)
	assert.Equal(t, "op-b", st.Queue[0].WorkflowID)

	// The next run: the chain now counts 6; op-b is granted there, op-c after it.
	stepsPerRun = 1000
	next := newSequencerRun(t, settled(6))
	next.runFrom(time.Hour, st)
	assert.Equal(t, []string{"op-b"}, next.order)
	assert.Equal(t, []Grant{{Nonce: 6}}, next.grants["op-b"])
}

// leasedOp is an operation reduced to its lease: it acquires the lease, answers the nonce it was
// granted, and gives the lease back with none used.
func leasedOp(ctx workflow.Context, opts workflows.Options) (uint64, error) {
	o, err := workflows.NewOperation(ctx, workflows.Setup{Chain: "evmtest", Network: "dev", Operation: "delegate",
		Staker: addr, Unit: "wei", Options: opts, Waits: []string{StepWaitingNonce}})
	if err != nil {
		return 0, err
	}
	held, err := Acquire(ctx, o, EVM, "dev", addr, requestLease)
	if err != nil {
		return 0, o.Fail(ctx, err)
	}
	granted := held.Next
	if err := held.Release(ctx); err != nil {
		return 0, err
	}
	o.Done(ctx)
	return granted, nil
}

// newWaitEnv runs leasedOp; the lease answers g at grantAt.
func newWaitEnv(grantAt time.Duration, g Grant) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(leasedOp)
	registerChain(env)
	env.OnActivity(requestLease, mock.Anything, mock.Anything).Return(nil)
	env.OnSignalExternalWorkflow(mock.Anything, ID(EVM, "dev", addr), "", SignalRelease, mock.Anything).Return(nil).Maybe()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGrant, g) }, grantAt)
	return env
}

func opStatus(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.Status {
	t.Helper()
	v, err := env.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, err)
	var st workflows.Status
	require.NoError(t, v.Get(&st))
	return st
}

func granted(t *testing.T, env *testsuite.TestWorkflowEnvironment) uint64 {
	t.Helper()
	require.NoError(t, env.GetWorkflowError())
	var n uint64
	require.NoError(t, env.GetWorkflowResult(&n))
	return n
}

// An operation waiting for its lease is visibly stalled when the lease says it does not come
// (its holder closed without giving it back), and back to waiting-nonce, then on, when granted.
func TestLeaseWaiterShowsTheSequencersStall(t *testing.T) {
	env := newWaitEnv(9*time.Minute, Grant{Nonce: 5})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalNotice, Notice{Holder: "op-a"}) }, time.Minute)
	reason := "op-a closed (Terminated) holding the nonce lease of " + addr + " without giving it back"
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalNotice, Notice{Holder: "op-a", Stalled: true, Reason: reason})
	}, 3*time.Minute)
	var stalled workflows.Status
	env.RegisterDelayedCallback(func() { stalled = opStatus(t, env) }, 4*time.Minute)
	env.ExecuteWorkflow(leasedOp, workflows.Options{})
	assert.Equal(t, uint64(5), granted(t, env))
	assert.Equal(t, workflows.StepStalled, stalled.Step)
	require.NotNil(t, stalled.Stall)
	assert.Equal(t, StepWaitingNonce, stalled.Stall.Step)
	assert.Equal(t, reason, stalled.Stall.LastError)
	assert.Nil(t, opStatus(t, env).Stall, "the stall ends with the grant")
}

// A wait for the lease longer than MaxStallWait stalls the operation visibly, naming the
// operation holding the lease.
func TestLeaseWaitPastItsBoundStallsNamingTheHolder(t *testing.T) {
	env := newWaitEnv(25*time.Minute, Grant{Nonce: 5})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalNotice, Notice{Holder: "op-a"}) }, time.Second)
	var before, after workflows.Status
	env.RegisterDelayedCallback(func() { before = opStatus(t, env) }, 4*time.Minute)
	env.RegisterDelayedCallback(func() { after = opStatus(t, env) }, 6*time.Minute)
	env.ExecuteWorkflow(leasedOp, workflows.Options{MaxStallWait: 5 * time.Minute})
	assert.Equal(t, uint64(5), granted(t, env))
	assert.Equal(t, StepWaitingNonce, before.Step, "within the bound, simply waiting")
	assert.Nil(t, before.Stall)
	assert.Equal(t, workflows.StepStalled, after.Step)
	require.NotNil(t, after.Stall)
	assert.Equal(t, StepWaitingNonce, after.Stall.Step)
	assert.Contains(t, after.Stall.LastError, "for the nonce lease of its address, held by operation op-a")
	assert.Nil(t, opStatus(t, env).Stall)
}
