package evm

import (
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/activities"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// TestSendRPCByHash: a step that names its transaction by hash only sends the bytes the worker's
// RawCache holds under that hash, else the node's copy of it; with neither, nothing is sent and
// the error (ErrSignedUnavailable, non-retryable) says so.
func TestSendRPCByHash(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	tx, signed := signedTx(t, h)
	in := BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: tx.Hash().Hex(), Chain: "eigenlayer"}

	_, err := h.env.ExecuteActivity(h.a.EVMSendRPC, in)
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, ErrSignedUnavailable, typ, "%v", err)
	assert.True(t, nonRetryable)
	assert.Empty(t, h.chain.RawSends(), "nothing sent")

	h.a.Raw = NewRawCache(0)
	key, err := h.a.Raw.PutSigned(hexutil.MustDecode(signed))
	require.NoError(t, err)
	require.Equal(t, tx.Hash(), key)
	_, err = h.env.ExecuteActivity(h.a.EVMSendRPC, in)
	require.NoError(t, err)
	assert.Equal(t, []string{strings.ToLower(signed)}, h.chain.RawSends(), "the cached bytes")

	// Another worker's cache lacks them; the node has them pending: its copy is sent again.
	h.a.Raw = NewRawCache(0)
	h.chain.Txs = map[common.Hash]func() *evmchain.TxLookup{tx.Hash(): func() *evmchain.TxLookup {
		return &evmchain.TxLookup{State: evmchain.TxPending, Tx: tx}
	}}
	_, err = h.env.ExecuteActivity(h.a.EVMSendRPC, in)
	require.NoError(t, err)
	assert.Equal(t, []string{strings.ToLower(signed), strings.ToLower(signed)}, h.chain.RawSends(), "the node's copy, re-encoded")
}

// TestRawCacheIsBounded: the oldest entry goes first once the cache is full.
func TestRawCacheIsBounded(t *testing.T) {
	c := NewRawCache(2)
	for i := byte(1); i <= 3; i++ {
		c.Put(common.Hash{i}, []byte{i})
	}
	_, ok := c.Get(common.Hash{1})
	assert.False(t, ok, "the oldest went")
	for i := byte(2); i <= 3; i++ {
		raw, ok := c.Get(common.Hash{i})
		assert.True(t, ok)
		assert.Equal(t, []byte{i}, raw)
	}
}

// TestConfirmResendsByHash: a step naming its builds by hash only has Confirm re-send the newest
// build's bytes from the worker's RawCache, through the worker's RPC; with none there, nothing
// is re-sent and Confirm still answers from the chain (replace, the nonce free).
func TestConfirmResendsByHash(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.a.ResendEvery = time.Millisecond
	h.chain.NonceState = func() *evmchain.Nonces { return &evmchain.Nonces{Latest: 5, Pending: 5, Finalized: 5} }
	tx, signed := signedTx(t, h)
	in := ConfirmInput{Network: "dev", Staker: h.staker.Hex(), Nonce: 5, Hashes: []string{ourHash.Hex(), tx.Hash().Hex()},
		ResendRPC: true, PollInterval: time.Millisecond, ReplaceAfter: 30 * time.Millisecond}

	r, err := runConfirm(t, h, in)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeReplace, r.Outcome)
	assert.Empty(t, h.chain.RawSends(), "no bytes to re-send")

	h.a.Raw = NewRawCache(0)
	_, err = h.a.Raw.PutSigned(hexutil.MustDecode(signed))
	require.NoError(t, err)
	r, err = runConfirm(t, h, in)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeReplace, r.Outcome)
	sent := h.chain.RawSends()
	require.NotEmpty(t, sent, "re-sent through the RPC")
	for _, s := range sent {
		assert.Equal(t, strings.ToLower(signed), s, "the newest build's bytes, from the cache")
	}
	assert.Zero(t, h.svc.sends(), "nothing through endpoint 4")
}
