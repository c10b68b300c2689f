// Package rpcproof keeps a chain's RPC trusted only while it is proven to serve one network: a
// value only that network has (Solana's genesis hash, an EVM chain id) must be what the RPC serves.
// Every chain's read-only client wraps its reads in a Proof; the chain supplies how to read the
// value and which read failures mean the RPC itself failed.
package rpcproof

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrNetworkUnverified is wrapped by every refusal of a read through an unproven RPC.
var ErrNetworkUnverified = errors.New("RPC not proven to serve the network")

// Status is what a Proof knows about its RPC.
type Status struct {
	// Network is the configured network name.
	Network string
	// Expected is the value the network must have.
	Expected string
	// Served is the value the RPC last served, "" if none yet.
	Served string
	// Verified is true when the RPC served the expected value at the last check and no read has
	// failed since.
	Verified bool
	// Reason says why the RPC is not verified; empty when it is.
	Reason string
	// CheckedAt is when the value was last read (zero: never).
	CheckedAt time.Time
}

// Options tune a Proof. Zero fields take the defaults.
type Options struct {
	// Recheck is how often a verified RPC is read again; default DefaultRecheck.
	Recheck time.Duration
	// Retry is how often an unverified RPC is checked again, and the least time between two
	// checks that reads make on their own; default DefaultRetry.
	Retry time.Duration
	// OnChange is called whenever Verified, Served or Reason change, with the new status. Calls
	// do not overlap and the last one carries the current status.
	OnChange func(Status)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultRecheck = time.Minute
	DefaultRetry   = 5 * time.Second
)

// Identity is how a chain proves which network an RPC serves.
type Identity struct {
	// Chain names the chain family in refusals ("solana", "evm").
	Chain string
	// What is the value read ("genesis hash", "chain id"); Noun what a wrong value means the RPC
	// serves ("network", "chain").
	What, Noun string
	// Read reads the value the RPC serves.
	Read func(ctx context.Context) (string, error)
	// RPCFailed reports whether a read's error is a failure of the RPC itself (a network error,
	// an HTTP error other than 429), which withdraws the proof; an answer from a node that
	// answered (a JSON-RPC error) does not.
	RPCFailed func(error) bool
}

// Reasons a Proof is not verified, as Status.Reason starts, for an identity reading what.
func ReasonUnchecked(what string) string { return what + " not checked yet" }

// ReasonMismatch: the RPC served another value.
func ReasonMismatch(what, noun string) string {
	return what + " mismatch: the RPC serves another " + noun
}

// ReasonCheckFail: the value could not be read.
func ReasonCheckFail(what string) string { return what + " could not be read" }

// ReasonRPCFailed: a read failed since the value was last read.
func ReasonRPCFailed(what string) string {
	return "the RPC failed since its " + what + " was checked; re-checking"
}

// Proof is an RPC trusted only while it is proven to serve one network. Until it has (and after
// a mismatch), [Read] refuses with an [*UnverifiedError]. A read that fails the way a lost or
// replaced RPC fails withdraws the proof: reads are refused until the value has been read again
// from the RPC that came back. [Proof.Run] checks at once, periodically, and after each such
// failure; a read that finds the RPC unproven checks inline, at most once per Retry, so a Proof
// works without Run too. A Proof is safe for concurrent use.
type Proof struct {
	name     string
	expected string
	id       Identity
	opts     Options

	checkMu sync.Mutex // one check at a time

	mu          sync.Mutex
	status      Status
	gen         uint64 // read failures observed
	outage      bool   // the proof was withdrawn by a failed read and not re-established since
	lastAttempt time.Time

	notifyMu sync.Mutex
	notified Status

	failed chan struct{}
}

// New returns the Proof that the RPC id reads serves the network name, whose value is expected.
func New(name, expected string, id Identity, opts Options) *Proof {
	if opts.Recheck <= 0 {
		opts.Recheck = DefaultRecheck
	}
	if opts.Retry <= 0 {
		opts.Retry = DefaultRetry
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Proof{
		name: name, expected: expected, id: id, opts: opts,
		status: Status{Network: name, Expected: expected, Reason: ReasonUnchecked(id.What)},
		failed: make(chan struct{}, 1),
	}
}

// Name returns the network's name.
func (p *Proof) Name() string { return p.name }

// Status returns what the Proof knows about its RPC.
func (p *Proof) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// Verified returns nil when the RPC is proven to serve the network, its refusal otherwise.
func (p *Proof) Verified() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errLocked()
}

func (p *Proof) errLocked() error {
	if p.status.Verified {
		return nil
	}
	return p.Refusal(p.status)
}

// Refusal is the error a read returns while the RPC is not proven, for status st.
func (p *Proof) Refusal(st Status) *UnverifiedError {
	return &UnverifiedError{Chain: p.id.Chain, What: p.id.What, Network: st.Network, Expected: st.Expected, Served: st.Served, Reason: st.Reason}
}

// UnverifiedError is the refusal of a read through an RPC that is not (or no longer) proven to
// serve the network it is configured for, on every chain. Retrying may help: the proof re-checks
// on its own.
type UnverifiedError struct {
	// Chain names the chain family ("solana", "evm"); What the value that proves the network
	// ("genesis hash", "chain id").
	Chain, What string
	// Network is the configured network name.
	Network string
	// Expected is the value the network must have; Served the one the RPC last served, "" if none.
	Expected, Served string
	// Reason says why the RPC is not trusted.
	Reason string
}

// Error names the chain and network, the expected and served values, and the reason.
func (e *UnverifiedError) Error() string {
	served := "last served " + e.Served
	if e.Served == "" {
		served = "served none yet"
	}
	return fmt.Sprintf("%s network %s: %v (expected %s %s, %s): %s", e.Chain, e.Network, ErrNetworkUnverified, e.What, e.Expected, served, e.Reason)
}

// Unwrap returns ErrNetworkUnverified.
func (e *UnverifiedError) Unwrap() error { return ErrNetworkUnverified }

// Verify reads the RPC's value now and compares it with the expected one. It returns nil when
// the RPC is proven, its refusal otherwise. A check ended by ctx changes nothing.
func (p *Proof) Verify(ctx context.Context) error { return p.check(ctx, false) }

// Run checks the RPC at once, then every Recheck while it is proven, every Retry while it is not,
// and at once after a read failed; it returns when ctx is done.
func (p *Proof) Run(ctx context.Context) {
	for {
		err := p.check(ctx, false)
		if ctx.Err() != nil {
			return
		}
		wait := p.opts.Recheck
		if err != nil {
			wait = p.opts.Retry
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-p.failed:
			t.Stop()
		}
	}
}

// check reads the value. An inline check (made by a read) is skipped when the RPC was proven or
// checked less than Retry ago, while this one waited for another check.
func (p *Proof) check(ctx context.Context, inline bool) error {
	p.checkMu.Lock()
	defer p.checkMu.Unlock()
	p.mu.Lock()
	if inline && (p.status.Verified || p.recentLocked()) {
		err := p.errLocked()
		p.mu.Unlock()
		return err
	}
	gen := p.gen
	p.lastAttempt = p.opts.Now()
	p.mu.Unlock()

	served, err := p.id.Read(ctx)
	if err != nil && ctx.Err() != nil {
		return p.Verified()
	}
	p.mu.Lock()
	p.status.CheckedAt = p.opts.Now()
	switch {
	case err != nil && p.outage:
		// Still the outage that withdrew the proof: say so, with the latest error.
		p.status.Verified = false
		p.status.Reason = fmt.Sprintf("%s (%v)", ReasonRPCFailed(p.id.What), err)
	case err != nil:
		p.status.Verified = false
		p.status.Reason = fmt.Sprintf("%s: %v", ReasonCheckFail(p.id.What), err)
	case served != p.expected:
		p.outage = false
		p.status.Served, p.status.Verified = served, false
		p.status.Reason = fmt.Sprintf("%s (expected %s, served %s)", ReasonMismatch(p.id.What, p.id.Noun), p.expected, served)
	case gen != p.gen:
		// A read failed while the value was being read: the answer may predate the failure.
		p.status.Served, p.status.Verified = served, false
		p.status.Reason = ReasonRPCFailed(p.id.What)
		p.signalLocked()
	default:
		p.outage = false
		p.status.Served, p.status.Verified, p.status.Reason = served, true, ""
	}
	err = p.errLocked()
	p.mu.Unlock()
	p.notify()
	return err
}

// recentLocked reports whether the last check began less than Retry ago.
func (p *Proof) recentLocked() bool {
	return !p.lastAttempt.IsZero() && p.opts.Now().Sub(p.lastAttempt) < p.opts.Retry
}

func (p *Proof) signalLocked() {
	select {
	case p.failed <- struct{}{}:
	default:
	}
}

// ensure lets a read through when the RPC is proven, checking inline first when it is not and
// was not checked within Retry.
func (p *Proof) ensure(ctx context.Context) error {
	p.mu.Lock()
	if p.status.Verified {
		p.mu.Unlock()
		return nil
	}
	recent := p.recentLocked()
	p.mu.Unlock()
	if !recent {
		return p.check(ctx, true)
	}
	return p.Verified()
}

// Observe withdraws the proof when err, a read's error while the caller still waited, is a
// failure of the RPC itself (Identity.RPCFailed).
func (p *Proof) Observe(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil || !p.id.RPCFailed(err) {
		return
	}
	p.mu.Lock()
	p.gen++
	was := p.status.Verified
	if was {
		p.outage = true
		p.status.Verified = false
		p.status.Reason = fmt.Sprintf("%s (%v)", ReasonRPCFailed(p.id.What), err)
	}
	p.signalLocked()
	p.mu.Unlock()
	if was {
		p.notify()
	}
}

// notify calls OnChange with the current status when it differs from the last one reported.
func (p *Proof) notify() {
	if p.opts.OnChange == nil {
		return
	}
	p.notifyMu.Lock()
	defer p.notifyMu.Unlock()
	st := p.Status()
	last := p.notified
	if last.Network != "" && st.Verified == last.Verified && st.Served == last.Served && st.Reason == last.Reason {
		return
	}
	p.notified = st
	p.opts.OnChange(st)
}

// Read runs one read through p: refused while the RPC is unproven, observed for failure.
func Read[T any](ctx context.Context, p *Proof, f func() (T, error)) (T, error) {
	if err := p.ensure(ctx); err != nil {
		var zero T
		return zero, err
	}
	v, err := f()
	p.Observe(ctx, err)
	return v, err
}
