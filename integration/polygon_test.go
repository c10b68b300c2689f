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

	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/internal/stack"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

func pol(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.Ether)) }

func decodePolygon(t *testing.T, out string) wfpolygon.Result {
	t.Helper()
	var res wfpolygon.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res), "starter output: %s", out)
	return res
}

// paidFee is what a transaction paid, from its receipt: gas used x effective gas price.
func paidFee(t *testing.T, hash string) *big.Int {
	t.Helper()
	r, err := st.EVM.Node.Client().TransactionReceipt(context.Background(), common.HexToHash(hash))
	require.NoError(t, err)
	require.Equal(t, uint64(1), r.Status, "%s succeeded", hash)
	return new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice)
}

// TestPolygonDelegateThroughStarter delegates POL through the starter on the real chain and checks
// the chain shows exactly the intended effect: the POL moved, an approve of exactly the amount
// (used up by the delegate), the shares minted, each transaction once, on consecutive nonces.
func TestPolygonDelegateThroughStarter(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	staker, v := e.Stakers[0], e.Deployment.Validators[0]
	before, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)
	nonceBefore, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)

	id := operationID(t, "polygon-delegate")
	out, err := starterRun(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "100", "--id", id, "--wait", "--json")
	require.NoError(t, err, out)
	res := decodePolygon(t, out)

	require.Len(t, res.Transactions, 2)
	require.Equal(t, "approve", res.Transactions[0].Kind)
	require.Equal(t, "delegate", res.Transactions[1].Kind)
	require.Equal(t, pol(100).String(), res.Amount)

	after, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)
	require.Equal(t, new(big.Int).Sub(before, pol(100)), after, "exactly 100 POL left the staker")
	allowance, err := e.Deployment.Allowance(ctx, staker, e.Deployment.StakeManager)
	require.NoError(t, err)
	require.Zero(t, allowance.Sign(), "the approve granted exactly what the delegate used")
	shares, err := e.Deployment.Shares(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Positive(t, shares.Sign(), "shares minted to the staker")

	nonceAfter, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonceBefore+2, nonceAfter, "two transactions from the staker, no more")
	fees := new(big.Int)
	for i, tx := range res.Transactions {
		got, _, err := e.Node.Client().TransactionByHash(ctx, common.HexToHash(tx.TxID))
		require.NoError(t, err)
		require.Equal(t, nonceBefore+uint64(i), got.Nonce(), "%s on the next nonce", tx.Kind)
		fee := paidFee(t, tx.TxID)
		require.Equal(t, fee.String(), tx.Fee, "the fee reported is the one the receipt shows")
		fees.Add(fees, fee)
	}
	require.Equal(t, fees.String(), res.Fee)

	// The address's sequencer rests between leases: what a deploy finds in flight.
	snapshotAs(t, actevm.SequencerID(stack.EVMNetwork, staker.Hex()), "EVMNonceSequencerWorkflow-idle")

	// A second start under the same ID is refused and sends nothing.
	_, err = starterRun(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "100", "--id", id)
	require.Error(t, err)
	again, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonceAfter, again)
}

// TestPolygonUnstakeWaitsThenClaims delegates, then unstakes part: the operation waits for the
// withdrawal delay (checkpoints advanced by the sandbox's control) and claims exactly the unbond.
func TestPolygonUnstakeWaitsThenClaims(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	staker, v := e.Stakers[1], e.Deployment.Validators[1]
	out, err := starterRun(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "50", "--id", operationID(t, "polygon-delegate"), "--wait", "--json")
	require.NoError(t, err, out)
	before, err := e.Deployment.TokenBalance(ctx, staker)
	require.NoError(t, err)

	id := operationID(t, "polygon-unstake")
	out, err = starterRun(t, "polygon", "unstake", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "20", "--id", id, "--json")
	require.NoError(t, err, out)
	waitStep(t, id, wfpolygon.StepWaitingWithdrawal)
	snapshotAs(t, id, "PolygonUnstakeWorkflow-waiting-withdrawal-delay")
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
