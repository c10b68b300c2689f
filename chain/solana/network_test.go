package solchain

import (
	"context"
	"encoding/json"
	"github.com/stakeflow/stakeflow/chain/rpcproof"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testnetGenesis = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"
	devnetGenesis  = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"
)

// rawRPCServer answers every request with status and body.
func rawRPCServer(t *testing.T, status int, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// cluster is an RPC whose genesis hash and health a test changes while it runs: getGenesisHash
// answers the current genesis, getBlockHeight 7; while down every request gets HTTP 502. It
// counts requests by method.
type cluster struct {
	mu      sync.Mutex
	genesis string
	down    bool
	rpcErr  bool // answer getBlockHeight with a JSON-RPC error
	calls   map[string]int
	// onGenesis, when set, runs before getGenesisHash is answered.
	onGenesis func()
}

func newCluster(t *testing.T, genesis string) (*cluster, *httptest.Server) {
	t.Helper()
	c := &cluster{genesis: genesis, calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(body, &req))
		c.mu.Lock()
		c.calls[req.Method]++
		down, genesis, rpcErr, hook := c.down, c.genesis, c.rpcErr, c.onGenesis
		c.mu.Unlock()
		if req.Method == "getGenesisHash" && hook != nil {
			hook()
		}
		if down {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "bad gateway")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case req.Method == "getGenesisHash":
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":"`+genesis+`","id":`+string(req.ID)+`}`)
		case rpcErr:
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is behind"},"id":`+string(req.ID)+`}`)
		default:
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":7,"id":`+string(req.ID)+`}`)
		}
	}))
	t.Cleanup(srv.Close)
	return c, srv
}

func (c *cluster) set(f func(c *cluster)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

func (c *cluster) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[method]
}

// clock is a manual clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestNetworkRefusesUntilProven(t *testing.T) {
	cl, srv := newCluster(t, devnetGenesis)
	clk := &clock{now: time.Unix(1000, 0)}
	n := NewNetwork("testnet", testnetGenesis, New(srv.URL), NetworkOptions{Retry: time.Minute, Now: clk.Now})

	err := n.Verified()
	var ue *rpcproof.UnverifiedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, ReasonUnchecked, ue.Reason)

	// The first read checks inline and finds another network: refused, and the read never sent.
	_, err = n.BlockHeight(ctx)
	require.ErrorAs(t, err, &ue)
	require.ErrorIs(t, err, ErrNetworkUnverified)
	assert.False(t, IsTransient(err), "a refusal is not an RPC failure")
	for _, want := range []string{"solana network testnet", "expected genesis hash " + testnetGenesis, "served " + devnetGenesis, "mismatch"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Equal(t, 0, cl.count("getBlockHeight"))
	assert.Equal(t, 1, cl.count("getGenesisHash"))

	// Within Retry a read does not check again.
	_, err = n.SignatureStatus(ctx, testSig)
	require.ErrorIs(t, err, ErrNetworkUnverified)
	assert.Equal(t, 1, cl.count("getGenesisHash"))
	assert.Equal(t, 0, cl.count("getSignatureStatuses"))

	// The RPC is repointed at the right network: after Retry the next read checks and passes.
	cl.set(func(c *cluster) { c.genesis = testnetGenesis })
	clk.advance(time.Minute)
	h, err := n.BlockHeight(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(7), h)
	assert.Equal(t, 2, cl.count("getGenesisHash"))
	assert.Equal(t, NetworkStatus{Network: "testnet", Expected: testnetGenesis, Served: testnetGenesis, Verified: true, CheckedAt: clk.Now()}, n.Status())

	// Proven: reads pass without checking again.
	_, err = n.BlockHeight(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, cl.count("getGenesisHash"))
}

func TestNetworkFailureWithdrawsProof(t *testing.T) {
	cl, srv := newCluster(t, testnetGenesis)
	clk := &clock{now: time.Unix(1000, 0)}
	var mu sync.Mutex
	var changes []NetworkStatus
	n := NewNetwork("testnet", testnetGenesis, New(srv.URL), NetworkOptions{Retry: time.Minute, Now: clk.Now, OnChange: func(s NetworkStatus) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, s)
	}})
	require.NoError(t, n.Verify(ctx))

	// A JSON-RPC error comes from a node that answered: the proof stands.
	cl.set(func(c *cluster) { c.rpcErr = true })
	_, err := n.BlockHeight(ctx)
	require.Error(t, err)
	require.NoError(t, n.Verified())

	// The RPC goes away: the failed read is reported as such, and the proof is withdrawn.
	cl.set(func(c *cluster) { c.rpcErr, c.down = false, true })
	_, err = n.BlockHeight(ctx)
	require.Error(t, err)
	assert.True(t, IsTransient(err))
	assert.NotErrorIs(t, err, ErrNetworkUnverified)
	require.ErrorIs(t, n.Verified(), ErrNetworkUnverified)
	assert.Contains(t, n.Verified().Error(), ReasonRPCFailed)

	// It comes back: nothing is read from it before its genesis hash is read again.
	cl.set(func(c *cluster) { c.down = false })
	heights := cl.count("getBlockHeight")
	clk.advance(time.Minute)
	_, err = n.BlockHeight(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, cl.count("getGenesisHash"))
	assert.Equal(t, heights+1, cl.count("getBlockHeight"))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, changes, 3)
	assert.True(t, changes[0].Verified)
	assert.False(t, changes[1].Verified)
	assert.True(t, changes[2].Verified)
}

// TestNetworkFailureDuringCheck: a read that fails while the genesis hash is being read voids
// that check's answer, which may have come from before the failure.
func TestNetworkFailureDuringCheck(t *testing.T) {
	cl, srv := newCluster(t, testnetGenesis)
	n := NewNetwork("testnet", testnetGenesis, New(srv.URL), NetworkOptions{Retry: time.Hour})
	cl.set(func(c *cluster) {
		c.onGenesis = func() { n.observe(ctx, &RPCError{Method: "getBlockHeight", Transient: true, Err: io.ErrUnexpectedEOF}) }
	})
	err := n.Verify(ctx)
	require.ErrorIs(t, err, ErrNetworkUnverified)
	assert.Contains(t, err.Error(), ReasonRPCFailed)
	cl.set(func(c *cluster) { c.onGenesis = nil })
	require.NoError(t, n.Verify(ctx))
}

func TestNetworkRunRechecksAfterOutage(t *testing.T) {
	cl, srv := newCluster(t, testnetGenesis)
	n := NewNetwork("testnet", testnetGenesis, New(srv.URL), NetworkOptions{Recheck: time.Hour, Retry: 5 * time.Millisecond})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); n.Run(rctx) }()
	t.Cleanup(func() { cancel(); <-done })

	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.NoError(c, n.Verified()) }, 10*time.Second, time.Millisecond)
	cl.set(func(c *cluster) { c.down = true })
	_, err := n.BlockHeight(ctx)
	require.Error(t, err)
	// Down: Run keeps checking, and the network stays unproven.
	checks := cl.count("getGenesisHash")
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Greater(c, cl.count("getGenesisHash"), checks+1) }, 10*time.Second, time.Millisecond)
	require.ErrorIs(t, n.Verified(), ErrNetworkUnverified)
	// Back, but serving another network: still refused, now as a mismatch.
	cl.set(func(c *cluster) { c.down, c.genesis = false, devnetGenesis })
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, devnetGenesis, n.Status().Served) }, 10*time.Second, time.Millisecond)
	assert.Contains(t, n.Verified().Error(), ReasonMismatch)
	// Back on the right network: proven again by Run alone.
	cl.set(func(c *cluster) { c.genesis = testnetGenesis })
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.NoError(c, n.Verified()) }, 10*time.Second, time.Millisecond)
}

// TestNetworkReportsEachChangeOnce: OnChange hears of a status once, however often a check finds
// it again.
func TestNetworkReportsEachChangeOnce(t *testing.T) {
	_, srv := newCluster(t, testnetGenesis)
	var mu sync.Mutex
	var changes []NetworkStatus
	n := NewNetwork("testnet", testnetGenesis, New(srv.URL), NetworkOptions{OnChange: func(s NetworkStatus) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, s)
	}})
	for i := 0; i < 3; i++ {
		require.NoError(t, n.Verify(ctx))
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, changes, 1)
	assert.True(t, changes[0].Verified)
	assert.Equal(t, testnetGenesis, changes[0].Served)
}
