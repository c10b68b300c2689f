//go:build integration

package sandbox

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
)

// landedTimes counts sig among the transactions that landed on the runtime.
func landedTimes(t *testing.T, sig solana.Signature) int {
	t.Helper()
	n := 0
	for _, tx := range ledger(t, shared).Transactions {
		if tx.Signature == sig.String() {
			n++
		}
	}
	return n
}

// broadcastsOf is the number of broadcasts the ledger counted for sig.
func broadcastsOf(t *testing.T, sig solana.Signature) int {
	t.Helper()
	for _, b := range ledger(t, shared).Broadcasts {
		if b.Signature == sig.String() {
			return b.Count
		}
	}
	return 0
}

// TestBroadcastLoseThenRefuse: the first broadcast lands while its answer is
// lost; every later broadcast of the same bytes is refused with an
// instruction error that never says the transaction was already processed.
// Other transactions are not touched once the count is spent, and replacing
// the faults forgets the refusals.
func TestBroadcastLoseThenRefuse(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(map[bool]string{false: "500", true: "drop"}[drop], func(t *testing.T) {
			ctx := testCtx(t)
			cl := client(t, shared.URL(), "lose-then-refuse")
			key := fundedStaker(t, shared, 10*solLamports)
			tx, signed := signTx(t, stakeTx(t, cl, key, "2000000000").UnsignedTransactionData, key)
			sig := tx.Signatures[0]
			setFaults(t, FaultConfig{BroadcastLoseThenRefuse: LostResponse{Next: 1, Drop: drop}})

			_, err := cl.Broadcast(ctx, broadcastReq(key, signed))
			require.Error(t, err)
			if drop {
				var tErr *apiclient.TransportError
				require.True(t, errors.As(err, &tErr), "%v", err)
			} else {
				var apiErr *apiclient.APIError
				require.True(t, errors.As(err, &apiErr), "%v", err)
				assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
			}
			waitFinalized(t, shared, sig)
			require.Equal(t, 1, landedTimes(t, sig), "the first broadcast landed on the runtime")

			for range 2 {
				_, err = cl.Broadcast(ctx, broadcastReq(key, signed))
				requireRejected(t, err, "InstructionError")
				var apiErr *apiclient.APIError
				require.True(t, errors.As(err, &apiErr))
				lower := strings.ToLower(apiErr.Message)
				assert.NotContains(t, lower, "already")
				assert.NotContains(t, lower, "processed")
			}
			assert.Equal(t, 1, landedTimes(t, sig))
			assert.Equal(t, 3, broadcastsOf(t, sig))
			assert.Zero(t, shared.Faults().BroadcastLoseThenRefuse.Next, "count spent")

			// The count is spent: another transaction is answered as usual.
			other, otherSigned := signTx(t, stakeTx(t, cl, key, "2000000000").UnsignedTransactionData, key)
			res, err := cl.Broadcast(ctx, broadcastReq(key, otherSigned))
			require.NoError(t, err)
			assert.Equal(t, other.Signatures[0].String(), res.ExtraData.TransactionID)

			// New faults forget the refusals: the chain's own answer comes back.
			require.NoError(t, shared.SetFaults(FaultConfig{}))
			_, err = cl.Broadcast(ctx, broadcastReq(key, signed))
			requireRejected(t, err, "AlreadyProcessed")
		})
	}
}

// TestLoseThenRefuseCountsLandedBroadcasts: a broadcast the chain refuses
// does not spend the count, and one whose answer another fault loses is not
// marked.
func TestLoseThenRefuseCountsLandedBroadcasts(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "lose-then-refuse-count")
	key := fundedStaker(t, shared, 10*solLamports)
	setFaults(t, FaultConfig{BroadcastLoseThenRefuse: LostResponse{Next: 1}})

	// Not signed: refused before it reaches the chain.
	_, err := cl.Broadcast(ctx, broadcastReq(key, stakeTx(t, cl, key, "2000000000").UnsignedTransactionData))
	requireRejected(t, err, "SignatureFailure")
	assert.Equal(t, 1, shared.Faults().BroadcastLoseThenRefuse.Next, "a refused broadcast does not spend the count")

	// The lost-response fault answers first; the signature is not marked.
	require.NoError(t, shared.SetFaults(FaultConfig{BroadcastLostResponse: LostResponse{Next: 1},
		BroadcastLoseThenRefuse: LostResponse{Next: 1}}))
	tx, signed := signTx(t, stakeTx(t, cl, key, "2000000000").UnsignedTransactionData, key)
	_, err = cl.Broadcast(ctx, broadcastReq(key, signed))
	require.Error(t, err)
	waitFinalized(t, shared, tx.Signatures[0])
	_, err = cl.Broadcast(ctx, broadcastReq(key, signed))
	requireRejected(t, err, "AlreadyProcessed")
	assert.Equal(t, 1, shared.Faults().BroadcastLoseThenRefuse.Next)
}

// TestLoseThenRefuseDecisions pins the injector: the count first, then the
// rate; only a lost answer marks the signature; new faults forget it.
func TestLoseThenRefuseDecisions(t *testing.T) {
	f := newFaultInjector(FaultConfig{BroadcastLoseThenRefuse: LostResponse{Next: 1, Drop: true}})
	lost, drop := f.loseThenRefuse("a")
	assert.True(t, lost)
	assert.True(t, drop)
	lost, _ = f.loseThenRefuse("b")
	assert.False(t, lost, "count spent, no rate")
	assert.True(t, f.refused("a"))
	assert.False(t, f.refused("b"))

	f.set(FaultConfig{BroadcastLoseThenRefuse: LostResponse{Rate: 1}})
	assert.False(t, f.refused("a"), "new faults forget the refusals")
	lost, drop = f.loseThenRefuse("c")
	assert.True(t, lost)
	assert.False(t, drop)
	assert.True(t, f.refused("c"))

	f.set(FaultConfig{Seed: 3, BroadcastLoseThenRefuse: LostResponse{Rate: 0.5}})
	var first []bool
	for i := range 20 {
		l, _ := f.loseThenRefuse(string(rune('A' + i)))
		first = append(first, l)
	}
	f.set(FaultConfig{Seed: 3, BroadcastLoseThenRefuse: LostResponse{Rate: 0.5}})
	for i := range 20 {
		l, _ := f.loseThenRefuse(string(rune('A' + i)))
		assert.Equal(t, first[i], l, "seeded")
	}
	assert.Contains(t, first, true)
	assert.Contains(t, first, false)
}
