package celestia

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/workflows"
)

// A replacement (Confirm answered replace) keeps the timeout height of the build it replaces; a
// build after cannot-land lets the build choose a new one; Confirm gets every build's timeout
// height and where their blocks start; once replacing stopped, Confirm never replaces.
func TestTxTimeoutHeightsAndFollowing(t *testing.T) {
	seq := uint64(4)
	tx := &Tx{o: &workflows.Operation{}, intent: actcelestia.Intent{Operation: OpDelegate, Network: signercosmos.NetworkMocha, Delegator: "celestia1d"}, sequence: &seq}
	build := func(n int, height, timeout uint64, hash string) actcelestia.BuildInput {
		call := tx.Build(n)
		in := call.Input.(actcelestia.BuildInput)
		*call.Result.(*actcelestia.BuildResult) = actcelestia.BuildResult{Height: height, Intent: actcelestia.Intent{TimeoutHeight: timeout}}
		require.NoError(t, tx.Check(nil, nil))
		*tx.Sign().Result.(*actcelestia.SignResult) = actcelestia.SignResult{Hash: hash, Sequence: seq}
		tx.Signed()
		return in
	}
	confirm := func(outcome string) actcelestia.ConfirmInput {
		call := tx.Confirm()
		*call.Result.(*actcelestia.ConfirmResult) = actcelestia.ConfirmResult{Outcome: outcome}
		tx.Confirmed()
		return call.Input.(actcelestia.ConfirmInput)
	}

	assert.Zero(t, build(1, 100, 150, "A").TimeoutHeight, "the first build chooses")
	in := confirm(activities.OutcomeReplace)
	assert.Equal(t, []uint64{150}, in.TimeoutHeights)
	assert.Equal(t, uint64(101), in.FromHeight)
	assert.Zero(t, in.ReplaceAfter)

	assert.Equal(t, uint64(150), build(2, 120, 150, "A").TimeoutHeight, "a replacement keeps it: the same bytes")
	in = confirm(activities.OutcomeCannotLand)
	assert.Equal(t, []string{"A"}, in.Hashes, "the same bytes counted once")
	assert.Equal(t, []uint64{150}, in.TimeoutHeights)

	assert.Zero(t, build(3, 160, 210, "B").TimeoutHeight, "after cannot-land, a new one")
	tx.StopReplacing()
	in = confirm(activities.OutcomeCannotLand)
	assert.Equal(t, []string{"A", "B"}, in.Hashes)
	assert.Equal(t, []uint64{150, 210}, in.TimeoutHeights)
	assert.Equal(t, uint64(101), in.FromHeight, "from the first build's height")
	assert.Equal(t, neverReplace, in.ReplaceAfter, "following: never replace")
}

// A cancel after the broadcast of a transaction the service never sent: no second transaction is
// sent under the sequence; the step follows until the chain passes the timeout height, then ends
// cancelled, nothing delegated.
func TestCancelAfterBroadcastWaitsForTheTimeoutHeight(t *testing.T) {
	h := newHarness(t)
	h.svc.dropNext = 1000
	h.cancelOnSend = true
	h.acts.ReplaceAfter = 200 * time.Millisecond
	h.acts.TimeoutBlocks = 20
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		for ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			h.l.AdvanceBlocks(1)
		}
	}()
	in := h.input("1000000")
	in.Options.ConfirmPollInterval = 10 * time.Millisecond
	start := h.l.Height()
	_, err := h.run(DelegateWorkflowType, in)
	require.Error(t, err)
	var canceled *temporal.CanceledError
	assert.True(t, errors.As(err, &canceled), "cancelled: %v", err)
	assert.Len(t, h.svc.sent, 1, "no replacement after the cancel")
	assert.Greater(t, h.l.Height(), start+20, "ended only past the timeout height")
	assert.Empty(t, h.l.Snapshot().Transactions)
}

// The service never broadcast the first build; Confirm asks for it again (the same bytes, its
// timeout height still ahead), but the chain passes that height before they are sent again and
// the node refuses them. Nothing signed can land and the sequence is unused: the step builds again
// with a new timeout height under the same sequence and lands once, rather than failing.
func TestReplacementPastItsTimeoutHeightBuildsAgain(t *testing.T) {
	h := newHarness(t)
	h.svc.dropNext = 1
	h.acts.ReplaceAfter = time.Millisecond
	h.acts.TimeoutBlocks = 5
	h.svc.beforeSend = func(n int) {
		if n == 2 {
			h.l.AdvanceBlocks(6)
		}
	}
	in := h.input("1000000")
	in.Options.ConfirmPollInterval = 10 * time.Millisecond
	r, err := h.run(DelegateWorkflowType, in)
	require.NoError(t, err)
	require.Len(t, h.svc.sent, 3, "sent, the same bytes refused past their timeout height, a new build")
	assert.Equal(t, h.svc.sent[0], h.svc.sent[1], "the replacement was the same bytes")
	assert.NotEqual(t, h.svc.sent[1], h.svc.sent[2], "the new build has a new timeout height")
	s := h.l.Snapshot()
	assert.Equal(t, []string{r.Transactions[0].TxID}, s.Transactions, "one transaction on the ledger")
	assert.Equal(t, []celestiachain.Delegation{{Delegator: h.del, Validator: val1, Amount: "1000000"}}, s.Delegations)
	assert.Equal(t, h.leases[0], h.leases[len(h.leases)-1], "one sequence")
}
