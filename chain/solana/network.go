package solchain

import (
	"context"
	"errors"

	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/chain/rpcproof"
)

// KnownGenesisHash returns the genesis hash of the public Solana cluster named network, from the
// catalogue (networks.Solana: "mainnet-beta", "testnet"); ok is false for any other name.
func KnownGenesisHash(network string) (hash string, ok bool) {
	return networks.Solana.ID(network)
}

// GenesisHash returns the base58 genesis hash of the cluster the RPC serves (getGenesisHash).
func (c *Client) GenesisHash(ctx context.Context) (string, error) {
	h, err := c.rpc.GetGenesisHash(ctx)
	if err != nil {
		return "", c.wrap("getGenesisHash", err)
	}
	return h.String(), nil
}

// ErrNetworkUnverified is wrapped by every refusal of a read through an unproven RPC (an
// [*rpcproof.UnverifiedError]).
var ErrNetworkUnverified = rpcproof.ErrNetworkUnverified

// NetworkStatus is what a Network knows about its RPC: Expected and Served are genesis hashes.
type NetworkStatus = rpcproof.Status

// NetworkOptions tune a Network. Zero fields take the defaults.
type NetworkOptions = rpcproof.Options

// Reasons a Network is not verified, as NetworkStatus.Reason starts.
var (
	ReasonUnchecked = rpcproof.ReasonUnchecked(proofWhat)
	ReasonMismatch  = rpcproof.ReasonMismatch(proofWhat, "network")
	ReasonCheckFail = rpcproof.ReasonCheckFail(proofWhat)
	ReasonRPCFailed = rpcproof.ReasonRPCFailed(proofWhat)
)

const proofWhat = "genesis hash"

// Defaults of NetworkOptions.
const (
	DefaultNetworkRecheck = rpcproof.DefaultRecheck
	DefaultNetworkRetry   = rpcproof.DefaultRetry
)

// Network is a Client trusted only while its RPC is proven to serve one network: the RPC's genesis
// hash must equal the network's. Until it has (and after a mismatch), every read returns an
// [*rpcproof.UnverifiedError]. A read that fails the way a lost or replaced RPC fails (a network error or
// an HTTP 5xx answer) withdraws the proof: reads are refused until the genesis hash has been read
// again from the RPC that came back. [Network.Run] checks at once, periodically, and after each
// such failure; a read that finds the RPC unproven checks inline, at most once per Retry, so that
// a Network works without Run too. A Network is safe for concurrent use.
type Network struct {
	*rpcproof.Proof
	c *Client
}

// NewNetwork returns the Network name of c's RPC, which must serve the genesis hash expected.
func NewNetwork(name, expected string, c *Client, opts NetworkOptions) *Network {
	return &Network{c: c, Proof: rpcproof.New(name, expected, rpcproof.Identity{
		Chain: "solana", What: proofWhat, Noun: "network", Read: c.GenesisHash, RPCFailed: rpcFailed,
	}, opts)}
}

// rpcFailed: a network error or an HTTP error other than 429, while the caller still waited.
// JSON-RPC error answers and refusals come from a node that answered; they do not.
func rpcFailed(err error) bool {
	var re *RPCError
	if !errors.As(err, &re) || !re.Transient {
		return false
	}
	var rpcErr *jsonrpc.RPCError
	var httpErr *jsonrpc.HTTPError
	return !errors.As(err, &rpcErr) && !(errors.As(err, &httpErr) && httpErr.Code == 429)
}

// observe withdraws the proof when err is a failure of the RPC itself.
func (n *Network) observe(ctx context.Context, err error) { n.Observe(ctx, err) }

// read runs one read through the proof: refused while the RPC is unproven, observed for failure.
func read[T any](ctx context.Context, n *Network, f func() (T, error)) (T, error) {
	return rpcproof.Read(ctx, n.Proof, f)
}

// SignatureStatus is [Client.SignatureStatus] on a proven RPC.
func (n *Network) SignatureStatus(ctx context.Context, sig string) (*SignatureStatus, error) {
	return read(ctx, n, func() (*SignatureStatus, error) { return n.c.SignatureStatus(ctx, sig) })
}

// BlockHeight is [Client.BlockHeight] on a proven RPC.
func (n *Network) BlockHeight(ctx context.Context) (uint64, error) {
	return read(ctx, n, func() (uint64, error) { return n.c.BlockHeight(ctx) })
}

// IsBlockhashValid is [Client.IsBlockhashValid] on a proven RPC.
func (n *Network) IsBlockhashValid(ctx context.Context, blockhash string) (bool, error) {
	return read(ctx, n, func() (bool, error) { return n.c.IsBlockhashValid(ctx, blockhash) })
}

// EpochInfo is [Client.EpochInfo] on a proven RPC.
func (n *Network) EpochInfo(ctx context.Context) (*EpochInfo, error) {
	return read(ctx, n, func() (*EpochInfo, error) { return n.c.EpochInfo(ctx) })
}

// Balance is [Client.Balance] on a proven RPC.
func (n *Network) Balance(ctx context.Context, addr string) (uint64, error) {
	return read(ctx, n, func() (uint64, error) { return n.c.Balance(ctx, addr) })
}

// RentExemptMinimum is [Client.RentExemptMinimum] on a proven RPC.
func (n *Network) RentExemptMinimum(ctx context.Context, size uint64) (uint64, error) {
	return read(ctx, n, func() (uint64, error) { return n.c.RentExemptMinimum(ctx, size) })
}

// MinimumDelegation is [Client.MinimumDelegation] on a proven RPC.
func (n *Network) MinimumDelegation(ctx context.Context) (uint64, error) {
	return read(ctx, n, func() (uint64, error) { return n.c.MinimumDelegation(ctx) })
}

// AccountInfo is [Client.AccountInfo] on a proven RPC.
func (n *Network) AccountInfo(ctx context.Context, addr string) (*AccountInfo, error) {
	return read(ctx, n, func() (*AccountInfo, error) { return n.c.AccountInfo(ctx, addr) })
}

// StakeAccount is [Client.StakeAccount] on a proven RPC.
func (n *Network) StakeAccount(ctx context.Context, addr string) (*StakeAccount, error) {
	return read(ctx, n, func() (*StakeAccount, error) { return n.c.StakeAccount(ctx, addr) })
}

// StakeActivation is [Client.StakeActivation] on a proven RPC.
func (n *Network) StakeActivation(ctx context.Context, addr string) (*StakeActivation, error) {
	return read(ctx, n, func() (*StakeActivation, error) { return n.c.StakeActivation(ctx, addr) })
}

// VoteAccount is [Client.VoteAccount] on a proven RPC.
func (n *Network) VoteAccount(ctx context.Context, vote string) (*VoteAccountStatus, error) {
	return read(ctx, n, func() (*VoteAccountStatus, error) { return n.c.VoteAccount(ctx, vote) })
}

// UnixTime is [Client.UnixTime] on a proven RPC.
func (n *Network) UnixTime(ctx context.Context) (int64, error) {
	return read(ctx, n, func() (int64, error) { return n.c.UnixTime(ctx) })
}

// TransactionFee is [Client.TransactionFee] on a proven RPC.
func (n *Network) TransactionFee(ctx context.Context, sig string) (uint64, error) {
	return read(ctx, n, func() (uint64, error) { return n.c.TransactionFee(ctx, sig) })
}

// InstructionPrograms is [Client.InstructionPrograms] on a proven RPC.
func (n *Network) InstructionPrograms(ctx context.Context, sig string) ([]string, error) {
	return read(ctx, n, func() ([]string, error) { return n.c.InstructionPrograms(ctx, sig) })
}
