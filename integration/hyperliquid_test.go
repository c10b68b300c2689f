//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	hlsigner "github.com/stakeflow/stakeflow/signer/hyperliquid"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
)

// hyperliquidDelegator is the i-th Hyperliquid delegator: EVM keys 9 to 11.
func hyperliquidDelegator(i int) common.Address { return st.EVM.Stakers[9+i] }

const hype = uint64(100_000_000) // wei per HYPE

// TestHyperliquidWithdrawSurvivesWorkerRestart withdraws 2.5 HYPE through the admin tool: the
// operation rests in Hyperliquid's queue, the worker stops and the queue passes (warped), a new
// worker starts, and the withdrawal completes: spot rises by exactly the amount, one request was
// asked and one action submitted. It runs alone (no t.Parallel): it stops the shared worker.
func TestHyperliquidWithdrawSurvivesWorkerRestart(t *testing.T) {
	delegator := hyperliquidDelegator(0)
	st.Sandbox.HyperliquidFund("testnet", delegator, 10*hype)
	id := operationID(t, "hyperliquid-withdraw")
	out, err := starterRun(t, "hyperliquid", "withdraw", "--network", "testnet", "--delegator", delegator.Hex(), "--amount", "2.5", "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, wfhyperliquid.StepWaitingWithdrawal)
	acct := st.Sandbox.HyperliquidAccount("testnet", delegator)
	require.Len(t, acct.Pending, 1)
	assert.Equal(t, 1, acct.Submitted)
	assert.Equal(t, 75*hype/10, acct.Staking)
	snapshotAs(t, id, wfhyperliquid.WithdrawWorkflowType+"-waiting")

	require.NoError(t, st.StopWorker())
	st.Sandbox.HyperliquidWarp("testnet", sandbox.HyperliquidQueue("testnet"))
	require.NoError(t, st.StartWorker(context.Background()))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res wfhyperliquid.WithdrawResult
	require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	assert.Equal(t, "250000000", res.Wei)
	assert.Equal(t, "250000000", res.ReachedSpot)
	assert.Equal(t, "0", res.SpotBefore)
	assert.Equal(t, "250000000", res.SpotAfter, "spot rose by exactly the amount")
	assert.Equal(t, 1, res.Requests)
	acct = st.Sandbox.HyperliquidAccount("testnet", delegator)
	assert.Equal(t, 25*hype/10, acct.Spot, "the exchange's spot balance agrees")
	assert.Empty(t, acct.Pending)
	assert.Equal(t, 1, acct.Submitted, "one action, submitted once")
	assert.Equal(t, 1, st.Sandbox.HyperliquidRequests(delegator), "one request asked of the service")
}

// TestHyperliquidTwoSameAmountWithdrawalsAtOnce (issue 26, finding 4): two withdrawals of the same
// amount for one delegator, started at once through the admin tool. The delegator's lease lets one
// run at a time (the second waits in waiting-nonce until the first's withdrawal is in the
// history); both reach spot, each with its own withdrawal: the two results name two different
// hashes, and the exchange's record of each hash carries the nonce that operation signed, never
// the other's. It runs alone (no t.Parallel): it warps testnet's queue.
func TestHyperliquidTwoSameAmountWithdrawalsAtOnce(t *testing.T) {
	// The sixth-pending test's delegator, on the other network: that test asserts its mainnet
	// account only.
	delegator := hyperliquidDelegator(1)
	st.Sandbox.HyperliquidFund("testnet", delegator, 10*hype)
	before := st.Sandbox.HyperliquidAccount("testnet", delegator)
	requests := st.Sandbox.HyperliquidRequests(delegator)
	ids := []string{operationID(t, "hyperliquid-withdraw-a"), operationID(t, "hyperliquid-withdraw-b")}
	recordAs(ids[1], wfhyperliquid.WithdrawWorkflowType+"-leased")
	for _, id := range ids {
		out, err := starterRun(t, "hyperliquid", "withdraw", "--network", "testnet", "--delegator", delegator.Hex(), "--amount", "1.5", "--id", id)
		require.NoError(t, err, out)
	}
	// Both withdrawals in Hyperliquid's queue: the second was asked for, signed and submitted only
	// after the first's was in the history.
	var pending []sandbox.HyperliquidPending
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pending = st.Sandbox.HyperliquidAccount("testnet", delegator).Pending
		assert.Len(c, pending, len(before.Pending)+2)
	}, 90*time.Second, 100*time.Millisecond)
	pendingByHash := map[string]sandbox.HyperliquidPending{}
	for _, p := range pending {
		pendingByHash[strings.ToLower(p.Hash)] = p
	}
	st.Sandbox.HyperliquidWarp("testnet", sandbox.HyperliquidQueue("testnet"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hashes := map[string]string{}
	for _, id := range ids {
		var res wfhyperliquid.WithdrawResult
		require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res), id)
		assert.Equal(t, "150000000", res.ReachedSpot, id)
		assert.Equal(t, 1, res.Requests, id)
		p, ok := pendingByHash[strings.ToLower(res.Hash)]
		require.True(t, ok, "%s names %s, which the exchange did not take from this delegator", id, res.Hash)
		assert.Equal(t, res.Nonce, p.Nonce, "%s: the withdrawal it names is the one its own signed action made", id)
		assert.NotContains(t, hashes, res.Hash, "%s names the withdrawal %s already names", id, hashes[res.Hash])
		hashes[res.Hash] = id
	}
	// One at a time: the operation granted the lease second was granted it only after the first
	// gave it back, which the first does once the history shows its withdrawal.
	leases := []leaseTimes{leaseTimesOf(t, ids[0]), leaseTimesOf(t, ids[1])}
	if leases[1].granted.Before(leases[0].granted) {
		leases[0], leases[1] = leases[1], leases[0]
	}
	assert.False(t, leases[1].granted.Before(leases[0].released), "the second was granted the lease at %s, before the first gave it back at %s",
		leases[1].granted, leases[0].released)
	after := st.Sandbox.HyperliquidAccount("testnet", delegator)
	assert.Equal(t, before.Submitted+2, after.Submitted, "two actions, one each")
	assert.Equal(t, before.Spot+3*hype, after.Spot, "both reached spot")
	assert.Equal(t, before.Staking-3*hype, after.Staking)
	assert.Equal(t, requests+2, st.Sandbox.HyperliquidRequests(delegator), "one request each")
}

// leaseTimes are when an operation was granted its delegator's lease and when it gave it back, as
// its history records them.
type leaseTimes struct{ granted, released time.Time }

func leaseTimesOf(t *testing.T, id string) leaseTimes {
	t.Helper()
	it := st.Client.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var lt leaseTimes
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == lease.SignalGrant {
			lt.granted = ev.GetEventTime().AsTime()
		}
		if a := ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a != nil && a.GetSignalName() == lease.SignalRelease {
			lt.released = ev.GetEventTime().AsTime()
		}
	}
	require.False(t, lt.granted.IsZero(), "%s was never granted the lease", id)
	require.False(t, lt.released.IsZero(), "%s never gave the lease back", id)
	return lt
}

// TestHyperliquidRefusals: a sixth pending withdrawal and each hostile request are refused with
// nothing signed or submitted.
func TestHyperliquidRefusals(t *testing.T) {
	for name, run := range map[string]func(*testing.T){
		"SixthPendingRefused":    testHyperliquidSixthRefused,
		"HostileRequestsRefused": testHyperliquidHostileRefused,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run(t)
		})
	}
}

// testHyperliquidSixthRefused: with five withdrawals pending (signed and submitted here with the
// delegator's key), a sixth is refused before the service is asked, naming the five by the hashes
// the delegator's history shows.
func testHyperliquidSixthRefused(t *testing.T) {
	delegator := hyperliquidDelegator(1)
	st.Sandbox.HyperliquidFund("mainnet", delegator, 100*hype)
	signer := hlsigner.New(signerevm.KeyringOf(st.EVM.Key(delegator)), hlsigner.Policy{})
	base := uint64(time.Now().UnixMilli())
	for i := range uint64(5) {
		a := hlsigner.Action{Type: hlsigner.TypeCWithdraw, SignatureChainID: hlsigner.DefaultSignatureChainID, HyperliquidChain: "Mainnet", Wei: hype, Nonce: base - i}
		s, err := signer.Sign(context.Background(), hlsigner.Intent{Network: "mainnet", Delegator: delegator, Amount: "1"}, &hlsigner.Unsigned{Action: a})
		require.NoError(t, err)
		submitHyperliquid(t, "mainnet", s)
	}
	pending := st.Sandbox.HyperliquidAccount("mainnet", delegator).Pending
	require.Len(t, pending, 5)
	// The same delegator withdraws on testnet in another test: its requests are counted here
	// as a difference.
	requests := st.Sandbox.HyperliquidRequests(delegator)
	id := operationID(t, "hyperliquid-withdraw")
	recordAs(id, wfhyperliquid.WithdrawWorkflowType+"-too-many-pending")
	out, err := starterRun(t, "hyperliquid", "withdraw", "--network", "mainnet", "--delegator", delegator.Hex(), "--amount", "1", "--id", id, "--wait", "--json")
	require.Error(t, err, out)
	assert.Contains(t, err.Error(), "5 withdrawals pending")
	for _, p := range pending {
		assert.Contains(t, err.Error(), p.Hash)
	}
	assert.Equal(t, requests, st.Sandbox.HyperliquidRequests(delegator), "the service was not asked: nothing to sign")
	assert.Equal(t, 5, st.Sandbox.HyperliquidAccount("mainnet", delegator).Submitted)
}

// testHyperliquidHostileRefused: each hostile request of endpoint 6 fails the operation with
// VerificationFailed naming the field; the exchange receives nothing.
func testHyperliquidHostileRefused(t *testing.T) {
	delegator := hyperliquidDelegator(2)
	st.Sandbox.HyperliquidFund("testnet", delegator, 10*hype)
	for _, c := range []struct {
		mode  sandbox.HyperliquidHostileMode
		field string
	}{
		{sandbox.HyperliquidOtherChain, "hyperliquidChain"}, {sandbox.HyperliquidOtherWei, "wei"}, {sandbox.HyperliquidOtherAmount, `its amount "2.25" against its action's wei 125000000`},
		{sandbox.HyperliquidOldNonce, "nonce"}, {sandbox.HyperliquidWithdraw3, `"withdraw3"`}, {sandbox.HyperliquidUsdSend, `"usdSend"`},
	} {
		require.NoError(t, st.Sandbox.SetHyperliquidHostile(delegator, c.mode))
		id := operationID(t, "hyperliquid-withdraw")
		out, err := starterRun(t, "hyperliquid", "withdraw", "--network", "testnet", "--delegator", delegator.Hex(), "--amount", "1.25", "--id", id, "--wait", "--json")
		require.Error(t, err, "%s: %s", c.mode, out)
		assert.Contains(t, err.Error(), c.field, c.mode)
		status := queryStatus(t, id)
		assert.Contains(t, status.Error, "VerificationFailed", c.mode)
		assert.True(t, strings.Contains(status.Reason, "nothing was signed"), "%s: %s", c.mode, status.Reason)
	}
	require.NoError(t, st.Sandbox.SetHyperliquidHostile(delegator, sandbox.HyperliquidHonest))
	acct := st.Sandbox.HyperliquidAccount("testnet", delegator)
	assert.Equal(t, 0, acct.Submitted, "nothing reached the exchange")
	assert.Equal(t, 10*hype, acct.Staking)
}

// submitHyperliquid posts a signed action to the sandbox's exchange and requires it accepted.
func submitHyperliquid(t *testing.T, network string, s *hlsigner.Signed) {
	t.Helper()
	res, err := hlExchange(network, s)
	require.NoError(t, err)
	require.Equal(t, "ok", res.Status, "%v", res.Response)
}

func hlExchange(network string, s *hlsigner.Signed) (hlchain.ExchangeResult, error) {
	return hlchain.New(st.Sandbox.HyperliquidURL(network)).Exchange(context.Background(), s)
}
