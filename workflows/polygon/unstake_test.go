package polygon

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

func (e *env) status(t *testing.T) workflows.Status {
	t.Helper()
	v, err := e.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, err)
	var st workflows.Status
	require.NoError(t, v.Get(&st))
	return st
}

// unbondReads answers the unbond reads with us in turn (the last repeats) and records them.
type unbondReads struct {
	mu    sync.Mutex
	ins   []actevm.UnbondInput
	times []time.Time
	us    []actevm.Unbond
	errs  []error
}

func (r *unbondReads) read(now func() time.Time) func(context.Context, actevm.UnbondInput) (actevm.Unbond, error) {
	return func(_ context.Context, in actevm.UnbondInput) (actevm.Unbond, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ins = append(r.ins, in)
		r.times = append(r.times, now())
		if len(r.errs) > 0 {
			err := r.errs[0]
			r.errs = r.errs[1:]
			return actevm.Unbond{}, err
		}
		u := r.us[min(len(r.ins), len(r.us))-1]
		return u, nil
	}
}

func unstakeWith(t *testing.T, reads *unbondReads, opts workflows.Options) *env {
	e := newEnv(t, lease.Grant{Nonce: 10}, lease.Grant{Nonce: 11})
	e.delegation(actevm.Delegation{Staked: polWei(40), Shares: polWei(40), ExpectedShares: polWei(40)})
	e.OnActivity(ea.EVMReadUnbond, mock.Anything, mock.Anything).Return(reads.read(e.Now))
	in := delegateInput()
	in.Amount = polWei(40)
	in.Options = opts
	e.ExecuteWorkflow(UnstakeWorkflowType, in)
	return e
}

func gapsOf(times []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(times); i++ {
		out = append(out, times[i].Sub(times[i-1]))
	}
	return out
}

// Unstaking all that is staked is allowed; the wait is the epochs left times the epoch's duration
// when that is under the re-check cap, and the unbond is read from the receipt once, then by its
// nonce.
func TestUnstakeOfAllStakedWaitsTheEpochsLeft(t *testing.T) {
	u := actevm.Unbond{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 2, Epoch: 100, EpochDuration: 10 * time.Minute}
	claimable := u
	claimable.Epoch = 102
	reads := &unbondReads{us: []actevm.Unbond{u, claimable}}
	e := unstakeWith(t, reads, workflows.Options{})
	r := e.result(t)
	require.Len(t, reads.times, 2)
	assert.Equal(t, []time.Duration{20 * time.Minute}, gapsOf(reads.times), "2 epochs of 10 minutes")
	assert.Equal(t, "0xhash-unstake-10-1", reads.ins[0].TxID)
	assert.Equal(t, actevm.UnbondInput{Network: network, Staker: reads.ins[0].Staker, ValidatorShare: reads.ins[0].ValidatorShare, Nonce: 3}, reads.ins[1],
		"read again by its nonce, not the receipt")
	assert.Equal(t, uint64(3), r.UnbondNonce)
	st := e.status(t)
	assert.Equal(t, "unbond 3", st.Account)
	assert.True(t, st.WaitingUntil.IsZero(), "no wait pending once claimable")
}

// The unbond recorded is the first one read: later reads never change it.
func TestUnstakeKeepsTheFirstUnbondRead(t *testing.T) {
	u := actevm.Unbond{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 1, Epoch: 100, EpochDuration: time.Minute}
	later := u
	later.Nonce, later.Epoch = 4, 101
	reads := &unbondReads{us: []actevm.Unbond{u, later}}
	e := unstakeWith(t, reads, workflows.Options{})
	r := e.result(t)
	assert.Equal(t, uint64(3), r.UnbondNonce)
	assert.Equal(t, "unbond 3", e.status(t).Account)
}

// Without the epoch's duration the wait is the re-check the worker asks, within MaxEpochWait.
func TestUnstakeWaitWithoutEpochDurationIsTheRecheck(t *testing.T) {
	u := actevm.Unbond{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 80, Epoch: 100, RecheckAfter: 5 * time.Minute}
	claimable := u
	claimable.Epoch = 180
	reads := &unbondReads{us: []actevm.Unbond{u, claimable}}
	e := unstakeWith(t, reads, workflows.Options{})
	e.result(t)
	assert.Equal(t, []time.Duration{5 * time.Minute}, gapsOf(reads.times))
}

func TestUnstakeWaitWithoutEpochDurationOrRecheckIsMaxEpochWait(t *testing.T) {
	u := actevm.Unbond{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 80, Epoch: 100}
	claimable := u
	claimable.Epoch = 180
	reads := &unbondReads{us: []actevm.Unbond{u, claimable}}
	e := unstakeWith(t, reads, workflows.Options{MaxEpochWait: 7 * time.Minute})
	e.result(t)
	assert.Equal(t, []time.Duration{7 * time.Minute}, gapsOf(reads.times))
}

// A wait is never shorter than a second, however short the epochs.
func TestUnstakeWaitIsAtLeastASecond(t *testing.T) {
	u := actevm.Unbond{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 1, Epoch: 100, EpochDuration: time.Millisecond}
	claimable := u
	claimable.Epoch = 101
	reads := &unbondReads{us: []actevm.Unbond{u, claimable}}
	e := unstakeWith(t, reads, workflows.Options{})
	e.result(t)
	assert.Equal(t, []time.Duration{time.Second}, gapsOf(reads.times))
}

// A read of the unbond that fails in a way that may heal stalls the operation (its unstake landed)
// and tries again.
func TestUnstakeUnbondReadRefusedStallsThenClaims(t *testing.T) {
	u := actevm.Unbond{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 0, Epoch: 100}
	reads := &unbondReads{us: []actevm.Unbond{u},
		errs: []error{temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil)}}
	var stall *workflows.Stall
	e := newEnv(t, lease.Grant{Nonce: 10}, lease.Grant{Nonce: 11})
	e.delegation(actevm.Delegation{Staked: polWei(40), ExpectedShares: polWei(40)})
	e.OnActivity(ea.EVMReadUnbond, mock.Anything, mock.Anything).Return(reads.read(e.Now))
	e.RegisterDelayedCallback(func() { stall = e.status(t).Stall }, 10*time.Second)
	in := delegateInput()
	in.Amount = polWei(40)
	e.ExecuteWorkflow(UnstakeWorkflowType, in)
	e.result(t)
	require.NotNil(t, stall)
	assert.Contains(t, stall.LastError, "rpc 403")
	require.Len(t, e.chain.builds, 2)
	assert.Equal(t, actevm.Operation("claim"), e.chain.builds[1].Intent.Operation)
}

func TestUnstakeCancelledDuringTheWaitClaimsNothing(t *testing.T) {
	u := actevm.Unbond{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 80, Epoch: 100, EpochDuration: time.Hour}
	reads := &unbondReads{us: []actevm.Unbond{u}}
	e := newEnv(t, lease.Grant{Nonce: 10})
	e.delegation(actevm.Delegation{Staked: polWei(40), ExpectedShares: polWei(40)})
	e.OnActivity(ea.EVMReadUnbond, mock.Anything, mock.Anything).Return(reads.read(e.Now))
	e.RegisterDelayedCallback(e.CancelWorkflow, 30*time.Minute)
	in := delegateInput()
	in.Amount = polWei(40)
	e.ExecuteWorkflow(UnstakeWorkflowType, in)
	assert.True(t, temporal.IsCanceledError(e.GetWorkflowError()), "got %v", e.GetWorkflowError())
	require.Len(t, e.chain.builds, 1, "the unstake only; no claim")
	assert.Equal(t, workflows.StepCancelled, e.status(t).Step)
}
