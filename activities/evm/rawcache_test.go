package evm

import (
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
