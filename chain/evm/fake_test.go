package evmchain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeEth is an in-process "eth" JSON-RPC service holding a hand-made chain: canonical headers
// by height, a finalized height, receipts by hash and an account's nonce per block hash.
type fakeEth struct {
	mu        sync.Mutex
	canonical map[uint64]*types.Header
	finalized uint64
	receipts  map[common.Hash]*types.Receipt
	nonces    map[common.Hash]uint64 // by block hash
	indexing  bool
	// indexingLeft is how many more receipt lookups answer that the node is still indexing.
	indexingLeft int
}

// indexingError is what geth answers while its transaction index is incomplete.
type indexingError struct{}

func (indexingError) Error() string          { return "transaction indexing is in progress" }
func (indexingError) ErrorCode() int         { return -32000 }
func (indexingError) ErrorData() interface{} { return "transaction indexing is in progress" }

func (f *fakeEth) ChainId() hexutil.Uint64 { return 1337 }

func (f *fakeEth) GetBlockByNumber(n rpc.BlockNumber, _ bool) (*types.Header, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch n {
	case rpc.FinalizedBlockNumber:
		return f.canonical[f.finalized], nil
	case rpc.LatestBlockNumber:
		return nil, errors.New("fake: latest not served")
	}
	return f.canonical[uint64(n)], nil
}

func (f *fakeEth) GetTransactionReceipt(hash common.Hash) (*types.Receipt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.indexing || f.indexingLeft > 0 {
		f.indexingLeft--
		return nil, indexingError{}
	}
	return f.receipts[hash], nil
}

func (f *fakeEth) GetTransactionByHash(common.Hash) (*struct{}, error) { return nil, nil }

func (f *fakeEth) GetTransactionCount(_ common.Address, at rpc.BlockNumberOrHash) (hexutil.Uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := at.Hash()
	if !ok {
		return 0, fmt.Errorf("fake: nonce only by block hash, asked %s", at.String())
	}
	n, ok := f.nonces[h]
	if !ok {
		return 0, fmt.Errorf("fake: unknown block %s", h.Hex())
	}
	return hexutil.Uint64(n), nil
}

// header returns a header at height; fork tells apart two blocks at the same height.
func header(height uint64, fork byte) *types.Header {
	return &types.Header{Number: new(big.Int).SetUint64(height), Difficulty: new(big.Int), Extra: []byte{fork}, GasLimit: 30_000_000, BaseFee: big.NewInt(7)}
}

// newFake returns a chain of canonical blocks 0..30 finalized at 20, and a Client over it.
func newFake(t *testing.T) (*fakeEth, *Client) {
	f := &fakeEth{canonical: map[uint64]*types.Header{}, finalized: 20, receipts: map[common.Hash]*types.Receipt{}, nonces: map[common.Hash]uint64{}}
	for h := uint64(0); h <= 30; h++ {
		f.canonical[h] = header(h, 0)
	}
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName("eth", f))
	t.Cleanup(srv.Stop)
	rc := rpc.DialInProc(srv)
	t.Cleanup(rc.Close)
	return f, NewWithRPC(rc)
}

// receiptIn returns a successful receipt of tx in block b.
func receiptIn(tx common.Hash, b *types.Header) *types.Receipt {
	return &types.Receipt{
		Type: types.DynamicFeeTxType, Status: types.ReceiptStatusSuccessful, CumulativeGasUsed: 21_000, Logs: []*types.Log{},
		TxHash: tx, GasUsed: 21_000, EffectiveGasPrice: big.NewInt(8), BlockHash: b.Hash(), BlockNumber: b.Number, TransactionIndex: 0,
	}
}

func TestReceiptFinalReorgedOutIsNotFinal(t *testing.T) {
	f, c := newFake(t)
	ctx := context.Background()
	tx := common.Hash{0x11}
	stale := header(10, 1) // a block at height 10 that lost to the canonical one
	require.NotEqual(t, stale.Hash(), f.canonical[10].Hash())
	f.receipts[tx] = receiptIn(tx, stale)

	_, err := c.ReceiptFinal(ctx, tx)
	var nf *NotFinalError
	require.ErrorAs(t, err, &nf)
	assert.ErrorIs(t, err, ErrNotFinal)
	assert.Equal(t, NotFinalReorged, nf.Reason)
	assert.Equal(t, uint64(10), nf.BlockNumber)
	assert.Equal(t, uint64(20), nf.FinalizedBlock)
	assert.Contains(t, err.Error(), "reorged out")

	// The same transaction re-included in the canonical block at that height is final.
	f.receipts[tx] = receiptIn(tx, f.canonical[10])
	r, err := c.ReceiptFinal(ctx, tx)
	require.NoError(t, err)
	assert.Equal(t, f.canonical[10].Hash(), r.BlockHash)
	assert.Equal(t, uint64(10), r.BlockNumber)
	assert.Equal(t, uint64(21_000), r.GasUsed)
	assert.Equal(t, "8", r.EffectiveGasPrice.String())
}

func TestReceiptFinalAboveFinalizedIsNotFinal(t *testing.T) {
	f, c := newFake(t)
	tx := common.Hash{0x12}
	f.receipts[tx] = receiptIn(tx, f.canonical[21])
	_, err := c.ReceiptFinal(context.Background(), tx)
	var nf *NotFinalError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, NotFinalAbove, nf.Reason)

	f.finalized = 21
	_, err = c.ReceiptFinal(context.Background(), tx)
	assert.NoError(t, err, "final once the finalized block reaches it")
}

func TestIndexingNodeCannotTell(t *testing.T) {
	f, c := newFake(t)
	f.indexing = true
	addr, tx := common.Address{0x21}, common.Hash{0x13}

	_, err := c.ReceiptFinal(context.Background(), tx)
	var nf *NotFinalError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, NotFinalIndexing, nf.Reason)

	// The nonce is used at the finalized block, but the node cannot say by what: no verdict.
	f.nonces[f.canonical[20].Hash()] = 1
	st, err := c.NonceConsumedBy(context.Background(), addr, 0, tx)
	require.Error(t, err, "got %+v", st)
	assert.True(t, IsTransient(err))
	assert.Contains(t, err.Error(), "indexing")
}

// geth answers "indexing is in progress" between each new head and the indexing of its block:
// a lookup asks again and gets the answer once the window closes.
func TestIndexingWindowIsWaitedOut(t *testing.T) {
	f, c := newFake(t)
	tx := common.Hash{0x15}
	f.receipts[tx] = receiptIn(tx, f.canonical[10])
	f.indexingLeft = 3

	r, err := c.ReceiptFinal(context.Background(), tx)
	require.NoError(t, err)
	assert.Equal(t, f.canonical[10].Hash(), r.BlockHash)
	assert.Zero(t, f.indexingLeft, "the three answers in the window were all asked for")
}

func TestNonceConsumedReorgedReceiptIsAnotherTx(t *testing.T) {
	f, c := newFake(t)
	addr, tx := common.Address{0x22}, common.Hash{0x14}
	f.nonces[f.canonical[20].Hash()] = 1
	f.receipts[tx] = receiptIn(tx, header(10, 1)) // its block lost: the nonce went elsewhere

	st, err := c.NonceConsumedBy(context.Background(), addr, 0, tx)
	require.NoError(t, err)
	assert.Equal(t, NonceConsumedByOther, st.Use)
	assert.Equal(t, uint64(20), st.FinalizedBlock)

	f.nonces[f.canonical[20].Hash()] = 0
	st, err = c.NonceConsumedBy(context.Background(), addr, 0, tx)
	require.NoError(t, err)
	assert.Equal(t, NonceNotConsumed, st.Use)
}

type codeErr struct{ code int }

func (e codeErr) Error() string  { return fmt.Sprintf("code %d", e.code) }
func (e codeErr) ErrorCode() int { return e.code }

func TestTransientClassification(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"network", errors.New("dial tcp: connection refused"), true},
		{"deadline", context.DeadlineExceeded, true},
		{"canceled", context.Canceled, false},
		{"http 500", rpc.HTTPError{StatusCode: http.StatusInternalServerError}, true},
		{"http 429", rpc.HTTPError{StatusCode: http.StatusTooManyRequests}, true},
		{"http 401", rpc.HTTPError{StatusCode: http.StatusUnauthorized}, false},
		{"server error", codeErr{-32000}, true},
		{"method not found", codeErr{-32601}, false},
		{"invalid params", codeErr{-32602}, false},
		{"reverted", codeErr{3}, false},
		{"decoded revert", &RevertError{Replayed: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, transient(tc.err))
		})
	}
}
