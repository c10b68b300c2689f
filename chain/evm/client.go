package evmchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	endpointpkg "github.com/stakeflow/stakeflow/chain/endpoint"
)

// Client reads EVM chain state over JSON-RPC, through go-ethereum's rpc and ethclient.
type Client struct {
	rpc      *rpc.Client
	eth      *ethclient.Client
	endpoint string
}

// httpTimeout bounds one JSON-RPC exchange; callers' contexts usually end it sooner.
const httpTimeout = 2 * time.Minute

// Dial returns a Client for the JSON-RPC endpoint URL (http, https, ws or wss). It does not
// contact the endpoint for HTTP URLs; use a [Network] to prove which chain it serves.
func Dial(ctx context.Context, endpoint string) (*Client, error) {
	c, err := rpc.DialOptions(ctx, endpoint, rpc.WithHTTPClient(&http.Client{Timeout: httpTimeout}))
	if err != nil {
		return nil, fmt.Errorf("evm rpc: dial %s: %w", endpointpkg.Short(endpoint), redactErr(err, endpoint))
	}
	cl := NewWithRPC(c)
	cl.endpoint = endpoint
	return cl, nil
}

// NewWithRPC returns a Client over c (an HTTP, websocket or in-process go-ethereum RPC client).
func NewWithRPC(c *rpc.Client) *Client {
	return &Client{rpc: c, eth: ethclient.NewClient(c)}
}

// Close closes the underlying RPC client.
func (c *Client) Close() { c.rpc.Close() }

// Errors callers can test for with errors.Is.
var (
	// ErrNotFinal means a transaction has no receipt at finalized depth (yet); see [NotFinalError].
	ErrNotFinal = errors.New("no receipt at finalized depth")
	// ErrWrongTransaction means a transaction hash names another sender or nonce than the caller's.
	ErrWrongTransaction = errors.New("transaction is not the one described")
)

// RPCError is a failed JSON-RPC call.
type RPCError struct {
	// Method is the JSON-RPC method called.
	Method string
	// Transient tells whether the same call may succeed later.
	Transient bool
	// Err is the underlying error.
	Err error

	endpoint string
}

// Error implements error, with any endpoint URL reduced to scheme and host.
func (e *RPCError) Error() string {
	kind := "permanent"
	if e.Transient {
		kind = "transient"
	}
	return fmt.Sprintf("evm rpc %s (%s): %s", e.Method, kind, redactErr(e.Err, e.endpoint))
}

// Unwrap returns the underlying error.
func (e *RPCError) Unwrap() error { return e.Err }

// IsTransient reports whether err is an RPC failure that may succeed when retried.
func IsTransient(err error) bool {
	var re *RPCError
	return errors.As(err, &re) && re.Transient
}

// redactErr returns err's message with the endpoint URL (which may carry an access token)
// reduced to scheme and host.
func redactErr(err error, endpoint string) error {
	msg := endpointpkg.Redact(err.Error(), endpoint)
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

func (c *Client) wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	var re *RPCError
	if errors.As(err, &re) {
		return err
	}
	return &RPCError{Method: method, Transient: transient(err), Err: err, endpoint: c.endpoint}
}

// JSON-RPC error codes.
const (
	codeExecutionReverted = 3
	codeParseError        = -32700
	codeInvalidParams     = -32602
	codeInvalidRequest    = -32600
)

// transient classifies an error from go-ethereum's RPC client.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var rev *RevertError
	if errors.As(err, &rev) {
		return false
	}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusRequestTimeout || he.StatusCode == http.StatusTooManyRequests || he.StatusCode >= 500
	}
	var re rpc.Error
	if errors.As(err, &re) {
		code := re.ErrorCode()
		// -32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid
		// params; 3 execution reverted (the same call reverts again).
		return code != codeExecutionReverted && !(code <= codeInvalidRequest && code >= codeParseError)
	}
	// Network failures, truncated bodies and anything unknown: a read can safely be retried.
	return true
}

// isIndexing reports whether err is geth's "transaction indexing is in progress": the node
// cannot yet tell whether it knows the transaction.
func isIndexing(err error) bool {
	var de rpc.DataError
	if errors.As(err, &de) {
		if s, ok := de.ErrorData().(string); ok && s == "transaction indexing is in progress" {
			return true
		}
	}
	return err != nil && strings.Contains(err.Error(), "transaction indexing is in progress")
}

// indexingPatience is how long a lookup asks again while the node answers "transaction indexing
// is in progress". geth answers so for an unknown hash between a new head and the indexing of
// its block, a window that closes within milliseconds and reopens at every block.
const indexingPatience = 2 * time.Second

// patientLookup runs call, and again after a short wait while the node answers that it is still
// indexing, for up to indexingPatience. It returns call's last error.
func patientLookup(ctx context.Context, call func() error) error {
	wait := 10 * time.Millisecond
	deadline := time.Now().Add(indexingPatience)
	for {
		err := call()
		if !isIndexing(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// ChainID returns the chain id the RPC serves (eth_chainId).
func (c *Client) ChainID(ctx context.Context) (*big.Int, error) {
	id, err := c.eth.ChainID(ctx)
	return id, c.wrap("eth_chainId", err)
}

// finalizedTag is the block tag of the finalized block.
var finalizedTag = big.NewInt(int64(rpc.FinalizedBlockNumber))

// FinalizedHeader returns the header of the finalized block.
func (c *Client) FinalizedHeader(ctx context.Context) (*types.Header, error) {
	h, err := c.eth.HeaderByNumber(ctx, finalizedTag)
	return h, c.wrap("eth_getBlockByNumber(finalized)", err)
}

// LatestHeader returns the header of the head block.
func (c *Client) LatestHeader(ctx context.Context) (*types.Header, error) {
	h, err := c.eth.HeaderByNumber(ctx, nil)
	return h, c.wrap("eth_getBlockByNumber(latest)", err)
}

// canonicalHash returns the hash of the canonical block at height, or the zero hash when the
// chain is not that high.
func (c *Client) canonicalHash(ctx context.Context, height uint64) (common.Hash, error) {
	h, err := c.eth.HeaderByNumber(ctx, new(big.Int).SetUint64(height))
	if errors.Is(err, ethereum.NotFound) {
		return common.Hash{}, nil
	}
	if err != nil {
		return common.Hash{}, c.wrap("eth_getBlockByNumber", err)
	}
	return h.Hash(), nil
}

// Nonces are an account's transaction counts at three depths.
type Nonces struct {
	// Pending counts the transactions in the node's pool too: the next nonce to use.
	Pending uint64
	// Latest is the count at the head block.
	Latest uint64
	// Finalized is the count at the finalized block: nonces below it are used for good.
	Finalized uint64
	// FinalizedBlock is the height Finalized was read at.
	FinalizedBlock uint64
}

// Nonces reads addr's pending, latest and finalized nonces. The finalized one is read at the
// finalized block's hash, so it belongs to FinalizedBlock even when finality moves meanwhile.
func (c *Client) Nonces(ctx context.Context, addr common.Address) (*Nonces, error) {
	fin, err := c.FinalizedHeader(ctx)
	if err != nil {
		return nil, err
	}
	var n Nonces
	n.FinalizedBlock = fin.Number.Uint64()
	if n.Finalized, err = c.eth.NonceAtHash(ctx, addr, fin.Hash()); err != nil {
		return nil, c.wrap("eth_getTransactionCount(finalized)", err)
	}
	if n.Latest, err = c.eth.NonceAt(ctx, addr, nil); err != nil {
		return nil, c.wrap("eth_getTransactionCount(latest)", err)
	}
	if n.Pending, err = c.eth.PendingNonceAt(ctx, addr); err != nil {
		return nil, c.wrap("eth_getTransactionCount(pending)", err)
	}
	return &n, nil
}

// Fees are the inputs of an EIP-1559 fee choice.
type Fees struct {
	// BaseFee is the head block's base fee per gas, in wei.
	BaseFee *big.Int
	// Tip is the node's suggested priority fee per gas (eth_maxPriorityFeePerGas), in wei.
	Tip *big.Int
	// Block is the head block's height.
	Block uint64
}

// Fees reads the head block's base fee and the node's suggested tip.
func (c *Client) Fees(ctx context.Context) (*Fees, error) {
	head, err := c.LatestHeader(ctx)
	if err != nil {
		return nil, err
	}
	if head.BaseFee == nil {
		return nil, &RPCError{Method: "eth_getBlockByNumber(latest)", Err: fmt.Errorf("block %s has no base fee: the chain is not on EIP-1559", head.Number), endpoint: c.endpoint}
	}
	tip, err := c.eth.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, c.wrap("eth_maxPriorityFeePerGas", err)
	}
	return &Fees{BaseFee: head.BaseFee, Tip: tip, Block: head.Number.Uint64()}, nil
}

// Balance reads the ether (the chain's native coin, in wei) addr holds at the head block.
func (c *Client) Balance(ctx context.Context, addr common.Address) (*big.Int, error) {
	v, err := c.eth.BalanceAt(ctx, addr, nil)
	if err != nil {
		return nil, c.wrap("eth_getBalance", err)
	}
	return v, nil
}

// EstimateGas estimates the gas msg needs at the head block. A call that reverts is a
// [*RevertError] (wrapped in an [*RPCError]) carrying the decoded reason.
func (c *Client) EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error) {
	gas, err := c.eth.EstimateGas(ctx, msg)
	if err != nil {
		return 0, c.wrap("eth_estimateGas", asRevert(err))
	}
	return gas, nil
}

// TxState is where a transaction stands on the node.
type TxState int

// Transaction states.
const (
	// TxAbsent: the node knows no transaction with the hash (never seen, dropped, or reorged
	// out and not back in the pool).
	TxAbsent TxState = iota
	// TxPending: the transaction waits in the node's pool.
	TxPending
	// TxMined: the transaction is in a canonical block (not necessarily finalized).
	TxMined
)

// String names the state.
func (s TxState) String() string {
	switch s {
	case TxAbsent:
		return "absent"
	case TxPending:
		return "pending"
	case TxMined:
		return "mined"
	}
	return fmt.Sprintf("TxState(%d)", int(s))
}

// TxLookup is a transaction as the node knows it.
type TxLookup struct {
	// State says whether the transaction is absent, pending or mined.
	State TxState
	// Tx is the transaction; nil when absent.
	Tx *types.Transaction
	// From is the sender, as the node recovered it; zero when absent.
	From common.Address
	// BlockNumber, BlockHash and Index place a mined transaction.
	BlockNumber uint64
	BlockHash   common.Hash
	Index       uint
}

// rpcTx is the part of eth_getTransactionByHash's answer read besides the transaction itself.
type rpcTx struct {
	From             common.Address  `json:"from"`
	BlockHash        *common.Hash    `json:"blockHash"`
	BlockNumber      *hexutil.Big    `json:"blockNumber"`
	TransactionIndex *hexutil.Uint64 `json:"transactionIndex"`
}

// Transaction looks hash up: absent, pending, or mined at (block, index).
func (c *Client) Transaction(ctx context.Context, hash common.Hash) (*TxLookup, error) {
	var raw json.RawMessage
	if err := patientLookup(ctx, func() error { return c.rpc.CallContext(ctx, &raw, "eth_getTransactionByHash", hash) }); err != nil {
		return nil, c.wrap("eth_getTransactionByHash", err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return &TxLookup{State: TxAbsent}, nil
	}
	var meta rpcTx
	tx := new(types.Transaction)
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, c.wrap("eth_getTransactionByHash", fmt.Errorf("decode answer: %w", err))
	}
	if err := json.Unmarshal(raw, tx); err != nil {
		return nil, c.wrap("eth_getTransactionByHash", fmt.Errorf("decode transaction: %w", err))
	}
	if tx.Hash() != hash {
		return nil, c.wrap("eth_getTransactionByHash", fmt.Errorf("asked for %s, the node answered a transaction hashing to %s", hash.Hex(), tx.Hash().Hex()))
	}
	l := &TxLookup{State: TxPending, Tx: tx, From: meta.From}
	if meta.BlockHash != nil && *meta.BlockHash != (common.Hash{}) && meta.BlockNumber != nil {
		l.State = TxMined
		l.BlockHash = *meta.BlockHash
		l.BlockNumber = meta.BlockNumber.ToInt().Uint64()
		if meta.TransactionIndex != nil {
			l.Index = uint(*meta.TransactionIndex)
		}
	}
	return l, nil
}

// ErrHashMismatch means the node answered eth_sendRawTransaction with another hash than the
// bytes sent hash to.
var ErrHashMismatch = errors.New("the node answered another transaction hash than the bytes'")

// SendRawTransaction sends raw, a signed transaction's binary encoding, as it is
// (eth_sendRawTransaction). It is the one write of the package, used where the staking service
// has no broadcast endpoint for the transaction. A node refusing the bytes answers a JSON-RPC
// error (an rpc.Error inside the [*RPCError], with the node's words: "already known", "nonce too
// low", "insufficient funds ..."); a node answering another hash than keccak256(raw) is an
// [*RPCError] wrapping [ErrHashMismatch].
func (c *Client) SendRawTransaction(ctx context.Context, raw []byte) error {
	var answered common.Hash
	if err := c.rpc.CallContext(ctx, &answered, "eth_sendRawTransaction", hexutil.Encode(raw)); err != nil {
		return c.wrap("eth_sendRawTransaction", err)
	}
	if want := crypto.Keccak256Hash(raw); answered != want {
		return &RPCError{Method: "eth_sendRawTransaction", Err: fmt.Errorf("%w: sent %s, answered %s", ErrHashMismatch, want.Hex(), answered.Hex()), endpoint: c.endpoint}
	}
	return nil
}

// Logs are the logs q matches (eth_getLogs).
func (c *Client) Logs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	logs, err := c.eth.FilterLogs(ctx, q)
	if err != nil {
		return nil, c.wrap("eth_getLogs", err)
	}
	return logs, nil
}
