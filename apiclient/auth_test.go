package apiclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

const (
	tokenA = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyb3RhdGlvbi1hIn0.c2lnbmF0dXJlLWFhYWFhYWFh"
	tokenB = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyb3RhdGlvbi1iIn0.c2lnbmF0dXJlLWJiYmJiYmJi"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// writeToken replaces the token file atomically, as a secret mount does.
func writeToken(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// seen is one request as the auth server got it.
type seen struct {
	method, uri, token string
	body               []byte
	status             int
}

// authServer accepts the bearer tokens it is told to, answering others with
// the service's 401 WrongTokenException envelope, and records every request.
type authServer struct {
	t        *testing.T
	mu       sync.Mutex
	accepted map[string]bool
	requests []seen
	// refuse, when set, writes the refusal instead of the default envelope.
	refuse func(w http.ResponseWriter, token string)
	// okBody is the success body; a unified broadcast result unless set.
	okBody string
}

func newAuthServer(t *testing.T, accepted ...string) (*authServer, *httptest.Server) {
	s := &authServer{t: t, accepted: map[string]bool{}}
	s.accept(accepted...)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *authServer) accept(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.accepted)
	for _, tok := range tokens {
		s.accepted[tok] = true
	}
}

func (s *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	assert.NoError(s.t, err)
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	ok := s.accepted[token]
	refuse, okBody := s.refuse, s.okBody
	status := http.StatusOK
	if !ok {
		status = http.StatusUnauthorized
	}
	s.requests = append(s.requests, seen{method: r.Method, uri: r.URL.RequestURI(), token: token, body: body, status: status})
	s.mu.Unlock()
	w.Header().Set("X-Request-Id", fmt.Sprintf("req-%p", r))
	if !ok {
		if refuse != nil {
			refuse(w, token)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(errorBody(NameWrongToken, CodeWrongToken, ErrorTypeAuthentication, "Wrong token", "")))
		return
	}
	if okBody == "" {
		okBody = `{"error":null,"result":{"extraData":{"transactionId":"sig","slot":7,"signerAccounts":[],"createdAt":"2026-11-22T00:14:00Z"}}}`
	}
	_, _ = w.Write([]byte(okBody))
}

func (s *authServer) seen() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *authServer) tokens() []string {
	var out []string
	for _, r := range s.seen() {
		out = append(out, r.token)
	}
	return out
}

var broadcastReq = BroadcastRequest{Chain: ChainSolana, Network: "testnet", StakerAddress: staker, SignedTransaction: base64Tx}

// fileClient builds a client reading its token from a file holding tokenA,
// with a hand-moved clock and an observed logger.
func fileClient(t *testing.T, base string, opts ...Option) (*Client, string, *fakeClock, *observer.ObservedLogs) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	writeToken(t, path, tokenA+"\n")
	clk := newFakeClock()
	core, logs := observer.New(zapcore.DebugLevel)
	c, err := New(base, append([]Option{WithTokenFile(path), withClock(clk.Now), WithLogger(zap.New(core))}, opts...)...)
	require.NoError(t, err)
	return c, path, clk, logs
}

// assertNoTokenLogged checks that no log entry holds either token.
func assertNoTokenLogged(t *testing.T, logs *observer.ObservedLogs) {
	t.Helper()
	for _, e := range logs.All() {
		for _, tok := range []string{tokenA, tokenB} {
			assert.NotContains(t, e.Message, tok)
			for k, v := range e.ContextMap() {
				assert.NotContains(t, fmt.Sprint(v), tok, "log field %s", k)
			}
		}
	}
}

func logged(logs *observer.ObservedLogs, level zapcore.Level, message string) []observer.LoggedEntry {
	return logs.FilterLevelExact(level).FilterMessageSnippet(message).All()
}

// TestTokenRotatedAfter401: the service refuses the token, the file now
// holds a new one, and the same request (method, query, body bytes) goes
// out once more with it and succeeds.
func TestTokenRotatedAfter401(t *testing.T) {
	calls := []struct {
		name string
		call func(c *Client) error
	}{
		{"POST broadcast", func(c *Client) error {
			res, err := c.Broadcast(context.Background(), broadcastReq)
			if err == nil {
				assert.Equal(t, uint64(7), res.ExtraData.Slot)
			}
			return err
		}},
		{"GET with query", func(c *Client) error {
			_, err := c.SolanaValidatorStatus(context.Background(), "testnet", []string{vote, staker})
			return err
		}},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newAuthServer(t, tokenB)
			s.okBody = `{"error":null,"result":{"extraData":{"transactionId":"sig","slot":7,"signerAccounts":[],"createdAt":"2026-11-22T00:14:00Z"},"statuses":"active,active"}}`
			c, path, _, logs := fileClient(t, srv.URL)
			writeToken(t, path, tokenB)

			require.NoError(t, tc.call(c))

			got := s.seen()
			require.Len(t, got, 2, "one refusal, one retry")
			assert.Equal(t, tokenA, got[0].token)
			assert.Equal(t, http.StatusUnauthorized, got[0].status)
			assert.Equal(t, tokenB, got[1].token)
			assert.Equal(t, http.StatusOK, got[1].status)
			assert.Equal(t, got[0].method, got[1].method)
			assert.Equal(t, got[0].uri, got[1].uri)
			assert.Equal(t, got[0].body, got[1].body, "the same body bytes")
			if got[0].method == http.MethodPost {
				assert.Contains(t, string(got[1].body), base64Tx, "the same signed bytes")
			}
			assert.True(t, c.AuthHealthy())
			assert.True(t, c.AuthFailingSince().IsZero())
			assert.Len(t, logged(logs, zapcore.InfoLevel, "token reloaded from file"), 1)
			assert.Len(t, logged(logs, zapcore.InfoLevel, "sending the request again"), 1)
			assertNoTokenLogged(t, logs)

			// The new token is kept for the next request.
			require.NoError(t, tc.call(c))
			assert.Equal(t, []string{tokenA, tokenB, tokenB}, s.tokens())
		})
	}
}

// TestTokenRefusedFileUnchanged: a 401 with the file unchanged is returned
// at once (one request, no loop), marks auth unhealthy from that moment on,
// and the next accepted request clears it.
func TestTokenRefusedFileUnchanged(t *testing.T) {
	s, srv := newAuthServer(t)
	c, _, clk, logs := fileClient(t, srv.URL)
	start := clk.Now()
	assert.True(t, c.AuthHealthy(), "healthy until refused")

	_, err := c.Broadcast(context.Background(), broadcastReq)
	require.Error(t, err)
	assert.True(t, IsWrongToken(err))
	assert.False(t, IsRetryable(err))
	assert.NotContains(t, err.Error(), tokenA)
	assert.Equal(t, []string{tokenA}, s.tokens(), "no retry with the same token")
	assert.False(t, c.AuthHealthy())
	assert.Equal(t, start, c.AuthFailingSince())

	clk.Advance(10 * time.Second)
	_, err = c.Broadcast(context.Background(), broadcastReq)
	require.Error(t, err)
	assert.Equal(t, []string{tokenA, tokenA}, s.tokens(), "one request per call")
	assert.False(t, c.AuthHealthy())
	assert.Equal(t, start, c.AuthFailingSince(), "the run of refusals began at the first")
	assert.Len(t, logged(logs, zapcore.WarnLevel, "refuses the token"), 1, "the change is logged once")

	// The service accepts the token again (it was reinstated): recovered.
	s.accept(tokenA)
	clk.Advance(10 * time.Second)
	_, err = c.Broadcast(context.Background(), broadcastReq)
	require.NoError(t, err)
	assert.True(t, c.AuthHealthy())
	assert.True(t, c.AuthFailingSince().IsZero())
	assert.Len(t, logged(logs, zapcore.InfoLevel, "accepts the token again"), 1)
	assertNoTokenLogged(t, logs)
}

// TestTokenRotatedButRefusedToo: the reloaded token is refused as well: two
// requests, then the error; the next call sends the new token once.
func TestTokenRotatedButRefusedToo(t *testing.T) {
	s, srv := newAuthServer(t)
	c, path, _, _ := fileClient(t, srv.URL)
	writeToken(t, path, tokenB)
	_, err := c.Broadcast(context.Background(), broadcastReq)
	require.Error(t, err)
	assert.True(t, IsWrongToken(err))
	assert.Equal(t, []string{tokenA, tokenB}, s.tokens())
	assert.False(t, c.AuthHealthy())

	_, err = c.Broadcast(context.Background(), broadcastReq)
	require.Error(t, err)
	assert.Equal(t, []string{tokenA, tokenB, tokenB}, s.tokens())
	assert.False(t, c.AuthHealthy())
}

// TestNon401KeepsToken: only a 401 makes the client read the file out of
// turn; other refusals are returned as they are.
func TestNon401KeepsToken(t *testing.T) {
	for _, status := range []int{http.StatusForbidden, http.StatusBadRequest, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s, srv := newAuthServer(t)
			s.refuse = func(w http.ResponseWriter, _ string) {
				w.WriteHeader(status)
				_, _ = w.Write([]byte(errorBody("SomeException", 1, "client", "no", "")))
			}
			c, path, _, _ := fileClient(t, srv.URL)
			writeToken(t, path, tokenB)
			_, err := c.Broadcast(context.Background(), broadcastReq)
			require.Error(t, err)
			assert.Equal(t, []string{tokenA}, s.tokens())
			assert.True(t, c.AuthHealthy(), "not a 401")
		})
	}
}

// TestTokenReloadedPeriodically: a request reads the file again once the
// last read is older than the interval, so a rotated token is used without
// any 401; with the interval at 0 only a 401 makes it read the file.
func TestTokenReloadedPeriodically(t *testing.T) {
	s, srv := newAuthServer(t, tokenA, tokenB)
	c, path, clk, logs := fileClient(t, srv.URL, WithTokenReloadInterval(30*time.Second))
	_, err := c.Broadcast(context.Background(), broadcastReq)
	require.NoError(t, err)

	writeToken(t, path, tokenB)
	clk.Advance(29 * time.Second)
	_, err = c.Broadcast(context.Background(), broadcastReq)
	require.NoError(t, err)
	clk.Advance(time.Second)
	_, err = c.Broadcast(context.Background(), broadcastReq)
	require.NoError(t, err)
	assert.Equal(t, []string{tokenA, tokenA, tokenB}, s.tokens())
	for _, r := range s.seen() {
		assert.Equal(t, http.StatusOK, r.status, "no 401 was needed")
	}
	assert.Len(t, logged(logs, zapcore.InfoLevel, "token reloaded from file"), 1)

	// The default interval is a minute.
	s2, srv2 := newAuthServer(t, tokenA, tokenB)
	d, path2, clk2, _ := fileClient(t, srv2.URL)
	writeToken(t, path2, tokenB)
	clk2.Advance(DefaultTokenReloadInterval - time.Nanosecond)
	_, err = d.Broadcast(context.Background(), broadcastReq)
	require.NoError(t, err)
	clk2.Advance(time.Nanosecond)
	_, err = d.Broadcast(context.Background(), broadcastReq)
	require.NoError(t, err)
	assert.Equal(t, []string{tokenA, tokenB}, s2.tokens())

	// Interval 0: no periodic read.
	s3, srv3 := newAuthServer(t, tokenA, tokenB)
	e, path3, clk3, _ := fileClient(t, srv3.URL, WithTokenReloadInterval(0))
	writeToken(t, path3, tokenB)
	clk3.Advance(24 * time.Hour)
	_, err = e.Broadcast(context.Background(), broadcastReq)
	require.NoError(t, err)
	assert.Equal(t, []string{tokenA}, s3.tokens())

	_, err = New(srv.URL, WithToken(tokenA), WithTokenReloadInterval(-time.Second))
	assert.ErrorContains(t, err, "negative")
}

// TestTokenReloadFailureKeepsToken: an empty, missing or malformed file at
// reload keeps the current token and is logged (path and error, never a
// token); a later good file is picked up.
func TestTokenReloadFailureKeepsToken(t *testing.T) {
	s, srv := newAuthServer(t, tokenA, tokenB)
	c, path, clk, logs := fileClient(t, srv.URL)
	breakFile := []struct {
		name, want string
		do         func()
	}{
		{"empty", "is empty", func() { writeToken(t, path, " \n") }},
		{"missing", "no such file", func() { require.NoError(t, os.Remove(path)) }},
		{"two tokens on two lines", "white space", func() { writeToken(t, path, tokenB+"\n"+tokenA+"\n") }},
	}
	for i, b := range breakFile {
		b.do()
		clk.Advance(DefaultTokenReloadInterval)
		_, err := c.Broadcast(context.Background(), broadcastReq)
		require.NoError(t, err, b.name)
		warns := logged(logs, zapcore.WarnLevel, "could not be reloaded")
		require.Len(t, warns, i+1, b.name)
		fields := warns[i].ContextMap()
		assert.Equal(t, path, fields["path"], b.name)
		assert.Contains(t, fields["error"], b.want, b.name)
	}
	assert.Equal(t, []string{tokenA, tokenA, tokenA}, s.tokens(), "the current token is kept")

	writeToken(t, path, tokenB)
	clk.Advance(DefaultTokenReloadInterval)
	_, err := c.Broadcast(context.Background(), broadcastReq)
	require.NoError(t, err)
	assert.Equal(t, tokenB, s.tokens()[3])
	assertNoTokenLogged(t, logs)

	// A 401 with an unreadable file: no retry, the refusal is returned.
	s.accept()
	require.NoError(t, os.Remove(path))
	_, err = c.Broadcast(context.Background(), broadcastReq)
	assert.True(t, IsWrongToken(err))
	assert.Len(t, s.seen(), 5)
	assert.False(t, c.AuthHealthy())
}

// TestReloadedTokenRedacted: a server that echoes the tokens it got, the old
// and the reloaded one, has both redacted from the error and the logs.
func TestReloadedTokenRedacted(t *testing.T) {
	s, srv := newAuthServer(t)
	s.refuse = func(w http.ResponseWriter, token string) {
		if token == tokenA {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(errorBody(NameWrongToken, CodeWrongToken, ErrorTypeAuthentication, "refused "+token, "")))
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>upstream saw " + tokenA + " then " + token + "</html>"))
	}
	c, path, _, logs := fileClient(t, srv.URL)
	writeToken(t, path, tokenB)
	_, err := c.Broadcast(context.Background(), broadcastReq)
	require.Error(t, err)
	assert.Equal(t, []string{tokenA, tokenB}, s.tokens())
	for _, tok := range []string{tokenA, tokenB} {
		assert.NotContains(t, err.Error(), tok)
		assert.NotContains(t, fmt.Sprintf("%+v", err), tok)
	}
	assert.Contains(t, err.Error(), "upstream saw "+redacted+" then "+redacted)
	assertNoTokenLogged(t, logs)

	// A transport failure echoing the reloaded token is redacted too.
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("proxy refused %s", r.Header.Get("Authorization"))
	})}
	d, path2, clk, _ := fileClient(t, srv.URL, WithHTTPClient(hc))
	writeToken(t, path2, tokenB)
	clk.Advance(DefaultTokenReloadInterval)
	_, err = d.Broadcast(context.Background(), broadcastReq)
	var te *TransportError
	require.ErrorAs(t, err, &te)
	assert.NotContains(t, err.Error(), tokenB)
	assert.Contains(t, err.Error(), "proxy refused Bearer "+redacted)
}

// TestAuthHealthFixedToken: with a fixed token the first 401 marks auth
// unhealthy; a call that gets no response leaves it so; any other response
// clears it.
func TestAuthHealthFixedToken(t *testing.T) {
	s, srv := newAuthServer(t)
	clk := newFakeClock()
	c := newTestClient(t, srv.URL, withClock(clk.Now))
	_, err := c.Broadcast(context.Background(), broadcastReq)
	require.Error(t, err)
	assert.Len(t, s.seen(), 1)
	assert.False(t, c.AuthHealthy())
	assert.Equal(t, clk.Now(), c.AuthFailingSince())

	// An argument error sends nothing and changes nothing.
	_, err = c.Broadcast(context.Background(), BroadcastRequest{})
	assert.True(t, IsArgument(err))
	assert.False(t, c.AuthHealthy())

	// Neither does a transport failure.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Broadcast(ctx, broadcastReq)
	var te *TransportError
	require.ErrorAs(t, err, &te)
	assert.False(t, c.AuthHealthy())

	// A response that is not a 401, even an error, clears it.
	s.refuse = func(w http.ResponseWriter, _ string) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(errorBody(NameValidation, CodeValidation, "client", "bad", "")))
	}
	_, err = c.Broadcast(context.Background(), broadcastReq)
	assert.True(t, IsValidation(err))
	assert.True(t, c.AuthHealthy())
	assert.True(t, c.AuthFailingSince().IsZero())
}

// TestTokenRotationConcurrent rotates the token in phases while many
// requests run at once (with -race): in each phase the service accepts only
// the phase's token, the file holds it, and the client still holds the last
// phase's. Every request succeeds, within two attempts, while the clock moves
// and readers poll the auth health.
func TestTokenRotationConcurrent(t *testing.T) {
	const (
		phases     = 4
		goroutines = 8
		perG       = 5
	)
	s, srv := newAuthServer(t)
	c, path, clk, logs := fileClient(t, srv.URL, WithTokenReloadInterval(time.Second))
	tokens := []string{tokenA}
	for p := 1; p <= phases; p++ {
		tokens = append(tokens, fmt.Sprintf("%s.phase%d", tokenB, p))
	}

	var calls atomic.Int32
	for p := 1; p <= phases; p++ {
		writeToken(t, path, tokens[p])
		s.accept(tokens[p])

		stop := make(chan struct{})
		var watchers sync.WaitGroup
		watchers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					_ = c.AuthHealthy()
					_ = c.AuthFailingSince()
					clk.Advance(100 * time.Millisecond)
				}
			}
		})
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range perG {
					calls.Add(1)
					_, err := c.Broadcast(context.Background(), broadcastReq)
					assert.NoError(t, err, "phase %d", p)
				}
			})
		}
		wg.Wait()
		close(stop)
		watchers.Wait()
		assert.True(t, c.AuthHealthy(), "phase %d", p)
	}

	got := s.seen()
	ok, refused := 0, 0
	for _, r := range got {
		if r.status == http.StatusOK {
			ok++
		} else {
			refused++
		}
	}
	assert.Equal(t, int(calls.Load()), ok, "every call succeeded once")
	assert.LessOrEqual(t, refused, int(calls.Load()), "at most one refusal per call")
	assertNoTokenLogged(t, logs)
}
