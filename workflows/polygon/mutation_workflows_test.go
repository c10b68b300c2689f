package polygon

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/workflows"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

func (e *env) status(t *testing.T) workflows.Status {
	t.Helper()
	v, err := e.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, err)
	var st workflows.Status
	require.NoError(t, v.Get(&st))
	return st
}

// A balance and an allowance of exactly the amount are enough: no approve, one delegate.
func TestDelegateOfExactlyTheBalanceAndAllowance(t *testing.T) {
	e := newEnv(t, wfevm.Grant{Nonce: 3})
	e.delegation(actevm.Delegation{Balance: polWei(100), Allowance: polWei(100), ExpectedShares: polWei(100)})
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	r := e.result(t)
	require.Len(t, e.chain.builds, 1)
	assert.Equal(t, actevm.Operation("delegate"), e.chain.builds[0].Intent.Operation)
	assert.Len(t, r.Transactions, 1)
}

// A read the RPC refuses before anything landed fails the operation at once: nothing to stall for.
func TestDelegateReadRefusedBeforeAnythingLandedFails(t *testing.T) {
	e := newEnv(t, wfevm.Grant{Nonce: 3})
	e.OnActivity(ea.EVMReadDelegation, mock.Anything, mock.Anything).
		Return(actevm.Delegation{}, temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil))
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(e.GetWorkflowError(), &appErr))
	assert.Equal(t, activities.ErrChainRejected, appErr.Type())
	assert.Nil(t, e.status(t).Stall)
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
	e := newEnv(t, wfevm.Grant{Nonce: 10}, wfevm.Grant{Nonce: 11})
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
	e := newEnv(t, wfevm.Grant{Nonce: 10}, wfevm.Grant{Nonce: 11})
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
	e := newEnv(t, wfevm.Grant{Nonce: 10})
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

func TestWithdrawRewardsSendsOneWithdrawOfTheRewards(t *testing.T) {
	e := newEnv(t, wfevm.Grant{Nonce: 1})
	e.delegation(actevm.Delegation{LiquidRewards: "1"})
	e.ExecuteWorkflow(WithdrawRewardsWorkflowType, RewardsInput{Network: network, Staker: staker, ValidatorShare: share})
	r := e.result(t)
	require.Len(t, e.chain.builds, 1)
	assert.Equal(t, actevm.Operation("withdraw-rewards"), e.chain.builds[0].Intent.Operation)
	assert.Equal(t, "1", r.Amount)
	assert.Equal(t, OpWithdrawRewards, r.Operation)
}

func TestRewardsInputIsValidated(t *testing.T) {
	e := newEnv(t)
	e.ExecuteWorkflow(RestakeWorkflowType, RewardsInput{Network: network, Staker: staker, ValidatorShare: staker})
	require.ErrorContains(t, e.GetWorkflowError(), "invalid validatorShare")
	assert.Zero(t, e.leases)
	assert.NoError(t, RewardsInput{Network: network, Staker: staker, ValidatorShare: share}.Validate())
	assert.Error(t, RewardsInput{Network: network, Staker: staker, ValidatorShare: share, Options: workflows.Options{MaxBuilds: 11}}.Validate())
}

func fieldOf(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var ie *workflows.InputError
	require.True(t, errors.As(err, &ie), "want an InputError, got %v", err)
	return ie.Field
}

func TestDelegateInputFields(t *testing.T) {
	bare := strings.TrimPrefix(share, "0x")
	tests := []struct {
		name  string
		edit  func(*DelegateInput)
		field string
	}{
		{"valid", func(*DelegateInput) {}, ""},
		{"staker missing", func(in *DelegateInput) { in.Staker = "" }, "staker"},
		{"share without 0x", func(in *DelegateInput) { in.ValidatorShare = bare }, "validatorShare"},
		{"share the zero address", func(in *DelegateInput) { in.ValidatorShare = "0x0000000000000000000000000000000000000000" }, "validatorShare"},
		{"share is the staker in other case", func(in *DelegateInput) {
			in.Staker = "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd"
			in.ValidatorShare = "0xABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD"
		}, "validatorShare"},
		{"amount missing", func(in *DelegateInput) { in.Amount = "" }, "amount"},
		{"amount with +", func(in *DelegateInput) { in.Amount = "+5" }, "amount"},
		{"amount zero", func(in *DelegateInput) { in.Amount = "0" }, "amount"},
		{"amount negative", func(in *DelegateInput) { in.Amount = "-1" }, "amount"},
		{"amount 1 wei", func(in *DelegateInput) { in.Amount = "1" }, ""},
		{"amount 2^256-1", func(in *DelegateInput) {
			in.Amount = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)).String()
		}, ""},
		{"amount 2^256", func(in *DelegateInput) { in.Amount = new(big.Int).Lsh(big.NewInt(1), 256).String() }, "amount"},
		{"options", func(in *DelegateInput) { in.Options.MaxBuilds = -1 }, "options.maxBuilds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := delegateInput()
			tt.edit(&in)
			assert.Equal(t, tt.field, fieldOf(t, in.Validate()))
		})
	}
}

func TestFormatPOLOfWhatIsNoAmount(t *testing.T) {
	assert.Equal(t, "0 POL", FormatPOL("0"))
	assert.Equal(t, "-1 wei", FormatPOL("-1"))
	assert.Equal(t, "lots wei", FormatPOL("lots"))
}

func TestSummaries(t *testing.T) {
	assert.Equal(t, "delegate 1.5 POL from "+staker+" to validator share "+share+" (dev)",
		Summary(OpDelegate, network, staker, share, "1500000000000000000"))
	assert.Equal(t, "unstake 2 POL from validator share "+share+", wait for the withdrawal delay, claim to "+staker+" (dev)",
		Summary(OpUnstake, network, staker, share, polWei(2)))
	assert.Equal(t, "withdraw "+staker+"'s rewards from validator share "+share+" (dev)", Summary(OpWithdrawRewards, network, staker, share, ""))
	assert.Equal(t, "restake "+staker+"'s rewards with validator share "+share+" (dev)", Summary(OpRestake, network, staker, share, ""))
	assert.Equal(t, "mystery", Summary("mystery", network, staker, share, ""))
	attrs := temporal.NewSearchAttributes(Attributes(OpRestake, network, staker)...)
	v, _ := attrs.GetKeyword(workflows.SAChain)
	assert.Equal(t, Chain, v)
	v, _ = attrs.GetKeyword(workflows.SAOperation)
	assert.Equal(t, OpRestake, v)
}
