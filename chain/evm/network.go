package evmchain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// ErrNetworkUnverified is wrapped by every [*UnverifiedError].
var ErrNetworkUnverified = errors.New("RPC not proven to serve the network")

// UnverifiedError is the refusal of a [Network] whose RPC is not (or no longer) proven to serve
// the chain it is configured for. Retrying may help: the Network re-checks on its own.
type UnverifiedError struct {
	// Network is the configured network name.
	Network string
	// Expected is the chain id the network must have.
	Expected uint64
	// Served is the chain id the RPC last served, nil if it has served none.
	Served *big.Int
	// Reason says why the RPC is not trusted.
	Reason string
}

// Error names the network, the expected and the served chain id, and the reason.
func (e *UnverifiedError) Error() string {
	served := "none yet"
	if e.Served != nil {
		served = e.Served.String()
	}
	return fmt.Sprintf("evm network %s: %v (expected chain id %d, served %s): %s", e.Network, ErrNetworkUnverified, e.Expected, served, e.Reason)
}

// Unwrap returns ErrNetworkUnverified.
func (e *UnverifiedError) Unwrap() error { return ErrNetworkUnverified }

// NetworkStatus is what a Network knows about its RPC.
type NetworkStatus struct {
	// Network is the configured network name.
	Network string
	// Expected is the chain id the network must have.
	Expected uint64
	// Served is the chain id the RPC last served, nil if none yet.
	Served *big.Int
	// Verified is true when the RPC served the expected chain id at the last check and no read
	// has failed since.
	Verified bool
	// Reason says why the RPC is not verified; empty when it is.
	Reason string
	// CheckedAt is when the chain id was last read (zero: never).
	CheckedAt time.Time
}

// Reasons a Network is not verified, as NetworkStatus.Reason starts.
const (
	ReasonUnchecked = "chain id not checked yet"
	ReasonMismatch  = "chain id mismatch: the RPC serves another chain"
	ReasonCheckFail = "chain id could not be read"
	ReasonRPCFailed = "the RPC failed since its chain id was checked; re-checking"
)

// NetworkOptions tune a Network. Zero fields take the defaults.
type NetworkOptions struct {
	// Recheck is how often a verified RPC's chain id is read again; default DefaultNetworkRecheck.
	Recheck time.Duration
	// Retry is how often an unverified RPC is checked again, and the least time between two
	// checks that reads make on their own; default DefaultNetworkRetry.
	Retry time.Duration
	// OnChange is called whenever Verified, Served or Reason change, with the new status. Calls
	// do not overlap and the last one carries the current status.
	OnChange func(NetworkStatus)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Defaults of NetworkOptions.
const (
	DefaultNetworkRecheck = time.Minute
	DefaultNetworkRetry   = 5 * time.Second
)

// Network is a Client trusted only while its RPC is proven to serve one chain: eth_chainId must
// equal the configured chain id. Until it has (and after a mismatch), every read returns an
// [*UnverifiedError]. A read that fails the way a lost or replaced RPC fails (a network error or
// an HTTP error other than 429) withdraws the proof until the chain id has been read again.
// [Network.Run] checks at once, periodically, and after each such failure; a read that finds
// the RPC unproven checks inline, at most once per Retry, so a Network works without Run too.
// A Network is safe for concurrent use.
type Network struct {
	name     string
	expected uint64
	c        *Client
	opts     NetworkOptions

	checkMu sync.Mutex // one chain id check at a time

	mu          sync.Mutex
	status      NetworkStatus
	gen         uint64 // read failures observed
	lastAttempt time.Time

	notifyMu sync.Mutex
	notified NetworkStatus

	failed chan struct{}
}

// NewNetwork returns the Network name of c's RPC, which must serve chain id chainID.
func NewNetwork(name string, chainID uint64, c *Client, opts NetworkOptions) *Network {
	if opts.Recheck <= 0 {
		opts.Recheck = DefaultNetworkRecheck
	}
	if opts.Retry <= 0 {
		opts.Retry = DefaultNetworkRetry
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Network{
		name: name, expected: chainID, c: c, opts: opts,
		status: NetworkStatus{Network: name, Expected: chainID, Reason: ReasonUnchecked},
		failed: make(chan struct{}, 1),
	}
}

// Name returns the network's name.
func (n *Network) Name() string { return n.name }

// ChainID returns the chain id the network must have.
func (n *Network) ChainID() uint64 { return n.expected }

// Status returns what the Network knows about its RPC.
func (n *Network) Status() NetworkStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status
}

// Verified returns nil when the RPC is proven to serve the chain, an [*UnverifiedError] otherwise.
func (n *Network) Verified() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.errLocked()
}

func (n *Network) errLocked() error {
	if n.status.Verified {
		return nil
	}
	return &UnverifiedError{Network: n.name, Expected: n.expected, Served: n.status.Served, Reason: n.status.Reason}
}

// Verify reads the RPC's chain id now and compares it with the expected one. It returns nil when
// the RPC is proven, an [*UnverifiedError] otherwise. A check ended by ctx changes nothing.
func (n *Network) Verify(ctx context.Context) error { return n.check(ctx, false) }

// Run checks the RPC at once, then every Recheck while it is proven, every Retry while it is not,
// and at once after a read failed; it returns when ctx is done.
func (n *Network) Run(ctx context.Context) {
	for {
		err := n.check(ctx, false)
		if ctx.Err() != nil {
			return
		}
		wait := n.opts.Recheck
		if err != nil {
			wait = n.opts.Retry
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-n.failed:
			t.Stop()
		}
	}
}

// check reads the chain id. An inline check (made by a read) is skipped when the RPC was proven
// or checked less than Retry ago, while this one waited for another check.
func (n *Network) check(ctx context.Context, inline bool) error {
	n.checkMu.Lock()
	defer n.checkMu.Unlock()
	n.mu.Lock()
	if inline && (n.status.Verified || n.recentLocked()) {
		err := n.errLocked()
		n.mu.Unlock()
		return err
	}
	gen := n.gen
	n.lastAttempt = n.opts.Now()
	n.mu.Unlock()

	served, err := n.c.ChainID(ctx)
	if err != nil && ctx.Err() != nil {
		return n.Verified()
	}
	n.mu.Lock()
	n.status.CheckedAt = n.opts.Now()
	switch {
	case err != nil:
		n.status.Verified = false
		n.status.Reason = fmt.Sprintf("%s: %v", ReasonCheckFail, err)
	case !served.IsUint64() || served.Uint64() != n.expected:
		n.status.Served, n.status.Verified = served, false
		n.status.Reason = fmt.Sprintf("%s (expected %d, served %s)", ReasonMismatch, n.expected, served)
	case gen != n.gen:
		// A read failed while the chain id was being read: the answer may predate the failure.
		n.status.Served, n.status.Verified = served, false
		n.status.Reason = ReasonRPCFailed
		n.signalLocked()
	default:
		n.status.Served, n.status.Verified, n.status.Reason = served, true, ""
	}
	err = n.errLocked()
	n.mu.Unlock()
	n.notify()
	return err
}

func (n *Network) recentLocked() bool {
	return !n.lastAttempt.IsZero() && n.opts.Now().Sub(n.lastAttempt) < n.opts.Retry
}

func (n *Network) signalLocked() {
	select {
	case n.failed <- struct{}{}:
	default:
	}
}

// ensure lets a read through when the RPC is proven, checking inline first when it is not and
// was not checked within Retry.
func (n *Network) ensure(ctx context.Context) error {
	n.mu.Lock()
	if n.status.Verified {
		n.mu.Unlock()
		return nil
	}
	recent := n.recentLocked()
	n.mu.Unlock()
	if !recent {
		return n.check(ctx, true)
	}
	return n.Verified()
}

// observe withdraws the proof when err is a failure of the RPC itself (a network error, an
// undecodable answer, an HTTP error other than 429) while the caller still waited. JSON-RPC
// error answers come from a node that answered; they do not.
func (n *Network) observe(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	var re *RPCError
	if !errors.As(err, &re) || !re.Transient {
		return
	}
	var rpcErr rpc.Error
	var httpErr rpc.HTTPError
	if errors.As(err, &rpcErr) || (errors.As(err, &httpErr) && httpErr.StatusCode == 429) {
		return
	}
	n.mu.Lock()
	n.gen++
	was := n.status.Verified
	if was {
		n.status.Verified = false
		n.status.Reason = fmt.Sprintf("%s (%v)", ReasonRPCFailed, err)
	}
	n.signalLocked()
	n.mu.Unlock()
	if was {
		n.notify()
	}
}

// notify calls OnChange with the current status when it differs from the last one reported.
func (n *Network) notify() {
	if n.opts.OnChange == nil {
		return
	}
	n.notifyMu.Lock()
	defer n.notifyMu.Unlock()
	st := n.Status()
	last := n.notified
	if last.Network != "" && st.Verified == last.Verified && st.Reason == last.Reason && sameID(st.Served, last.Served) {
		return
	}
	n.notified = st
	n.opts.OnChange(st)
}

func sameID(a, b *big.Int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Cmp(b) == 0
}

// read runs one read through the proof: refused while the RPC is unproven, observed for failure.
func read[T any](ctx context.Context, n *Network, f func() (T, error)) (T, error) {
	if err := n.ensure(ctx); err != nil {
		var zero T
		return zero, err
	}
	v, err := f()
	n.observe(ctx, err)
	return v, err
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
