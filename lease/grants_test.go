package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

const addr = "0x1111111111111111111111111111111111111111"

// sequencerRun drives a sequencer: acquires and releases arrive at the given times, the chain
// answers nonces (the last answer repeats), and every grant is recorded by operation.
type sequencerRun struct {
	env     *testsuite.TestWorkflowEnvironment
	mu      sync.Mutex
	grants  map[string][]Grant
	notices map[string][]Notice
	order   []string
	chain   []Nonces
	reads   int
	// closed are the operations the holder check finds closed, with their status.
	closed map[string]string
	checks []HolderInput
}

// settled is a chain whose count is final: nothing pending, nothing above final depth.
func settled(n uint64) Nonces { return Nonces{Latest: n, Pending: n, Finalized: n} }

func newSequencerRun(t *testing.T, chain ...Nonces) *sequencerRun {
	var suite testsuite.WorkflowTestSuite
	r := &sequencerRun{env: suite.NewTestWorkflowEnvironment(), grants: map[string][]Grant{}, notices: map[string][]Notice{},
		chain: chain, closed: map[string]string{}}
	r.env.RegisterWorkflowWithOptions(Workflow(readNonces), workflow.RegisterOptions{Name: WorkflowType})
	registerChain(r.env)
	r.env.OnActivity(readNonces, mock.Anything, mock.Anything).Return(func(context.Context, ReadInput) (Nonces, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		n := r.chain[min(r.reads, len(r.chain)-1)]
		r.reads++
		return n, nil
	})
	r.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalGrant, mock.Anything).
		Return(func(_, id, _, _ string, arg any) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.grants[id] = append(r.grants[id], arg.(Grant))
			r.order = append(r.order, id)
			return nil
		})
	r.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalNotice, mock.Anything).
		Return(func(_, id, _, _ string, arg any) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.notices[id] = append(r.notices[id], arg.(Notice))
			return nil
		}).Maybe()
	r.env.OnActivity(holders.LeaseHolder, mock.Anything, mock.Anything).Return(func(_ context.Context, in HolderInput) (HolderState, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.checks = append(r.checks, in)
		if st, ok := r.closed[in.WorkflowID]; ok {
			return HolderState{Status: st}, nil
		}
		return HolderState{Running: true, Status: "Running"}, nil
	}).Maybe()
	return r
}

func (r *sequencerRun) at(d time.Duration, signal string, arg any) {
	r.env.RegisterDelayedCallback(func() { r.env.SignalWorkflow(signal, arg) }, d)
}

func (r *sequencerRun) acquire(d time.Duration, op string) {
	r.at(d, SignalAcquire, Request{Network: "dev", Address: addr, WorkflowID: op, RunID: "run-" + op})
}

// chainAt makes the chain answer n from d on, whatever it answered before.
func (r *sequencerRun) chainAt(d time.Duration, n Nonces) {
	r.env.RegisterDelayedCallback(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.chain, r.reads = []Nonces{n}, 0
	}, d)
}

// closeAt makes the holder check find op closed (status) from d on.
func (r *sequencerRun) closeAt(d time.Duration, op, status string) {
	r.env.RegisterDelayedCallback(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.closed[op] = status
	}, d)
}

func (r *sequencerRun) release(d time.Duration, op string, next uint64) {
	r.at(d, SignalRelease, Release{WorkflowID: op, Next: next})
}

func (r *sequencerRun) run(end time.Duration) {
	r.runFrom(end, State{Network: "dev", Address: addr})
}

func (r *sequencerRun) runFrom(end time.Duration, st State) {
	r.env.RegisterDelayedCallback(r.env.CancelWorkflow, end)
	r.env.ExecuteWorkflow(WorkflowType, st)
}

// state is the sequencer's state as its query answers it.
func (r *sequencerRun) state(t *testing.T) State {
	t.Helper()
	v, err := r.env.QueryWorkflow(QueryState)
	require.NoError(t, err)
	var st State
	require.NoError(t, v.Get(&st))
	return st
}

func TestSequencerHandsOutConsecutiveNoncesOneLeaseAtATime(t *testing.T) {
	r := newSequencerRun(t, settled(4), settled(6))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.release(time.Minute, "op-a", 6) // a used nonces 4 and 5
	r.run(time.Hour)
	require.Equal(t, []string{"op-a", "op-b"}, r.order, "op-b waits until op-a gives the lease back")
	require.Equal(t, []Grant{{Nonce: 4}}, r.grants["op-a"], "the first grant starts at the chain's next nonce")
	require.Equal(t, []Grant{{Nonce: 6}}, r.grants["op-b"], "the next operation continues where the last stopped")
}

func TestSequencerLeaseReleasedUnusedIsHandedOutAgain(t *testing.T) {
	r := newSequencerRun(t, settled(4))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.release(time.Minute, "op-a", 0) // refused before signing: no nonce used
	r.run(time.Hour)
	require.Equal(t, []Grant{{Nonce: 4}}, r.grants["op-b"], "a nonce never used is never skipped")
}

func TestSequencerReportsTransactionsItDidNotSend(t *testing.T) {
	// Read at a's grant, at its release (the chain agrees), at b's grant (3 more used), at c's.
	r := newSequencerRun(t, settled(4), settled(5), settled(7), Nonces{Latest: 7, Pending: 8, Finalized: 7})
	r.acquire(time.Second, "op-a")
	r.release(time.Minute, "op-a", 5)
	r.acquire(2*time.Minute, "op-b")
	r.acquire(3*time.Minute, "op-c")
	r.run(time.Hour)
	require.Equal(t, []Grant{{Nonce: 4}}, r.grants["op-a"])
	require.Len(t, r.grants["op-b"], 1)
	require.Contains(t, r.grants["op-b"][0].Error, "nonces 5 to 6 of "+addr+" were used by transactions stakeflow did not send")
	require.Len(t, r.grants["op-c"], 1)
	require.Contains(t, r.grants["op-c"][0].Error, "1 transaction(s) pending that stakeflow did not send (nonces 7 to 7)")
}

func TestSequencerQueuedOperationThatGivesUpLeavesTheQueue(t *testing.T) {
	r := newSequencerRun(t, settled(4), settled(5))
	r.acquire(time.Second, "op-a")
	r.acquire(2*time.Second, "op-b")
	r.acquire(3*time.Second, "op-c")
	r.release(time.Minute, "op-b", 0) // cancelled while waiting
	r.release(2*time.Minute, "op-a", 5)
	r.run(time.Hour)
	require.Equal(t, []string{"op-a", "op-c"}, r.order)
	require.Equal(t, []Grant{{Nonce: 5}}, r.grants["op-c"])
}

// A grant refused for a conflict gives no lease: the next operation in the queue is answered at
// once, without anyone releasing.
func TestSequencerConflictHoldsNoLease(t *testing.T) {
	r := newSequencerRun(t, Nonces{Latest: 4, Pending: 5, Finalized: 4}, settled(5))
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
	r := newSequencerRun(t, Nonces{Latest: 4, Pending: 7, Finalized: 4})
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
	env.RegisterWorkflowWithOptions(Workflow(readNonces), workflow.RegisterOptions{Name: WorkflowType})
	registerChain(env)
	env.OnActivity(readNonces, mock.Anything, mock.Anything).Return(settled(4), nil)
	env.OnActivity(holders.LeaseHolder, mock.Anything, mock.Anything).Return(HolderState{Running: true, Status: "Running"}, nil).Maybe()
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
			env.SignalWorkflow(SignalAcquire, Request{Network: "dev", Address: addr, WorkflowID: id})
		}, time.Duration(i+1)*time.Second)
	}
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(WorkflowType, State{Network: "dev", Address: addr})
	assert.Equal(t, []string{"op-gone", "op-b"}, granted)
	assert.True(t, temporal.IsCanceledError(env.GetWorkflowError()), "a sequencer stops only when cancelled")
}

func TestSequencerUnreadableChainGrantsNothing(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Workflow(readNonces), workflow.RegisterOptions{Name: WorkflowType})
	registerChain(env)
	env.OnActivity(readNonces, mock.Anything, mock.Anything).
		Return(Nonces{}, temporal.NewNonRetryableApplicationError("rpc 403", "ChainRejected", nil))
	var g Grant
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalGrant, mock.Anything).
		Return(func(_, _, _, _ string, arg any) error { g = arg.(Grant); return nil })
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalAcquire, Request{Network: "dev", Address: addr, WorkflowID: "op-a"})
	}, time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(WorkflowType, State{Network: "dev", Address: addr})
	assert.Contains(t, g.Error, "reading the nonces of "+addr)
	assert.Zero(t, g.Nonce)
}

// A sequencer keeps its history short: after 200 grants, with no lease held and nothing queued,
// it continues as new carrying the next nonce.
func TestSequencerContinuesAsNewAfter200Grants(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Workflow(readNonces), workflow.RegisterOptions{Name: WorkflowType})
	registerChain(env)
	next := uint64(10)
	env.OnActivity(readNonces, mock.Anything, mock.Anything).Return(func(context.Context, ReadInput) (Nonces, error) {
		return settled(next), nil
	})
	grants := 0
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalGrant, mock.Anything).
		Return(func(_, _, _, _ string, _ any) error { grants++; return nil })
	for i := range 201 {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(SignalAcquire, Request{Network: "dev", Address: addr, WorkflowID: "op"})
		}, time.Duration(2*i+1)*time.Second)
		env.RegisterDelayedCallback(func() {
			next++
			env.SignalWorkflow(SignalRelease, Release{WorkflowID: "op", Next: next})
		}, time.Duration(2*i+2)*time.Second)
	}
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(WorkflowType, State{Network: "dev", Address: addr})
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can), "want continue-as-new, got %v", err)
	assert.Equal(t, 200, grants)
	var st State
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &st))
	assert.Equal(t, uint64(210), st.Next)
	assert.True(t, st.Known)
	assert.Nil(t, st.Holder)
}

// readNonces and requestLease stand for a chain's reader and request activities: each test mocks
// them (OnActivity) with its own fake chain.
func readNonces(context.Context, ReadInput) (Nonces, error) {
	return Nonces{}, errors.New("readNonces is mocked by each test")
}

func requestLease(context.Context, Request) error {
	return errors.New("requestLease is mocked by each test")
}

// registerChain registers the activities the lease and its operations call: the stand-ins of a
// chain's, and LeaseHolder.
func registerChain(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivity(readNonces)
	env.RegisterActivity(requestLease)
	env.RegisterActivity(&Activities{})
}
