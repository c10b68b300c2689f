package evm

import (
	"errors"
	"github.com/stakeflow/stakeflow/chain/rpcproof"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/activities"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

func finalReceipt(h common.Hash, status uint64) *evmchain.Receipt {
	r := &evmchain.Receipt{TxHash: h, Status: status, BlockNumber: 64, GasUsed: 50_000, EffectiveGasPrice: gweis(12)}
	if status == 0 {
		r.Revert = &evmchain.RevertError{Reason: "Too much slippage", Replayed: true}
	}
	return r
}

func confirmInput(h *harness) ConfirmInput {
	return ConfirmInput{Network: "dev", Staker: h.staker.Hex(), Nonce: 5, Hashes: []string{ourHash.Hex(), ourNewer.Hex()},
		SignedTransaction: "0x02c0", PollInterval: time.Millisecond, ReplaceAfter: time.Hour}
}

func runConfirm(t *testing.T, h *harness, in ConfirmInput) (ConfirmResult, error) {
	t.Helper()
	v, err := h.env.ExecuteActivity(h.a.EVMConfirm, in)
	if err != nil {
		return ConfirmResult{}, err
	}
	var r ConfirmResult
	require.NoError(t, v.Get(&r))
	return r, nil
}

// TestConfirmFinalizedEarlierBuild: an earlier build final with status 1 is the step's outcome,
// its fee gas used × effective gas price (50000 × 12 gwei = 600000 gwei).
func TestConfirmFinalizedEarlierBuild(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.chain.Receipts = map[common.Hash]func() (*evmchain.Receipt, error){
		ourHash: func() (*evmchain.Receipt, error) { return finalReceipt(ourHash, 1), nil },
	}
	r, err := runConfirm(t, h, confirmInput(h))
	require.NoError(t, err)
	assert.Equal(t, ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: ourHash.Hex(), Block: 64, Fee: "600000000000000"}, r)
}

// TestConfirmFailed: status 0 at finalized depth is failed, with the revert reason.
func TestConfirmFailed(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.chain.Receipts = map[common.Hash]func() (*evmchain.Receipt, error){
		ourNewer: func() (*evmchain.Receipt, error) { return finalReceipt(ourNewer, 0), nil },
	}
	r, err := runConfirm(t, h, confirmInput(h))
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeFailed, r.Outcome)
	assert.Equal(t, ourNewer.Hex(), r.Hash)
	assert.Equal(t, "600000000000000", r.Fee)
	assert.Equal(t, "Too much slippage (execution reverted)", r.Error, "the reason first")
}

// TestConfirmReorgResendsAndFollowsOn: a mined build whose block is reorged out (receipt gone,
// transaction absent) is not the end: the newest bytes are re-sent and the build followed until
// final.
func TestConfirmReorgResendsAndFollowsOn(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.a.ResendEvery = time.Millisecond
	var polls atomic.Int32
	// Polls 0-2: mined above finality; 3-9: reorged out, absent from the node; then mined again
	// and final from poll 14.
	h.chain.Txs = map[common.Hash]func() *evmchain.TxLookup{ourNewer: func() *evmchain.TxLookup {
		p := polls.Add(1)
		if p <= 3 || p > 10 {
			return &evmchain.TxLookup{State: evmchain.TxMined, BlockNumber: 70}
		}
		return &evmchain.TxLookup{State: evmchain.TxAbsent}
	}}
	h.chain.Receipts = map[common.Hash]func() (*evmchain.Receipt, error){ourNewer: func() (*evmchain.Receipt, error) {
		p := polls.Load()
		switch {
		case p < 3:
			return nil, &evmchain.NotFinalError{Hash: ourNewer, Reason: evmchain.NotFinalAbove}
		case p < 14:
			return nil, &evmchain.NotFinalError{Hash: ourNewer, Reason: evmchain.NotFinalReorged}
		}
		return finalReceipt(ourNewer, 1), nil
	}}
	h.chain.NonceState = func() *evmchain.Nonces { return &evmchain.Nonces{Latest: 5, Pending: 5, Finalized: 5} }
	in := confirmInput(h)
	r, err := runConfirm(t, h, in)
	require.NoError(t, err)
	assert.Equal(t, ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: ourNewer.Hex(), Block: 64, Fee: "600000000000000"}, r)
	assert.Positive(t, h.svc.sends(), "the reorged-out bytes are sent again")
	for _, s := range h.svc.sent {
		assert.Equal(t, in.SignedTransaction, s, "only the newest build's bytes are re-sent")
	}
}

// TestConfirmExpired: no build mined within ReplaceAfter and the nonce unused: expired (replace
// it), after re-sending the newest bytes meanwhile.
func TestConfirmExpired(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.a.ResendEvery = time.Millisecond
	h.chain.NonceState = func() *evmchain.Nonces { return &evmchain.Nonces{Latest: 5, Pending: 5, Finalized: 5} }
	in := confirmInput(h)
	in.ReplaceAfter = 30 * time.Millisecond
	start := time.Now()
	r, err := runConfirm(t, h, in)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeReplace, r.Outcome)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	assert.Positive(t, h.svc.sends())
}

// TestConfirmExpiredAfterTheWorkersReplaceAfter: a step that names no time of its own is judged
// by the worker's ReplaceAfter (--evm-replace-after), not the 3-minute default.
func TestConfirmExpiredAfterTheWorkersReplaceAfter(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.a.ResendEvery = time.Millisecond
	h.a.ReplaceAfter = 30 * time.Millisecond
	h.chain.NonceState = func() *evmchain.Nonces { return &evmchain.Nonces{Latest: 5, Pending: 5, Finalized: 5} }
	in := confirmInput(h)
	in.ReplaceAfter = 0
	h.env.SetTestTimeout(time.Minute) // the default would answer after 3 minutes
	r, err := runConfirm(t, h, in)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeReplace, r.Outcome)
}

// TestConfirmResumesFromHeartbeat: a retry keeps the first attempt's clock: with an hour-old start
// and ReplaceAfter of an hour, it answers expired at its first look; a fresh clock would still be
// waiting when, later, a stranger's transaction takes the nonce.
func TestConfirmResumesFromHeartbeat(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	var reads atomic.Int32
	h.chain.NonceState = func() *evmchain.Nonces {
		if reads.Add(1) > 5 {
			return &evmchain.Nonces{Latest: 6, Pending: 6, Finalized: 6}
		}
		return &evmchain.Nonces{Latest: 5, Pending: 5, Finalized: 5}
	}
	h.chain.Consumed = func(common.Hash) *evmchain.NonceStatus {
		return &evmchain.NonceStatus{Use: evmchain.NonceConsumedByOther, Other: otherHash}
	}
	h.env.SetHeartbeatDetails(confirmProgress{Started: time.Now().Add(-61 * time.Minute).UnixNano()})
	in := confirmInput(h)
	in.ReplaceAfter = time.Hour
	r, err := runConfirm(t, h, in)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeReplace, r.Outcome)
	assert.EqualValues(t, 1, reads.Load())
}

// TestConfirmNoExpiryWhileTheNonceIsUsed: the nonce used at the latest block (by a build the node
// no longer shows, or anyone) forbids a replacement: Confirm waits for finality's verdict, here
// that one of ours landed.
func TestConfirmNoExpiryWhileTheNonceIsUsed(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	var reads atomic.Int32
	h.chain.NonceState = func() *evmchain.Nonces {
		if reads.Add(1) < 20 {
			return &evmchain.Nonces{Latest: 6, Pending: 6, Finalized: 5}
		}
		return &evmchain.Nonces{Latest: 6, Pending: 6, Finalized: 6}
	}
	h.chain.Consumed = func(hash common.Hash) *evmchain.NonceStatus {
		if hash == ourHash {
			return &evmchain.NonceStatus{Use: evmchain.NonceConsumedByTx, Receipt: finalReceipt(ourHash, 1)}
		}
		return &evmchain.NonceStatus{Use: evmchain.NonceConsumedByOther, Other: ourHash}
	}
	in := confirmInput(h)
	in.ReplaceAfter = time.Nanosecond
	r, err := runConfirm(t, h, in)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeFinalized, r.Outcome)
	assert.Equal(t, ourHash.Hex(), r.Hash)
	assert.GreaterOrEqual(t, reads.Load(), int32(20))
}

// TestConfirmForeignNonce: the nonce used at finalized depth by a transaction that is none of the
// step's builds is the chain's proof that none can land: cannot-land, naming the other
// transaction (no error: the core ends the step on it, with the proof).
func TestConfirmForeignNonce(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.chain.NonceState = func() *evmchain.Nonces { return &evmchain.Nonces{Latest: 6, Pending: 6, Finalized: 6} }
	h.chain.Consumed = func(common.Hash) *evmchain.NonceStatus {
		return &evmchain.NonceStatus{Use: evmchain.NonceConsumedByOther, Other: otherHash}
	}
	r, err := runConfirm(t, h, confirmInput(h))
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeCannotLand, r.Outcome)
	assert.Equal(t, otherHash.Hex(), r.Other)
	assert.Empty(t, r.Hash, "none of the step's builds landed")
	assert.Contains(t, r.Error, otherHash.Hex())
	assert.Contains(t, r.Error, "nonce 5")
	assert.Contains(t, r.Error, ourHash.Hex())
}

// TestConfirmChainErrors: an RPC not proven to serve the network is retried (ChainUnverified), a
// permanent refusal is ChainRejected.
func TestConfirmChainErrors(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.chain.Receipts = map[common.Hash]func() (*evmchain.Receipt, error){ourHash: func() (*evmchain.Receipt, error) {
		return nil, &rpcproof.UnverifiedError{Network: "dev"}
	}}
	_, err := runConfirm(t, h, confirmInput(h))
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, activities.ErrChainUnverified, typ)
	assert.False(t, nonRetryable)

	h.chain.Receipts = map[common.Hash]func() (*evmchain.Receipt, error){ourHash: func() (*evmchain.Receipt, error) {
		return nil, &evmchain.RPCError{Method: "eth_getTransactionReceipt", Err: errors.New("403 Forbidden")}
	}}
	_, err = runConfirm(t, h, confirmInput(h))
	typ, nonRetryable = appErr(t, err)
	assert.Equal(t, activities.ErrChainRejected, typ)
	assert.True(t, nonRetryable)
}
