//go:build integration

package sandbox

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/apiclient"
)

func TestParseRatePolicy(t *testing.T) {
	cases := []struct {
		in      string
		want    []RateWindow
		wantErr bool
	}{
		{"", nil, false},
		{"100;w=1", []RateWindow{{100, time.Second}}, false},
		{"100;w=1, 1000;w=60", []RateWindow{{100, time.Second}, {1000, time.Minute}}, false},
		{"100", nil, true},
		{"0;w=1", nil, true},
		{"10;x=1", nil, true},
		{"10;w=0", nil, true},
		{"ten;w=1", nil, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseRatePolicy(c.in)
			if c.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestRateLimiterWindows checks fixed windows per key across several windows.
func TestRateLimiterWindows(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	ws, err := ParseRatePolicy("2;w=1,3;w=10")
	require.NoError(t, err)
	l := newRateLimiter(ws, clock.now)
	require.Nil(t, l.allow("a"))
	require.Nil(t, l.allow("a"))
	e := l.allow("a")
	require.NotNil(t, e, "the 1-second window is exhausted")
	assert.Equal(t, "2", e.Header.Get("RateLimit-Limit"))
	assert.Equal(t, "1", e.Header.Get("Retry-After"))
	assert.Equal(t, "2;w=1,3;w=10", e.Header.Get("RateLimit-Policy"))
	require.Nil(t, l.allow("b"), "keys are counted apart")
	clock.add(time.Second)
	require.Nil(t, l.allow("a"), "a new 1-second window")
	e = l.allow("a")
	require.NotNil(t, e, "the 10-second window is exhausted")
	assert.Equal(t, "3", e.Header.Get("RateLimit-Limit"))
	assert.Equal(t, "9", e.Header.Get("Retry-After"))
	assert.Equal(t, "9", e.Header.Get("RateLimit-Reset"))
	clock.add(9 * time.Second)
	assert.Nil(t, l.allow("a"))
}

// newOfflineServer is an API server without a Solana runtime, enough for
// the endpoints that have no chain backing; its rate-limit windows run on
// clock.
func newOfflineServer(t *testing.T, policy string, clock *fakeClock) *httptest.Server {
	t.Helper()
	ws, err := ParseRatePolicy(policy)
	require.NoError(t, err)
	s := &server{log: zap.NewNop(), secret: newTokenSecret(testSecret), limiter: newRateLimiter(ws, clock.now),
		faults: newFaultInjector(FaultConfig{}), now: nowFunc, broadcasts: map[string]int{}}
	ts := httptest.NewServer(s.routes())
	t.Cleanup(ts.Close)
	return ts
}

// TestThrottlingThroughClient shows 429 ThrottlerException with its headers
// for a two-window policy, per token, at both address forms.
func TestThrottlingThroughClient(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	ts := newOfflineServer(t, "3;w=60,5;w=3600", clock)
	ctx := testCtx(t)
	tok := mintToken(t, "throttled")
	a, err := apiclient.New(ts.URL, apiclient.WithToken(tok))
	require.NoError(t, err)
	b, err := apiclient.New(ts.URL+"/api", apiclient.WithToken(tok))
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		_, err := []*apiclient.Client{a, b}[i%2].NetworkAPY(ctx, "kusama", apiclient.NetworkAPYQuery{Limit: 1})
		require.NoError(t, err, "request %d", i)
	}
	clock.add(15 * time.Second)
	_, err = b.NetworkAPY(ctx, "kusama", apiclient.NetworkAPYQuery{Limit: 1})
	require.True(t, apiclient.IsThrottled(err), "%v", err)
	var apiErr *apiclient.APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
	assert.Equal(t, nameThrottler, apiErr.Name)
	assert.Equal(t, nameThrottler, apiErr.Message)
	require.NotNil(t, apiErr.RateLimit)
	assert.Equal(t, 3, apiErr.RateLimit.Limit)
	assert.True(t, apiErr.RateLimit.HasRetryAfter)
	assert.Equal(t, 45*time.Second, apiErr.RateLimit.RetryAfter, "the minute window opened 15 s ago")
	assert.Equal(t, 45*time.Second, apiErr.RateLimit.Reset)
	assert.Equal(t, []apiclient.RateLimitWindow{{Limit: 3, Window: time.Minute}, {Limit: 5, Window: time.Hour}}, apiErr.RateLimit.Policy)
	d, ok := apiclient.RetryAfterOf(err)
	assert.True(t, ok)
	assert.Equal(t, 45*time.Second, d)

	other := client(t, ts.URL, "someone-else")
	_, err = other.NetworkAPY(ctx, "kusama", apiclient.NetworkAPYQuery{Limit: 1})
	require.NoError(t, err, "another token has its own quota")

	r := do(t, http.MethodGet, ts.URL+"/api/v1/kusama/data/network/apy", tok, nil)
	e := requireErrorEnvelope(t, r, http.StatusTooManyRequests, nameThrottler, codeThrottler, typeClient)
	assert.Equal(t, nameThrottler, e["message"])
}

// TestThrottlingWindowResets shows the quota held until the one-second
// window ends and back at its end, through the HTTP API.
func TestThrottlingWindowResets(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	ts := newOfflineServer(t, "1;w=1", clock)
	cl := client(t, ts.URL, "resets")
	ctx := testCtx(t)
	_, err := cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	require.NoError(t, err)
	_, err = cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	require.True(t, apiclient.IsThrottled(err), "%v", err)
	clock.add(999 * time.Millisecond)
	_, err = cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	require.True(t, apiclient.IsThrottled(err), "the window is not over 1 ms before its end: %v", err)
	clock.add(time.Millisecond)
	_, err = cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	require.NoError(t, err, "a new window at its end")
}
