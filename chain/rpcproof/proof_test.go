package rpcproof

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errRPCDown = errors.New("connection refused")

// fakeRPC serves an identity value; down makes reads of it fail the way a lost RPC fails.
type fakeRPC struct {
	mu     sync.Mutex
	served string
	down   bool
	reads  int
}

func (f *fakeRPC) set(served string, down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.served, f.down = served, down
}

func (f *fakeRPC) identity() Identity {
	return Identity{
		What: "chain id", Noun: "chain",
		Read: func(context.Context) (string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.reads++
			if f.down {
				return "", errRPCDown
			}
			return f.served, nil
		},
		RPCFailed: func(err error) bool { return errors.Is(err, errRPCDown) },
	}
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestOptionDefaults(t *testing.T) {
	f := &fakeRPC{}
	for _, d := range []time.Duration{0, -time.Second} {
		p := New("dev", "1", f.identity(), Options{Recheck: d, Retry: d})
		assert.Equal(t, time.Minute, p.opts.Recheck, "Recheck %v", d)
		assert.Equal(t, 5*time.Second, p.opts.Retry, "Retry %v", d)
	}
	p := New("dev", "1", f.identity(), Options{Recheck: time.Hour, Retry: time.Millisecond})
	assert.Equal(t, time.Hour, p.opts.Recheck)
	assert.Equal(t, time.Millisecond, p.opts.Retry)
}

// TestReadsOnlyThroughAProvenRPC: a read is refused (and never made) until the RPC served the
// expected value; a mismatch says both values; a read failing as a lost RPC withdraws the proof
// until the value is read again.
func TestReadsOnlyThroughAProvenRPC(t *testing.T) {
	ctx := context.Background()
	f := &fakeRPC{}
	f.set("5", false)
	clk := &clock{t: time.Unix(1000, 0)}
	var changes []Status
	p := New("dev", "1337", f.identity(), Options{Now: clk.now, OnChange: func(st Status) { changes = append(changes, st) }})
	assert.Equal(t, ReasonUnchecked("chain id"), p.Status().Reason)

	made := 0
	readOnce := func() error {
		_, err := Read(ctx, p, func() (int, error) { made++; return 1, nil })
		return err
	}
	err := readOnce()
	require.ErrorIs(t, err, ErrNetworkUnverified)
	assert.Contains(t, err.Error(), "chain id mismatch: the RPC serves another chain (expected 1337, served 5)")
	assert.Zero(t, made, "no read through an RPC serving another chain")

	// Within Retry of the last check a read does not check again.
	f.set("1337", false)
	require.ErrorIs(t, readOnce(), ErrNetworkUnverified)
	assert.Equal(t, 1, f.reads)
	clk.t = clk.t.Add(DefaultRetry)
	require.NoError(t, readOnce())
	assert.Equal(t, 1, made)
	assert.True(t, p.Status().Verified)

	// A read failing as a lost RPC withdraws the proof; a JSON-RPC-style answer would not.
	_, err = Read(ctx, p, func() (int, error) { return 0, errRPCDown })
	require.ErrorIs(t, err, errRPCDown)
	assert.False(t, p.Status().Verified)
	assert.Contains(t, p.Status().Reason, ReasonRPCFailed("chain id"))
	require.ErrorIs(t, readOnce(), ErrNetworkUnverified, "refused until the value is read again")
	assert.Equal(t, 1, made)
	clk.t = clk.t.Add(DefaultRetry)
	_, err = Read(ctx, p, func() (int, error) { return 0, errors.New("execution reverted") })
	require.Error(t, err)
	assert.True(t, p.Status().Verified, "the inline re-check proved it again, and an answered error keeps the proof")

	require.Len(t, changes, 4, "unchecked->mismatch, ->verified, ->withdrawn, ->verified: %+v", changes)
	assert.Equal(t, "5", changes[0].Served)
	assert.True(t, changes[1].Verified)
	assert.False(t, changes[2].Verified)
	assert.True(t, changes[3].Verified)
}

// TestCancelledCheckChangesNothing: a check ended by its caller's context leaves the status as it was.
func TestCancelledCheckChangesNothing(t *testing.T) {
	f := &fakeRPC{}
	f.set("", true)
	p := New("dev", "1", f.identity(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, p.Verify(ctx), ErrNetworkUnverified)
	assert.Equal(t, ReasonUnchecked("chain id"), p.Status().Reason)
	assert.True(t, p.Status().CheckedAt.IsZero())
}

// TestRunChecksAgainAfterAFailure: Run re-checks at once when a read fails, without waiting for
// Recheck or Retry (both an hour here). OnChange may fold the withdrawal and the new proof into
// one call when they come close together, so the test counts the RPC's reads instead.
func TestRunChecksAgainAfterAFailure(t *testing.T) {
	f := &fakeRPC{}
	f.set("1", false)
	p := New("dev", "1", f.identity(), Options{Recheck: time.Hour, Retry: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	reads := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.reads
	}
	require.Eventually(t, func() bool { return p.Status().Verified }, 30*time.Second, time.Millisecond, "Run's first check")
	before := reads()
	p.Observe(context.Background(), errRPCDown)
	require.Eventually(t, func() bool { return reads() > before && p.Status().Verified }, 30*time.Second, time.Millisecond,
		"Run read the value again at once and proved the RPC again")
}

// TestOutageReasonSurvivesFailedRechecks: once a failed read withdrew the proof, re-checks that
// fail as well keep saying the RPC failed (with the latest error) until the value is read again;
// a first check that cannot read says the value could not be read.
func TestOutageReasonSurvivesFailedRechecks(t *testing.T) {
	ctx := context.Background()
	f := &fakeRPC{}
	f.set("", true)
	p := New("dev", "1", f.identity(), Options{})
	require.ErrorIs(t, p.Verify(ctx), ErrNetworkUnverified)
	assert.Contains(t, p.Status().Reason, ReasonCheckFail("chain id"))

	f.set("1", false)
	require.NoError(t, p.Verify(ctx))
	f.set("1", true)
	p.Observe(ctx, errRPCDown)
	for i := 0; i < 2; i++ {
		require.ErrorIs(t, p.Verify(ctx), ErrNetworkUnverified)
		reason := p.Status().Reason
		assert.Contains(t, reason, ReasonRPCFailed("chain id"), "re-check %d", i)
		assert.Contains(t, reason, errRPCDown.Error())
	}
	f.set("1", false)
	require.NoError(t, p.Verify(ctx))

	// A later failed check that no failed read preceded is a check failure again.
	f.set("1", true)
	require.ErrorIs(t, p.Verify(ctx), ErrNetworkUnverified)
	assert.Contains(t, p.Status().Reason, ReasonCheckFail("chain id"))
}
