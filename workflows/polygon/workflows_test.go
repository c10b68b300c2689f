package polygon

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

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

const (
	staker  = "0x1111111111111111111111111111111111111111"
	share   = "0x2222222222222222222222222222222222222222"
	network = "dev"
)

var pol = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

func polWei(n int64) string { return new(big.Int).Mul(big.NewInt(n), pol).String() }

// chain fakes the EVM activities: each build under a nonce gets its own hash, and every call is
// recorded.
type chain struct {
	mu sync.Mutex
	// builds and signs record the inputs the workflow sent.
	builds []actevm.BuildInput
	signs  []actevm.SignInput
	sent   []actevm.BroadcastInput
	// confirm answers each Confirm call in turn (the last one repeats); nil: finalized with the
	// newest hash.
	confirm []func(actevm.ConfirmInput) actevm.ConfirmResult
	calls   int
	// refuseBuild, when set, may refuse a build.
	refuseBuild func(actevm.BuildInput) error
}

func (c *chain) build(_ context.Context, in actevm.BuildInput) (actevm.BuildResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds = append(c.builds, in)
	if c.refuseBuild != nil {
		if err := c.refuseBuild(in); err != nil {
			return actevm.BuildResult{}, err
		}
	}
	it := in.Intent
	it.GasLimit = 100_000
	it.MaxFeePerGas = big.NewInt(int64(10 * in.Build))
	it.MaxPriorityFeePerGas = big.NewInt(int64(in.Build))
	return actevm.BuildResult{UnsignedTransaction: fmt.Sprintf("0xunsigned-%s-%d-%d", it.Operation, it.Nonce, in.Build), Intent: it}, nil
}

func (c *chain) sign(_ context.Context, in actevm.SignInput) (actevm.SignResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signs = append(c.signs, in)
	return actevm.SignResult{Hash: fmt.Sprintf("0xhash-%s-%d-%d", in.Intent.Operation, in.Intent.Nonce, len(c.signs)),
		SignedTransaction: "0xsigned", Nonce: in.Intent.Nonce, MaxFee: "1000000",
		MaxFeePerGas: in.Intent.MaxFeePerGas.String(), MaxPriorityFeePerGas: in.Intent.MaxPriorityFeePerGas.String()}, nil
}

func (c *chain) broadcast(_ context.Context, in actevm.BroadcastInput) (actevm.BroadcastResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, in)
	return actevm.BroadcastResult{Hash: in.Hash}, nil
}

func (c *chain) confirmed(_ context.Context, in actevm.ConfirmInput) (actevm.ConfirmResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := min(c.calls, len(c.confirm)-1)
	c.calls++
	if len(c.confirm) == 0 || c.confirm[i] == nil {
		return actevm.ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: in.Hashes[len(in.Hashes)-1], Block: 100, Fee: "21000"}, nil
	}
	return c.confirm[i](in), nil
}

type env struct {
	*testsuite.TestWorkflowEnvironment
	chain    *chain
	releases []lease.Release
	leases   int
}

func newEnv(t *testing.T, grants ...lease.Grant) *env {
	var suite testsuite.WorkflowTestSuite
	e := &env{TestWorkflowEnvironment: suite.NewTestWorkflowEnvironment(), chain: &chain{}}
	Register(e)
	e.RegisterActivity(ea)
	e.OnActivity(ea.EVMCheckPolicy, mock.Anything, mock.Anything).Return(activities.PolicyDecision{}, nil).Maybe()
	e.OnActivity(ea.EVMRequestLease, mock.Anything, mock.Anything).Return(func(context.Context, lease.Request) error {
		e.leases++
		return nil
	}).Maybe()
	e.OnActivity(ea.EVMBuild, mock.Anything, mock.Anything).Return(e.chain.build).Maybe()
	e.OnActivity(ea.EVMSign, mock.Anything, mock.Anything).Return(e.chain.sign).Maybe()
	e.OnActivity(ea.EVMCheckFresh, mock.Anything, mock.Anything).Return(actevm.FreshResult{}, nil).Maybe()
	e.OnActivity(ea.EVMBroadcast, mock.Anything, mock.Anything).Return(e.chain.broadcast).Maybe()
	e.OnActivity(ea.EVMConfirm, mock.Anything, mock.Anything).Return(e.chain.confirmed).Maybe()
	e.OnSignalExternalWorkflow(mock.Anything, lease.ID(lease.EVM, network, common.HexToAddress(staker).Hex()), "", lease.SignalRelease, mock.Anything).
		Return(func(_, _, _, _ string, arg any) error {
			e.releases = append(e.releases, arg.(lease.Release))
			return nil
		}).Maybe()
	// The sequencer's grants, in the order the operation asks (signals wait in the channel).
	e.RegisterDelayedCallback(func() {
		for _, g := range grants {
			e.SignalWorkflow(lease.SignalGrant, g)
		}
	}, 0)
	t.Cleanup(func() { e.AssertExpectations(t) })
	return e
}

func (e *env) delegation(d actevm.Delegation) {
	e.OnActivity(ea.EVMReadDelegation, mock.Anything, mock.Anything).Return(d, nil)
}

func (e *env) result(t *testing.T) Result {
	t.Helper()
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var r Result
	require.NoError(t, e.GetWorkflowResult(&r))
	return r
}

func delegateInput() DelegateInput {
	return DelegateInput{Network: network, Staker: staker, ValidatorShare: share, Amount: polWei(100)}
}

func TestDelegateApprovesExactlyTheAmountThenDelegatesOnConsecutiveNonces(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 7})
	e.delegation(actevm.Delegation{Balance: polWei(500), Allowance: polWei(1), ExpectedShares: polWei(100)})
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	r := e.result(t)

	require.Len(t, e.chain.builds, 2)
	approve, delegate := e.chain.builds[0].Intent, e.chain.builds[1].Intent
	require.Equal(t, actevm.Operation("approve"), approve.Operation)
	require.Equal(t, polWei(100), approve.Amount.String(), "the allowance granted is exactly the amount, never more")
	require.Equal(t, common.Address{}, approve.ValidatorShare)
	require.Equal(t, uint64(7), approve.Nonce)
	require.Equal(t, actevm.Operation("delegate"), delegate.Operation)
	require.Equal(t, uint64(8), delegate.Nonce, "the delegate takes the next nonce")
	require.Equal(t, polWei(100), delegate.Amount.String())
	require.Equal(t, polWei(100), delegate.ExpectedShares.String())
	require.Equal(t, common.HexToAddress(share), delegate.ValidatorShare)
	require.Equal(t, uint64(1337), delegate.ChainID)

	require.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 9}}, e.releases,
		"the lease goes back once, past both nonces used")
	require.Len(t, r.Transactions, 2)
	require.Equal(t, "approve", r.Transactions[0].Kind)
	require.Equal(t, "delegate", r.Transactions[1].Kind)
	require.Equal(t, "42000", r.Fee, "two transactions of 21,000 wei")
	require.Equal(t, polWei(100), r.Amount)
}

func TestDelegateWithEnoughAllowanceSendsNoApprove(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 3})
	e.delegation(actevm.Delegation{Balance: polWei(500), Allowance: polWei(100), ExpectedShares: polWei(100)})
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	r := e.result(t)
	require.Len(t, e.chain.builds, 1)
	require.Equal(t, actevm.Operation("delegate"), e.chain.builds[0].Intent.Operation)
	require.Equal(t, uint64(3), e.chain.builds[0].Intent.Nonce)
	require.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 4}}, e.releases)
	require.Len(t, r.Transactions, 1)
}

func TestDelegateRefusedWhenTheBalanceIsShortSignsNothing(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 3})
	e.delegation(actevm.Delegation{Balance: polWei(99), Allowance: polWei(100), ExpectedShares: polWei(100)})
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	require.True(t, e.IsWorkflowCompleted())
	err := e.GetWorkflowError()
	require.ErrorContains(t, err, "holds 99 POL, less than the 100 POL asked; nothing was signed")
	require.Empty(t, e.chain.signs)
	require.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 3}}, e.releases,
		"the lease goes back with its nonce unused")
}

func TestNonceConflictFailsBeforeAnythingIsBuilt(t *testing.T) {
	e := newEnv(t, lease.Grant{Error: "nonces 4 to 5 of 0x11 were used by transactions stakeflow did not send"})
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	require.True(t, e.IsWorkflowCompleted())
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, e.GetWorkflowError(), &appErr)
	require.Equal(t, lease.ErrNonceConflict, appErr.Type())
	require.Contains(t, appErr.Error(), "did not send")
	require.Empty(t, e.chain.builds)
}

func TestStuckTransactionIsReplacedUnderTheSameNonceAndAnEarlierBuildMayLand(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 5})
	e.delegation(actevm.Delegation{Balance: polWei(500), Allowance: polWei(100), ExpectedShares: polWei(100)})
	e.chain.confirm = []func(actevm.ConfirmInput) actevm.ConfirmResult{
		func(actevm.ConfirmInput) actevm.ConfirmResult {
			return actevm.ConfirmResult{Outcome: activities.OutcomeReplace}
		},
		func(in actevm.ConfirmInput) actevm.ConfirmResult {
			// The first build lands after all: only one can, under the one nonce.
			return actevm.ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: in.Hashes[0], Block: 9, Fee: "30000"}
		},
	}
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	r := e.result(t)
	require.Len(t, e.chain.builds, 2)
	require.Equal(t, e.chain.builds[0].Intent.Nonce, e.chain.builds[1].Intent.Nonce, "the replacement reuses the nonce")
	require.Equal(t, 2, e.chain.builds[1].Build)
	require.Equal(t, "10", e.chain.builds[1].PrevMaxFeePerGas, "the rebuild knows the fees it must outbid")
	require.Equal(t, "1", e.chain.builds[1].PrevMaxPriorityFeePerGas)
	require.Len(t, r.Transactions, 1)
	require.Equal(t, "0xhash-delegate-5-1", r.Transactions[0].TxID, "the build that landed is the one recorded")
	require.Equal(t, 2, r.Transactions[0].Builds)
	require.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 6}}, e.releases)
}

func TestUnstakeWaitsForTheWithdrawalDelayThenClaimsTheUnbond(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 10}, lease.Grant{Nonce: 11})
	e.delegation(actevm.Delegation{Staked: polWei(100), Shares: polWei(100), ExpectedShares: polWei(40)})
	var reads []actevm.UnbondInput
	epoch := uint64(20)
	e.OnActivity(ea.EVMReadUnbond, mock.Anything, mock.Anything).Return(func(_ context.Context, in actevm.UnbondInput) (actevm.Unbond, error) {
		reads = append(reads, in)
		u := actevm.Unbond{Nonce: 3, Shares: polWei(40), Amount: polWei(40), WithdrawEpoch: 20, Epoch: epoch,
			WithdrawalDelay: 80, EpochDuration: 30 * time.Minute}
		epoch += 40
		return u, nil
	})
	in := delegateInput()
	in.Amount = polWei(40)
	start := e.Now()
	e.ExecuteWorkflow(UnstakeWorkflowType, in)
	r := e.result(t)

	require.Len(t, e.chain.builds, 2)
	require.Equal(t, actevm.Operation("unstake"), e.chain.builds[0].Intent.Operation)
	require.Equal(t, polWei(40), e.chain.builds[0].Intent.Amount.String())
	require.Equal(t, uint64(10), e.chain.builds[0].Intent.Nonce)
	require.Equal(t, actevm.Operation("claim"), e.chain.builds[1].Intent.Operation)
	require.Equal(t, "3", e.chain.builds[1].Intent.UnbondNonce.String(), "the unbond read from the unstake's receipt is the one claimed")
	require.Equal(t, uint64(11), e.chain.builds[1].Intent.Nonce)
	require.Equal(t, "0xhash-unstake-10-1", reads[0].TxID, "the unbond is found from the unstake's finalized receipt")
	require.Len(t, reads, 3, "read, wait, read, wait, read: claimable at epoch 100")
	// 80 epochs left of 30 minutes each, capped at the hourly re-check: two waits of an hour.
	require.Equal(t, 2*time.Hour, e.Now().Sub(start).Truncate(time.Minute))
	require.Equal(t, uint64(3), r.UnbondNonce)
	require.Equal(t, []lease.Release{{WorkflowID: "default-test-workflow-id", Next: 11}, {WorkflowID: "default-test-workflow-id", Next: 12}}, e.releases,
		"no lease is held during the wait")
}

func TestRewardsWithNothingToWithdrawSignNothing(t *testing.T) {
	e := newEnv(t)
	e.delegation(actevm.Delegation{LiquidRewards: "0"})
	e.ExecuteWorkflow(WithdrawRewardsWorkflowType, RewardsInput{Network: network, Staker: staker, ValidatorShare: share})
	require.ErrorContains(t, e.GetWorkflowError(), "has no rewards")
	require.Empty(t, e.chain.builds)
	require.Zero(t, e.leases, "no lease asked for")
}

func TestRestakeSendsOneRestake(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 1})
	e.delegation(actevm.Delegation{LiquidRewards: polWei(2)})
	e.ExecuteWorkflow(RestakeWorkflowType, RewardsInput{Network: network, Staker: staker, ValidatorShare: share})
	r := e.result(t)
	require.Len(t, e.chain.builds, 1)
	require.Equal(t, actevm.Operation("restake"), e.chain.builds[0].Intent.Operation)
	require.Equal(t, polWei(2), r.Amount)
}

func TestInvalidInputRefusedBeforeAnyActivity(t *testing.T) {
	for name, in := range map[string]DelegateInput{
		"network":        {Network: "polygon-mainnet", Staker: staker, ValidatorShare: share, Amount: "1"},
		"staker":         {Network: network, Staker: "0x12", ValidatorShare: share, Amount: "1"},
		"validatorShare": {Network: network, Staker: staker, ValidatorShare: staker, Amount: "1"},
		"amount":         {Network: network, Staker: staker, ValidatorShare: share, Amount: "1.5"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.ExecuteWorkflow(DelegateWorkflowType, in)
			require.ErrorContains(t, e.GetWorkflowError(), "invalid "+name)
			require.Zero(t, e.leases)
			require.Empty(t, e.chain.builds)
		})
	}
}

// TestParseWeiUnderTheOneRule: a wei amount is a positive whole number without sign or leading
// zero, at most 2^256-1 (written out by hand).
func TestParseWeiUnderTheOneRule(t *testing.T) {
	const max = "115792089237316195423570985008687907853269984665640564039457584007913129639935"
	for _, in := range []string{"1", "42", max} {
		v, err := ParseWei("amount", in)
		require.NoError(t, err, in)
		require.Equal(t, in, v.String())
	}
	for in, reason := range map[string]string{
		"":                     "is required",
		"0":                    "must be more than zero",
		"0042":                 "without leading zeros",
		"+1":                   "without a sign",
		"-1":                   "without a sign",
		"1.5":                  "without a decimal point",
		"1e18":                 "without an exponent",
		" 1":                   "without spaces",
		max[:len(max)-1] + "6": "more than a uint256 holds",
	} {
		_, err := ParseWei("amount", in)
		var ie *workflows.InputError
		require.True(t, errors.As(err, &ie), "%q: %v", in, err)
		require.Equal(t, "amount", ie.Field)
		require.Contains(t, ie.Reason, reason, in)
	}
}

func TestFormatPOLIsExact(t *testing.T) {
	require.Equal(t, "1 POL", FormatPOL("1000000000000000000"))
	require.Equal(t, "0.000000000000000001 POL", FormatPOL("1"))
	require.Equal(t, "123456789.5 POL", FormatPOL("123456789500000000000000000"))
}

// A balance and an allowance of exactly the amount are enough: no approve, one delegate.
func TestDelegateOfExactlyTheBalanceAndAllowance(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 3})
	e.delegation(actevm.Delegation{Balance: polWei(100), Allowance: polWei(100), ExpectedShares: polWei(100)})
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	r := e.result(t)
	require.Len(t, e.chain.builds, 1)
	assert.Equal(t, actevm.Operation("delegate"), e.chain.builds[0].Intent.Operation)
	assert.Len(t, r.Transactions, 1)
}

// A read the RPC refuses before anything landed fails the operation at once: nothing to stall for.
func TestDelegateReadRefusedBeforeAnythingLandedFails(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 3})
	e.OnActivity(ea.EVMReadDelegation, mock.Anything, mock.Anything).
		Return(actevm.Delegation{}, temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil))
	e.ExecuteWorkflow(DelegateWorkflowType, delegateInput())
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(e.GetWorkflowError(), &appErr))
	assert.Equal(t, activities.ErrChainRejected, appErr.Type())
	assert.Nil(t, e.status(t).Stall)
}

func TestWithdrawRewardsSendsOneWithdrawOfTheRewards(t *testing.T) {
	e := newEnv(t, lease.Grant{Nonce: 1})
	e.delegation(actevm.Delegation{LiquidRewards: "1"})
	e.ExecuteWorkflow(WithdrawRewardsWorkflowType, RewardsInput{Network: network, Staker: staker, ValidatorShare: share})
	r := e.result(t)
	require.Len(t, e.chain.builds, 1)
	assert.Equal(t, actevm.Operation("withdraw-rewards"), e.chain.builds[0].Intent.Operation)
	assert.Equal(t, "1", r.Amount)
	assert.Equal(t, OpWithdrawRewards, r.Operation)
}
