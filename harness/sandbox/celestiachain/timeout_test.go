package celestiachain

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	"github.com/stakeflow/stakeflow/signer/cosmos"
)

// sign signs a delegation of amount under the account's current sequence with a timeout height.
func (c *chain) sign(amount string, timeout uint64) ([]byte, string) {
	c.t.Helper()
	in := cosmos.Intent{Operation: cosmos.OpDelegate, Network: cosmos.NetworkMocha, Delegator: c.del, Validator: c.v1, Amount: amount, TimeoutHeight: timeout}
	a, ok := c.l.Account(c.del)
	require.True(c.t, ok)
	acct := cosmos.Account{AccountNumber: a.Number, Sequence: a.Sequence}
	u, err := cosmos.Build(in, c.pub, acct, okFee, "")
	require.NoError(c.t, err)
	signed, err := c.s.Sign(context.Background(), u, in, acct)
	require.NoError(c.t, err)
	raw, err := base64.StdEncoding.DecodeString(signed.TxBase64)
	require.NoError(c.t, err)
	return raw, signed.Hash
}

// The ledger reads the timeout height stakeflow's signer writes (its own decoder, not the
// signer's) and refuses inclusion in a block past it, as the SDK's ante handler does; the
// transaction consumes nothing.
func TestLedgerHonoursTimeoutHeights(t *testing.T) {
	c := newChain(t, time.Now)
	h := c.l.Height()
	raw, _ := c.sign("1000", uint64(h)+2)
	dec, err := decodeTx(raw)
	require.NoError(t, err)
	assert.Equal(t, uint64(h)+2, dec.timeoutHeight, "the independent decoder reads the signed timeout height")

	c.l.AdvanceBlocks(2) // the next block is h+3, past the timeout height
	res := c.l.Broadcast(raw)
	assert.Equal(t, uint32(CodeTxTimeoutHeight), res.Code)
	assert.Contains(t, res.Log, "tx timeout height")
	a, _ := c.l.Account(c.del)
	assert.Zero(t, a.Sequence, "refused: the sequence is unconsumed")

	raw, _ = c.sign("1000", uint64(c.l.Height())+1) // the very next block may include it
	res = c.l.Broadcast(raw)
	require.Equal(t, uint32(0), res.Code, res.Log)
}

// Blocks come by themselves with BlockTime, hold their transactions' bytes, and the REST index
// can be made to lag while the blocks already show the transaction.
func TestLedgerBlocksAndLaggingIndex(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newChain(t, func() time.Time { return now })
	c.l.opts.BlockTime = time.Second
	now = now.Add(5500 * time.Millisecond)
	assert.Equal(t, int64(6), c.l.Height(), "five empty blocks after genesis")

	ts := httptest.NewServer(c.l.Handler())
	t.Cleanup(ts.Close)
	cl := cosmoschain.New(ts.URL, "mocha-4", nil)
	ctx := context.Background()
	require.NoError(t, cl.Verify(ctx))

	c.l.SetIndexLag(2)
	raw, hash := c.sign("1000", 100)
	chk, err := cl.BroadcastSync(ctx, raw)
	require.NoError(t, err)
	require.Equal(t, uint32(0), chk.Code, chk.Log)
	assert.Equal(t, hash, chk.Hash)

	for range 2 {
		got, err := cl.Tx(ctx, hash)
		require.NoError(t, err)
		assert.Nil(t, got, "the index lags")
	}
	blk, err := cl.Block(ctx, 7)
	require.NoError(t, err)
	assert.Equal(t, &cosmoschain.BlockTxs{Height: 7, Txs: [][]byte{raw}}, blk, "the block holds it meanwhile")
	got, err := cl.Tx(ctx, hash)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, uint64(7), got.Height)

	blk, err = cl.Block(ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, &cosmoschain.BlockTxs{Height: 6}, blk, "an empty block")
	blk, err = cl.Block(ctx, 8)
	require.NoError(t, err)
	assert.Nil(t, blk, "not reached yet")

	chk, err = cl.BroadcastSync(ctx, raw)
	require.NoError(t, err)
	assert.Equal(t, uint32(CodeTxInCache), chk.Code)
}
