package evmchain

import (
	"context"
	"errors"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/stakeflow/stakeflow/chain/rpcproof"
)

// ErrNetworkUnverified is wrapped by every refusal of a read through an unproven RPC (an
// [*rpcproof.UnverifiedError]).
var ErrNetworkUnverified = rpcproof.ErrNetworkUnverified

// NetworkStatus is what a Network knows about its RPC: Expected and Served are chain ids in decimal.
type NetworkStatus = rpcproof.Status

// NetworkOptions tune a Network. Zero fields take the defaults.
type NetworkOptions = rpcproof.Options

const proofWhat = "chain id"

// Reasons a Network is not verified, as NetworkStatus.Reason starts.
var (
	ReasonUnchecked = rpcproof.ReasonUnchecked(proofWhat)
	ReasonMismatch  = rpcproof.ReasonMismatch(proofWhat, "chain")
	ReasonCheckFail = rpcproof.ReasonCheckFail(proofWhat)
	ReasonRPCFailed = rpcproof.ReasonRPCFailed(proofWhat)
)

// Defaults of NetworkOptions.
const (
	DefaultNetworkRecheck = rpcproof.DefaultRecheck
	DefaultNetworkRetry   = rpcproof.DefaultRetry
)

// Network is a Client trusted only while its RPC is proven to serve one chain: eth_chainId must
// equal the configured chain id. Until it has (and after a mismatch), every read returns an
// [*rpcproof.UnverifiedError]. A read that fails the way a lost or replaced RPC fails (a network error,
// an undecodable answer, an HTTP error other than 429) withdraws the proof until the chain id has
// been read again. [Network.Run] checks at once, periodically, and after each such failure; a
// read that finds the RPC unproven checks inline, at most once per Retry, so a Network works
// without Run too. A Network is safe for concurrent use.
type Network struct {
	*rpcproof.Proof
	chainID uint64
	c       *Client
}

// NewNetwork returns the Network name of c's RPC, which must serve chain id chainID.
func NewNetwork(name string, chainID uint64, c *Client, opts NetworkOptions) *Network {
	return &Network{chainID: chainID, c: c, Proof: rpcproof.New(name, strconv.FormatUint(chainID, 10), rpcproof.Identity{
		Chain: "evm", What: proofWhat, Noun: "chain", RPCFailed: rpcFailed,
		Read: func(ctx context.Context) (string, error) {
			id, err := c.ChainID(ctx)
			if err != nil {
				return "", err
			}
			return id.String(), nil
		},
	}, opts)}
}

// ChainID returns the chain id the network must have.
func (n *Network) ChainID() uint64 { return n.chainID }

// rpcFailed: a network error, an undecodable answer or an HTTP error other than 429, while the
// caller still waited. JSON-RPC error answers come from a node that answered; they do not.
func rpcFailed(err error) bool {
	var re *RPCError
	if !errors.As(err, &re) || !re.Transient {
		return false
	}
	var rpcErr rpc.Error
	var httpErr rpc.HTTPError
	return !errors.As(err, &rpcErr) && !(errors.As(err, &httpErr) && httpErr.StatusCode == 429)
}

// read runs one read through the proof: refused while the RPC is unproven, observed for failure.
func read[T any](ctx context.Context, n *Network, f func() (T, error)) (T, error) {
	return rpcproof.Read(ctx, n.Proof, f)
}

// FinalizedHeader is [Client.FinalizedHeader] on a proven RPC.
func (n *Network) FinalizedHeader(ctx context.Context) (*types.Header, error) {
	return read(ctx, n, func() (*types.Header, error) { return n.c.FinalizedHeader(ctx) })
}

// LatestHeader is [Client.LatestHeader] on a proven RPC.
func (n *Network) LatestHeader(ctx context.Context) (*types.Header, error) {
	return read(ctx, n, func() (*types.Header, error) { return n.c.LatestHeader(ctx) })
}

// Nonces is [Client.Nonces] on a proven RPC.
func (n *Network) Nonces(ctx context.Context, addr common.Address) (*Nonces, error) {
	return read(ctx, n, func() (*Nonces, error) { return n.c.Nonces(ctx, addr) })
}

// Fees is [Client.Fees] on a proven RPC.
func (n *Network) Fees(ctx context.Context) (*Fees, error) {
	return read(ctx, n, func() (*Fees, error) { return n.c.Fees(ctx) })
}

// Balance is [Client.Balance] on a proven RPC.
func (n *Network) Balance(ctx context.Context, addr common.Address) (*big.Int, error) {
	return read(ctx, n, func() (*big.Int, error) { return n.c.Balance(ctx, addr) })
}

// EstimateGas is [Client.EstimateGas] on a proven RPC.
func (n *Network) EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error) {
	return read(ctx, n, func() (uint64, error) { return n.c.EstimateGas(ctx, msg) })
}

// Transaction is [Client.Transaction] on a proven RPC.
func (n *Network) Transaction(ctx context.Context, hash common.Hash) (*TxLookup, error) {
	return read(ctx, n, func() (*TxLookup, error) { return n.c.Transaction(ctx, hash) })
}

// ReceiptFinal is [Client.ReceiptFinal] on a proven RPC.
func (n *Network) ReceiptFinal(ctx context.Context, hash common.Hash) (*Receipt, error) {
	return read(ctx, n, func() (*Receipt, error) { return n.c.ReceiptFinal(ctx, hash) })
}

// NonceConsumedBy is [Client.NonceConsumedBy] on a proven RPC.
func (n *Network) NonceConsumedBy(ctx context.Context, addr common.Address, nonce uint64, hash common.Hash) (*NonceStatus, error) {
	return read(ctx, n, func() (*NonceStatus, error) { return n.c.NonceConsumedBy(ctx, addr, nonce, hash) })
}

// Call is [Client.Call] on a proven RPC.
func (n *Network) Call(ctx context.Context, block *big.Int, to common.Address, contract *abi.ABI, method string, args ...any) ([]any, error) {
	return read(ctx, n, func() ([]any, error) { return n.c.Call(ctx, block, to, contract, method, args...) })
}

// Logs is [Client.Logs] on a proven RPC.
func (n *Network) Logs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	return read(ctx, n, func() ([]types.Log, error) { return n.c.Logs(ctx, q) })
}

// SendRawTransaction is [Client.SendRawTransaction] on a proven RPC: the bytes go only to an RPC
// proven to serve the network's chain, and a send failing as a lost RPC fails withdraws the proof
// as a read does.
func (n *Network) SendRawTransaction(ctx context.Context, raw []byte) error {
	_, err := read(ctx, n, func() (struct{}, error) { return struct{}{}, n.c.SendRawTransaction(ctx, raw) })
	return err
}
