//go:build integration

package integration

import (
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
)

// TestPolygonBroadcastRefusedAfterForwardingCompletesOnce has endpoint 4 forward a delegate's
// first transaction (the POL approval) to the chain and answer 400 as if it never reached it, as a
// hostile service would: the operation does not take the 400 for the chain's word, sends the same
// bytes through the worker's own RPC, follows them on chain and completes, with exactly one
// approval and one delegation on chain; the next operation of that address then runs, with no
// nonce conflict.
func TestPolygonBroadcastRefusedAfterForwardingCompletesOnce(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	// Staker 5 is also TestPolygonLyingServiceHashIsNotBelieved's: both set the sandbox's faults
	// (global), so neither runs in parallel, and each counts from what it finds on chain.
	staker, v := e.Stakers[5], e.Deployment.Validators[1]
	stakedBefore, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	nonceBefore, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)

	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{PolygonSendForwardThenRefuse: sandbox.LostResponse{Next: 1}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	res := delegateWait(t, staker, v.Share, "12")
	require.Zero(t, st.Sandbox.Faults().PolygonSendForwardThenRefuse.Next, "the service did refuse a transaction it had forwarded")

	require.Len(t, res.Transactions, 2)
	require.Equal(t, "approve", res.Transactions[0].Kind)
	require.Equal(t, "delegate", res.Transactions[1].Kind)
	for i, tx := range res.Transactions {
		got, _, err := e.Node.Client().TransactionByHash(ctx, common.HexToHash(tx.TxID))
		require.NoError(t, err)
		require.Equal(t, nonceBefore+uint64(i), got.Nonce(), "%s on the operation's nonce", tx.Kind)
		paidFee(t, tx.TxID) // on chain, succeeded
	}
	nonceAfter, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonceBefore+2, nonceAfter, "one approval and one delegate, each once")
	stakedAfter, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Equal(t, pol(12), stakedAfter.Sub(stakedAfter, stakedBefore), "exactly one delegation of 12 POL")

	// The next operation of the address runs: the nonce the refused approval took is accounted for.
	next := delegateWait(t, staker, v.Share, "3")
	require.Len(t, next.Transactions, 2)
	nonceNext, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonceAfter+2, nonceNext)
	stakedNext, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Equal(t, pol(15), stakedNext.Sub(stakedNext, stakedBefore), "12 then 3 POL delegated, each once")
}
