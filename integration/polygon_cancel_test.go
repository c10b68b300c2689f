//go:build integration

package integration

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/workflows"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

// polygonCancelStaker is the EVM staker of TestPolygonReplacementRefusedThenCancelledEndsOnTheChainsWord
// alone: the test reads its nonce and its stake as its own.
const polygonCancelStaker = 12

// TestPolygonReplacementRefusedThenCancelledEndsOnTheChainsWord delegates through the starter while
// the node refuses the replacement of the operation's first transaction (the POL approval), then
// cancels the operation: it ends only when the chain shows which transaction took the nonce.
//
// How the node comes to refuse: endpoint 4 answers the approval's first build as sent without
// forwarding it (PolygonSendDropped), so it never mines and Confirm asks for a replacement after
// its ReplaceAfter. Meanwhile the node's operator raises its pool's minimum tip above anything the
// worker may sign (miner_setGasPrice, the node's --miner.gasprice at run time): every later send
// of these bytes, the bumped build 2 and the cancel are refused by the node itself ("transaction
// gas price below minimum"), through endpoint 4 and through the worker's RPC alike. A node that
// refuses for lack of funds cannot be staged here: the builder refuses to build a transaction its
// staker cannot pay (checkGasFunds), and the staker's balance cannot fall between the build and
// the send without a transaction of its own under the very nonce. The node's refusal does not prove
// the refused bytes can never land, so the operation follows what it sent: cancelled, it builds
// its cancel (a zero-value transfer to itself under the nonce), which the node refuses too, and it
// stays open, following. Only when the node takes transactions again does the cancel (re-sent
// through the worker's RPC) take the nonce, and the operation ends cancelled naming it. The node
// never held the approval's builds, so the cancel is the only transaction that can take the nonce:
// no approval, no delegation; the address's next operation then runs, with no nonce conflict.
func TestPolygonReplacementRefusedThenCancelledEndsOnTheChainsWord(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	staker, v := e.Stakers[polygonCancelStaker], e.Deployment.Validators[0]
	client := e.Node.Client()
	stakedBefore, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	nonce, err := client.NonceAt(ctx, staker, nil)
	require.NoError(t, err)

	// minTip sets the node's minimum tip (its pool's and its miner's); geth --dev's is 1 wei.
	minTip := func(wei *big.Int) error {
		var ok bool
		return client.Client().CallContext(ctx, &ok, "miner_setGasPrice", (*hexutil.Big)(wei))
	}
	t.Cleanup(func() {
		assert.NoError(t, minTip(big.NewInt(1)))
		assert.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{}))
	})
	// Endpoint 4 swallows every send until the node refuses them itself.
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{PolygonSendDropped: sandbox.LostResponse{Next: 1000}}))

	id := operationID(t, "polygon-delegate")
	out, err := starterRun(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
		"--validator-share", v.Share.Hex(), "--pol", "9", "--id", id, "--json")
	require.NoError(t, err, out)

	status := func(c assert.TestingT) workflows.Status {
		var s workflows.Status
		q, err := st.Client.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
		if assert.NoError(c, err) {
			assert.NoError(c, q.Get(&s))
		}
		return s
	}
	attempts := func(s workflows.Status, kind string) []workflows.Attempt {
		var out []workflows.Attempt
		for _, a := range s.Attempts {
			if a.Kind == kind {
				out = append(out, a)
			}
		}
		return out
	}

	// Build 1 of the approval is sent (and swallowed): from now on the node refuses what it is sent.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s := status(c)
		if a := attempts(s, "approve"); assert.Len(c, a, 1) {
			assert.False(c, a[0].BroadcastAt.IsZero(), "build 1 sent")
		}
	}, 2*time.Minute, 200*time.Millisecond)
	// 500 gwei: above the worker's fee cap (200 gwei by default), so nothing it signs is taken.
	require.NoError(t, minTip(big.NewInt(500_000_000_000)))
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{}))

	// Confirm asks for a replacement once build 1 has not mined in time; the node refuses build 2.
	var build2 workflows.Attempt
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s := status(c)
		a := attempts(s, "approve")
		if assert.Len(c, a, 2, "a replacement of build 1") {
			build2 = a[1]
			assert.Contains(c, a[1].BroadcastError, "below minimum", "the node refused the replacement")
		}
	}, 6*time.Minute, time.Second)
	require.Equal(t, 2, build2.Build)

	out, err = starterRun(t, "cancel", "--id", id)
	require.NoError(t, err, out)

	// The cancel is built and sent, refused by the node too, and re-sent while the operation follows
	// every build: it stays open, the nonce untaken.
	var cancelTx string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s := status(c)
		a := attempts(s, workflows.KindCancel)
		if !assert.Len(c, a, 1, "the cancel transaction signed") {
			return
		}
		cancelTx = a[0].TxID
		assert.Regexp(c, `(?i)Re-send of the newest build not accepted[^\n]*`+cancelTx, logs.String(),
			"the cancel, refused, is followed and re-sent")
	}, 6*time.Minute, time.Second)
	s := status(t)
	require.NotContains(t, []string{workflows.StepCancelled, workflows.StepDone, workflows.StepFailed}, s.Step,
		"the operation is open while the chain has not said which transaction took the nonce")
	desc, err := st.Client.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	require.Equal(t, "Running", desc.GetWorkflowExecutionInfo().GetStatus().String())
	taken, err := client.NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonce, taken, "nothing has taken the nonce yet")

	// The node takes transactions again: the cancel lands; the operation ends on the chain's word.
	require.NoError(t, minTip(big.NewInt(1)))
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var res wfpolygon.Result
	err = st.Client.GetWorkflow(wctx, id, "").Get(wctx, &res)
	var canceled *temporal.CanceledError
	require.True(t, errors.As(err, &canceled), "the operation ends cancelled: %v", err)
	var why string
	require.NoError(t, canceled.Details(&why))
	require.Contains(t, strings.ToLower(why), strings.ToLower(cancelTx), "the cancel names the transaction that took the nonce: %s", why)

	// The chain agrees: the cancel took the nonce, at final depth; no approval, no delegation.
	got, _, err := client.TransactionByHash(ctx, common.HexToHash(cancelTx))
	require.NoError(t, err)
	require.Equal(t, nonce, got.Nonce(), "the cancel under the operation's nonce")
	require.Equal(t, staker, *got.To(), "a transfer to the staker itself")
	require.Zero(t, got.Value().Sign(), "of nothing")
	paidFee(t, cancelTx)
	after, err := client.NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonce+1, after, "one transaction, the cancel, took the nonce")
	for _, a := range attempts(status(t), "approve") {
		_, _, err := client.TransactionByHash(ctx, common.HexToHash(a.TxID))
		require.True(t, errors.Is(err, ethereum.NotFound), "approve build %d (%s) is nowhere on chain: %v", a.Build, a.TxID, err)
	}
	stakedAfter, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Equal(t, stakedBefore, stakedAfter, "no delegation")
	require.Equal(t, workflows.StepCancelled, status(t).Step, "the status says cancelled")

	// The address's next operation runs: the nonce the cancel took is accounted for.
	next := delegateWait(t, staker, v.Share, "3")
	require.Len(t, next.Transactions, 2)
	nonceNext, err := client.NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, after+2, nonceNext)
	stakedNext, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Equal(t, pol(3), stakedNext.Sub(stakedNext, stakedBefore), "exactly one delegation, of the next operation's 3 POL")
}
