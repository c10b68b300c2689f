//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/lease"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

func pol(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.Ether)) }

func decodePolygon(t *testing.T, out string) wfpolygon.Result {
	t.Helper()
	var res wfpolygon.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res), "starter output: %s", out)
	return res
}

// TestPolygon runs the Polygon operations on the real chain, each with its own staker, at once:
// each waits for blocks to be finalized (up to 32 blocks of 100 ms each on the local chain),
// and those waits overlap.
func TestPolygon(t *testing.T) {
	for name, run := range map[string]func(*testing.T){
		"DelegateThroughStarter":      testPolygonDelegateThroughStarter,
		"UnstakeWaitsThenClaims":      testPolygonUnstakeWaitsThenClaims,
		"DroppedTransactionLandsOnce": testPolygonDroppedTransactionLandsOnce,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run(t)
		})
	}
}

// delegateWait delegates pol POL from staker to share through the admin tool and waits until the
// delegate is final.
func delegateWait(t *testing.T, staker, share common.Address, pol string) wfpolygon.Result {
	t.Helper()
	out, err := starterRun(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", share.Hex(), "--pol", pol, "--id", operationID(t, "polygon-delegate"), "--wait", "--json")
	require.NoError(t, err, out)
	return decodePolygon(t, out)
}

// paidFee is what a transaction paid, from its receipt: gas used x effective gas price.
func paidFee(t *testing.T, hash string) *big.Int {
	t.Helper()
	r, err := st.EVM.Node.Client().TransactionReceipt(context.Background(), common.HexToHash(hash))
	require.NoError(t, err)
	require.Equal(t, uint64(1), r.Status, "%s succeeded", hash)
	return new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice)
}

// testPolygonDelegateThroughStarter delegates POL through the starter on the real chain, twice at
// once from one address, and checks the chain shows exactly the intended effect: the POL moved,
// approves of exactly each amount (used up by its delegate), the shares minted, each transaction
// once, on consecutive nonces with no gap.
func testPolygonDelegateThroughStarter(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	staker, v := e.Stakers[0], e.Deployment.Validators[0]
	before, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)
	nonceBefore, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)

	// A second delegate from the same address, started at the same time.
	other := operationID(t, "polygon-delegate")
	out, err := starterRun(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "7", "--id", other, "--json")
	require.NoError(t, err, out)
	id := operationID(t, "polygon-delegate")
	out, err = starterRun(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "100", "--id", id, "--wait", "--json")
	require.NoError(t, err, out)
	res := decodePolygon(t, out)
	var otherRes wfpolygon.Result
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	require.NoError(t, st.Client.GetWorkflow(wctx, other, "").Get(wctx, &otherRes))
	require.Len(t, otherRes.Transactions, 2, "approve and delegate")

	require.Len(t, res.Transactions, 2)
	require.Equal(t, "approve", res.Transactions[0].Kind)
	require.Equal(t, "delegate", res.Transactions[1].Kind)
	require.Equal(t, pol(100).String(), res.Amount)

	staked, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Equal(t, pol(107), staked, "exactly 100 + 7 POL staked with the validator")
	after, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)
	// A delegate also pays out the rewards accrued so far (checkpoints other tests advance), so
	// the balance fell by the 107 POL staked, less those rewards.
	spent := new(big.Int).Sub(before, after)
	require.Positive(t, spent.Sign())
	require.LessOrEqual(t, spent.Cmp(pol(107)), 0, "no more than 107 POL left the staker")
	allowance, err := e.Deployment.Allowance(ctx, staker, e.Deployment.StakeManager)
	require.NoError(t, err)
	require.Zero(t, allowance.Sign(), "the approve granted exactly what the delegate used")
	shares, err := e.Deployment.Shares(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Positive(t, shares.Sign(), "shares minted to the staker")

	nonceAfter, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonceBefore+4, nonceAfter, "four transactions from the staker, no more")
	// Each operation holds the address's lease for both its transactions: one uses two
	// consecutive nonces, the other the next two, whichever went first.
	nonces := map[uint64]string{}
	for _, r := range []wfpolygon.Result{res, otherRes} {
		fees := new(big.Int)
		var first uint64
		for i, tx := range r.Transactions {
			got, _, err := e.Node.Client().TransactionByHash(ctx, common.HexToHash(tx.TxID))
			require.NoError(t, err)
			if i == 0 {
				first = got.Nonce()
			}
			require.Equal(t, first+uint64(i), got.Nonce(), "%s on the operation's next nonce", tx.Kind)
			nonces[got.Nonce()] = tx.TxID
			fee := paidFee(t, tx.TxID)
			require.Equal(t, fee.String(), tx.Fee, "the fee reported is the one the receipt shows")
			fees.Add(fees, fee)
		}
		require.Equal(t, fees.String(), r.Fee)
	}
	for n := nonceBefore; n < nonceAfter; n++ {
		require.Contains(t, nonces, n, "nonce %d used by one of the two operations: no gap", n)
	}

	// The address's sequencer rests between leases: what a deploy finds in flight.
	snapshotAs(t, leaseID(lease.EVM, stack.EVMNetwork, staker.Hex()), lease.WorkflowType+"-idle")

	// A second start under the same ID is refused and sends nothing.
	_, err = starterRun(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "100", "--id", id)
	require.Error(t, err)
	again, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonceAfter, again)
}

// testPolygonUnstakeWaitsThenClaims delegates, then unstakes part: the operation waits for the
// withdrawal delay (checkpoints advanced by the sandbox's control) and claims exactly the unbond.
func testPolygonUnstakeWaitsThenClaims(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	staker, v := e.Stakers[1], e.Deployment.Validators[1]
	delegateWait(t, staker, v.Share, "50")

	id := operationID(t, "polygon-unstake")
	out, err := starterRun(t, "polygon", "unstake", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "20", "--id", id, "--json")
	require.NoError(t, err, out)
	waitStep(t, id, wfpolygon.StepWaitingWithdrawal)
	snapshotAs(t, id, "PolygonUnstakeWorkflow-waiting-withdrawal-delay")
	// The unstake has landed (it also paid out the rewards accrued so far); from here only the
	// claim moves the staker's POL.
	before, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)
	nonce, err := e.Deployment.UnbondNonce(ctx, v.Share, staker)
	require.NoError(t, err)
	u, err := e.Deployment.Unbond(ctx, v.Share, staker, nonce)
	require.NoError(t, err)
	delay, err := e.Deployment.WithdrawalDelay(ctx)
	require.NoError(t, err)
	require.NoError(t, e.Deployment.AdvanceEpochs(ctx, delay+1))

	var res wfpolygon.Result
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	require.NoError(t, st.Client.GetWorkflow(wctx, id, "").Get(wctx, &res))
	require.Len(t, res.Transactions, 2)
	require.Equal(t, "unstake", res.Transactions[0].Kind)
	require.Equal(t, "claim", res.Transactions[1].Kind)
	require.Equal(t, nonce, res.UnbondNonce, "the unbond the chain recorded is the one claimed")

	after, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)
	require.Equal(t, new(big.Int).Add(before, pol(20)), after, "exactly the 20 POL unbonded came back")
	claimed, err := e.Deployment.Unbond(ctx, v.Share, staker, nonce)
	require.NoError(t, err)
	require.Zero(t, claimed.Shares.Sign(), "the unbond is claimed")
	require.Positive(t, u.Shares.Sign())
}

// testPolygonDroppedTransactionLandsOnce has the service answer a hash for a withdraw-rewards
// it never forwards (a transaction that never mines): the operation follows its own transaction
// on its own RPC, sends the same bytes again, and completes with exactly one transaction under
// the nonce, whatever the service said.
func testPolygonDroppedTransactionLandsOnce(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	staker, v := e.Stakers[2], e.Deployment.Validators[0]
	delegateWait(t, staker, v.Share, "30")
	require.NoError(t, e.Deployment.AdvanceEpochs(ctx, 1), "a checkpoint pays rewards")
	rewards, err := e.Deployment.LiquidRewards(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Positive(t, rewards.Sign())
	before, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)
	nonceBefore, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)

	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{PolygonSendDropped: sandbox.LostResponse{Next: 1}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	out, err := starterRun(t, "polygon", "withdraw-rewards", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--id", operationID(t, "polygon-rewards"), "--wait", "--json")
	require.NoError(t, err, out)
	res := decodePolygon(t, out)
	require.Len(t, res.Transactions, 1)
	nonceAfter, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonceBefore+1, nonceAfter, "one transaction landed, once")
	after, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)
	require.Equal(t, 1, after.Cmp(before), "the rewards reached the staker")
}

// TestPolygonLyingServiceHashIsNotBelieved has endpoint 4 forward a withdraw-rewards honestly but
// answer another transaction hash (a lying service): the operation believes its own signed bytes
// and its own RPC, completes with the hash the chain holds, and sends nothing more. (Polygon
// transactions are built and verified locally: endpoint 4 is the only place the service can lie.)
func TestPolygonLyingServiceHashIsNotBelieved(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	staker, v := e.Stakers[5], e.Deployment.Validators[0]
	delegateWait(t, staker, v.Share, "25")
	require.NoError(t, e.Deployment.AdvanceEpochs(ctx, 1), "a checkpoint pays rewards")
	nonceBefore, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)

	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{PolygonSendWrongHash: sandbox.LostResponse{Next: 1}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	id := operationID(t, "polygon-rewards")
	out, err := starterRun(t, "polygon", "withdraw-rewards", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--id", id, "--wait", "--json")
	require.NoError(t, err, out)
	require.Zero(t, st.Sandbox.Faults().PolygonSendWrongHash.Next, "the service did lie about the hash")
	res := decodePolygon(t, out)
	require.Len(t, res.Transactions, 1)
	paidFee(t, res.Transactions[0].TxID) // on chain, succeeded: the hash reported is the chain's
	nonceAfter, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonceBefore+1, nonceAfter, "one transaction landed, once")
	out, err = starterRun(t, "status", "--id", id, "--json")
	require.NoError(t, err, out)
	require.Contains(t, out, "not the signed bytes", "the lie is recorded on the attempt")
}
