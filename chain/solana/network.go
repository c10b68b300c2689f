package solchain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
)

// knownGenesisHashes are the genesis hashes of the public Solana clusters, by network name.
var knownGenesisHashes = map[string]string{
	"mainnet-beta": "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
	"testnet":      "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY",
	"devnet":       "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG",
}

// KnownGenesisHash returns the genesis hash of the public Solana cluster named network
// ("mainnet-beta", "testnet", "devnet"); ok is false for any other name.
func KnownGenesisHash(network string) (hash string, ok bool) {
	hash, ok = knownGenesisHashes[network]
	return hash, ok
}

// GenesisHash returns the base58 genesis hash of the cluster the RPC serves (getGenesisHash).
func (c *Client) GenesisHash(ctx context.Context) (string, error) {
	h, err := c.rpc.GetGenesisHash(ctx)
	if err != nil {
		return "", c.wrap("getGenesisHash", err)
	}
	return h.String(), nil
}

// ErrNetworkUnverified is wrapped by every [*UnverifiedError].
var ErrNetworkUnverified = errors.New("RPC not proven to serve the network")

// UnverifiedError is the refusal of a [Network] whose RPC is not (or no longer) proven to serve
// the network it is configured for. Retrying may help: the Network re-checks on its own.
type UnverifiedError struct {
	// Network is the configured network name.
	Network string
	// Expected is the genesis hash the network must have.
	Expected string
	// Served is the genesis hash the RPC last served, "" if it has served none.
	Served string
	// Reason says why the RPC is not trusted.
	Reason string
}

// Error names the network, the expected and the served genesis hash, and the reason.
func (e *UnverifiedError) Error() string {
	served := e.Served
	if served == "" {
		served = "none yet"
	}
	return fmt.Sprintf("solana network %s: %v (expected genesis hash %s, served %s): %s", e.Network, ErrNetworkUnverified, e.Expected, served, e.Reason)
}

// Unwrap returns ErrNetworkUnverified.
func (e *UnverifiedError) Unwrap() error { return ErrNetworkUnverified }

// NetworkStatus is what a Network knows about its RPC.
type NetworkStatus struct {
	// Network is the configured network name.
	Network string
	// Expected is the genesis hash the network must have.
	Expected string
	// Served is the genesis hash the RPC last served, "" if none yet.
	Served string
	// Verified is true when the RPC served the expected genesis hash at the last check and no read
	// has failed since.
	Verified bool
	// Reason says why the RPC is not verified; empty when it is.
	Reason string
	// CheckedAt is when the genesis hash was last read (zero: never).
	CheckedAt time.Time
}

// Reasons a Network is not verified, as NetworkStatus.Reason starts.
const (
	ReasonUnchecked = "genesis hash not checked yet"
	ReasonMismatch  = "genesis hash mismatch: the RPC serves another network"
	ReasonCheckFail = "genesis hash could not be read"
	ReasonRPCFailed = "the RPC failed since its genesis hash was checked; re-checking"
)

// NetworkOptions tune a Network. Zero fields take the defaults.
type NetworkOptions struct {
	// Recheck is how often a verified RPC's genesis hash is read again; default
	// DefaultNetworkRecheck.
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

// Network is a Client trusted only while its RPC is proven to serve one network: the RPC's genesis
// hash must equal the network's. Until it has (and after a mismatch), every read returns an
// [*UnverifiedError]. A read that fails the way a lost or replaced RPC fails (a network error or
// an HTTP 5xx answer) withdraws the proof: reads are refused until the genesis hash has been read
// again from the RPC that came back. [Network.Run] checks at once, periodically, and after each
// such failure; a read that finds the RPC unproven checks inline, at most once per Retry, so that
// a Network works without Run too. A Network is safe for concurrent use.
type Network struct {
	name     string
	expected string
	c        *Client
	opts     NetworkOptions

	checkMu sync.Mutex // one genesis check at a time

	mu          sync.Mutex
	status      NetworkStatus
	gen         uint64 // read failures observed
	lastAttempt time.Time

	notifyMu sync.Mutex
	notified NetworkStatus

	failed chan struct{}
}

// NewNetwork returns the Network name of c's RPC, which must serve the genesis hash expected.
func NewNetwork(name, expected string, c *Client, opts NetworkOptions) *Network {
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
		name: name, expected: expected, c: c, opts: opts,
		status: NetworkStatus{Network: name, Expected: expected, Reason: ReasonUnchecked},
		failed: make(chan struct{}, 1),
	}
}

// Name returns the network's name.
func (n *Network) Name() string { return n.name }

// Status returns what the Network knows about its RPC.
func (n *Network) Status() NetworkStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status
}

// Verified returns nil when the RPC is proven to serve the network, an [*UnverifiedError]
// otherwise.
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

// Verify reads the RPC's genesis hash now and compares it with the expected one. It returns nil
// when the RPC is proven, an [*UnverifiedError] otherwise. A check ended by ctx changes nothing.
func (n *Network) Verify(ctx context.Context) error {
	return n.check(ctx, false)
}

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

// check reads the genesis hash. An inline check (made by a read) is skipped when the RPC was
// proven or checked less than Retry ago, while this one waited for another check.
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

	served, err := n.c.GenesisHash(ctx)
	if err != nil && ctx.Err() != nil {
		return n.Verified()
	}
	n.mu.Lock()
	n.status.CheckedAt = n.opts.Now()
	switch {
	case err != nil:
		n.status.Verified = false
		n.status.Reason = fmt.Sprintf("%s: %v", ReasonCheckFail, err)
	case served != n.expected:
		n.status.Served, n.status.Verified = served, false
		n.status.Reason = fmt.Sprintf("%s (expected %s, served %s)", ReasonMismatch, n.expected, served)
	case gen != n.gen:
		// A read failed while the hash was being read: the answer may predate the failure.
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

// recentLocked reports whether the last check began less than Retry ago.
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

// observe withdraws the proof when err is a failure of the RPC itself: a network error or an
// HTTP error other than 429, while the caller still waited. JSON-RPC error answers and refusals
// come from a node that answered; they do not.
func (n *Network) observe(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	var re *RPCError
	if !errors.As(err, &re) || !re.Transient {
		return
	}
	var rpcErr *jsonrpc.RPCError
	var httpErr *jsonrpc.HTTPError
	if errors.As(err, &rpcErr) || (errors.As(err, &httpErr) && httpErr.Code == 429) {
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
	if st.Verified == last.Verified && st.Served == last.Served && st.Reason == last.Reason && last.Network != "" {
		return
	}
	n.notified = st
	n.opts.OnChange(st)
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
