package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// fixedServer answers every request with status, headers and body, counting
// the requests it got.
func fixedServer(t *testing.T, status int, header map[string]string, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		for k, v := range header {
			w.Header().Add(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func newTestClient(t *testing.T, base string, opts ...Option) *Client {
	t.Helper()
	c, err := New(base, append([]Option{WithToken(testToken)}, opts...)...)
	require.NoError(t, err)
	return c
}

func errorBody(name string, code any, typ, message, errs string) string {
	codeJSON := fmt.Sprint(code)
	if s, ok := code.(string); ok {
		codeJSON = strconv.Quote(s)
	}
	obj := `{"type":"` + typ + `","code":` + codeJSON + `,"message":"` + message + `"`
	if name != "" {
		obj += `,"name":"` + name + `"`
	}
	if errs != "" {
		obj += `,"errors":` + errs
	}
	obj += "}"
	return `{"error":` + obj + `,"result":null,"requestId":"env-req-1","timestamp":"2026-11-22T00:20:00.000Z"}`
}

var predicates = map[string]func(error) bool{
	"IsValidation":              IsValidation,
	"IsInvalidDelegatorAddress": IsInvalidDelegatorAddress,
	"IsNetworkNotSupported":     IsNetworkNotSupported,
	"IsNoToken":                 IsNoToken,
	"IsWrongToken":              IsWrongToken,
	"IsThrottled":               IsThrottled,
	"IsDelegatorDataFailure":    IsDelegatorDataFailure,
}

// TestErrorTable sends every row of the service's error table (both code forms
// of the two disputed codes, and code-only errors) and checks the decoded
// error, the one predicate that must match, and retryability.
func TestErrorTable(t *testing.T) {
	validationErrs := `[{"property":"limit","constraints":{"max":"limit must not be greater than 1000","isInt":"limit must be an integer"}}]`
	tests := []struct {
		name      string
		status    int
		body      string
		wantName  string
		wantCode  int32
		wantType  string
		predicate string
		retryable bool
		wantErrs  []ValidationError
	}{
		{"validation", 400, errorBody(NameValidation, 100101, "client", "Validation failed", validationErrs),
			NameValidation, 100101, "client", "IsValidation", false,
			[]ValidationError{{Property: "limit", Constraints: map[string]string{"max": "limit must not be greater than 1000", "isInt": "limit must be an integer"}}}},
		{"invalid delegator address, schema code", 400, errorBody(NameInvalidDelegatorAddr, 115400, "client", "Invalid delegator address", ""),
			NameInvalidDelegatorAddr, 115400, "client", "IsInvalidDelegatorAddress", false, nil},
		{"invalid delegator address, example code", 400, errorBody(NameInvalidDelegatorAddr, 100101, "client", "Invalid delegator address", ""),
			NameInvalidDelegatorAddr, 100101, "client", "IsInvalidDelegatorAddress", false, nil},
		{"network not supported, schema code", 400, errorBody(NameNetworkNotSupported, 115101, "client", "Network is not supported. Supported networks: solana, ethereum, polkadot, kusama, cosmoshub, polygon, sui, ton, cardano, tonwhales, celestia", ""),
			NameNetworkNotSupported, 115101, "client", "IsNetworkNotSupported", false, nil},
		{"network not supported, example code", 400, errorBody(NameNetworkNotSupported, 100101, "client", "Network is not supported", ""),
			NameNetworkNotSupported, 100101, "client", "IsNetworkNotSupported", false, nil},
		{"no token", 401, errorBody(NameNoToken, 101111, "authentication", "No token", ""),
			NameNoToken, 101111, "authentication", "IsNoToken", false, nil},
		{"wrong token", 401, errorBody(NameWrongToken, 101109, "authentication", "Wrong token", ""),
			NameWrongToken, 101109, "authentication", "IsWrongToken", false, nil},
		{"throttled, errors null", 429, errorBody(NameThrottler, 100429, "client", NameThrottler, "null"),
			NameThrottler, 100429, "client", "IsThrottled", true, nil},
		{"throttled, errors array, placeholder code", 429, errorBody(NameThrottler, "<integer>", "client", NameThrottler, "[]"),
			NameThrottler, 0, "client", "IsThrottled", true, []ValidationError{}},
		{"delegator data failure", 500, errorBody(NameDelegatorDataFailure, 115406, "server", "Failed to get delegator data", ""),
			NameDelegatorDataFailure, 115406, "server", "IsDelegatorDataFailure", true, nil},
		{"code only: validation", 400, errorBody("", 100101, "client", "bad", ""), "", 100101, "client", "IsValidation", false, nil},
		{"code only: invalid delegator", 400, errorBody("", 115400, "client", "bad", ""), "", 115400, "client", "IsInvalidDelegatorAddress", false, nil},
		{"code only: network", 400, errorBody("", 115101, "client", "bad", ""), "", 115101, "client", "IsNetworkNotSupported", false, nil},
		{"code only: no token", 401, errorBody("", 101111, "authentication", "x", ""), "", 101111, "authentication", "IsNoToken", false, nil},
		{"code only: wrong token", 401, errorBody("", 101109, "authentication", "x", ""), "", 101109, "authentication", "IsWrongToken", false, nil},
		{"code only: delegator data", 500, errorBody("", 115406, "server", "x", ""), "", 115406, "server", "IsDelegatorDataFailure", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fixedServer(t, tt.status, map[string]string{"Content-Type": "application/json", "X-Request-Id": "hdr-req-1"}, tt.body)
			c := newTestClient(t, srv.URL)
			var info ResponseInfo
			_, err := c.DelegatorAPR(WithResponseInfo(context.Background(), &info), "ethereum", DelegatorAPRQuery{Address: ethAddr})
			require.Error(t, err)
			wrapped := fmt.Errorf("activity: %w", err)

			var apiErr *APIError
			require.ErrorAs(t, wrapped, &apiErr)
			assert.Equal(t, tt.status, apiErr.StatusCode)
			assert.Equal(t, tt.wantName, apiErr.Name)
			assert.Equal(t, tt.wantCode, apiErr.Code)
			assert.Equal(t, tt.wantType, apiErr.Type)
			assert.NotEmpty(t, apiErr.Message)
			assert.Equal(t, tt.wantErrs, apiErr.Errors)
			assert.Equal(t, "env-req-1", apiErr.RequestID, "envelope requestId")
			assert.Equal(t, "env-req-1", RequestIDOf(wrapped))
			assert.Equal(t, "hdr-req-1", info.RequestID, "x-request-id header")
			assert.Equal(t, tt.status, info.StatusCode)
			assert.Equal(t, time.Date(2026, 11, 22, 0, 20, 0, 0, time.UTC), apiErr.Timestamp)
			assert.Equal(t, http.MethodGet, apiErr.Method)
			assert.Equal(t, "/api/v1/ethereum/data/delegator/apr", apiErr.Path)
			assert.Equal(t, tt.retryable, apiErr.Retryable())
			assert.Equal(t, tt.retryable, IsRetryable(wrapped))

			for name, pred := range predicates {
				assert.Equal(t, name == tt.predicate, pred(wrapped), "%s(%v)", name, err)
			}

			msg := err.Error()
			assert.Contains(t, msg, strconv.Itoa(tt.status))
			assert.Contains(t, msg, tt.wantName)
			assert.Contains(t, msg, "code "+strconv.Itoa(int(tt.wantCode)))
			assert.NotContains(t, msg, testToken)
			if len(tt.wantErrs) > 0 {
				assert.Contains(t, msg, "limit: limit must be an integer, limit must not be greater than 1000")
			}
		})
	}
}

// TestRateLimitHeaders checks the 429 headers, several policy windows, and
// RetryAfter.
func TestRateLimitHeaders(t *testing.T) {
	srv, _ := fixedServer(t, 429, map[string]string{
		"Content-Type":     "application/json",
		"X-Request-Id":     "rl-1",
		"Retry-After":      "7",
		"RateLimit-Limit":  "100",
		"RateLimit-Reset":  "42",
		"RateLimit-Policy": "100;w=60, 1000;w=3600,10000;w=86400;comment=\"day\"",
	}, errorBody(NameThrottler, 0, "client", NameThrottler, "null"))
	c := newTestClient(t, srv.URL)
	var info ResponseInfo
	_, err := c.TONTransactionStatus(WithResponseInfo(context.Background(), &info), "testnet", "abc")
	require.Error(t, err)

	want := &RateLimit{
		RetryAfter: 7 * time.Second, HasRetryAfter: true,
		Limit: 100,
		Reset: 42 * time.Second, HasReset: true,
		Policy: []RateLimitWindow{
			{Limit: 100, Window: time.Minute},
			{Limit: 1000, Window: time.Hour},
			{Limit: 10000, Window: 24 * time.Hour},
		},
	}
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, want, apiErr.RateLimit)
	assert.Equal(t, want, info.RateLimit)
	assert.True(t, IsThrottled(err))
	assert.True(t, apiErr.Retryable())
	d, ok := apiErr.RetryAfter()
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)
	d, ok = RetryAfterOf(fmt.Errorf("wrapped: %w", err))
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)
}

func TestParseRateLimit(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   *RateLimit
	}{
		{"none", http.Header{}, nil},
		{"reset only", http.Header{"Ratelimit-Reset": {"30"}}, &RateLimit{Reset: 30 * time.Second, HasReset: true}},
		{"retry-after as HTTP date", http.Header{"Retry-After": {"Sun, 22 Nov 2026 00:00:09 GMT"}}, &RateLimit{RetryAfter: 9 * time.Second, HasRetryAfter: true}},
		{"garbage values kept as present but unset", http.Header{"Retry-After": {"soon"}, "Ratelimit-Limit": {"x"}}, &RateLimit{}},
		{"policy in two header lines, bad entries skipped", http.Header{"Ratelimit-Policy": {"5;w=1, bad, 7;q=2", "9;w=10"}},
			&RateLimit{Policy: []RateLimitWindow{{5, time.Second}, {9, 10 * time.Second}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, parseRateLimit(tt.header, now))
		})
	}
}

// TestRetryAfterFallsBackToReset: a 429 without Retry-After uses RateLimit-Reset.
func TestRetryAfterFallsBackToReset(t *testing.T) {
	e := &APIError{StatusCode: 429, RateLimit: &RateLimit{Reset: 5 * time.Second, HasReset: true}}
	d, ok := e.RetryAfter()
	assert.True(t, ok)
	assert.Equal(t, 5*time.Second, d)
	_, ok = (&APIError{StatusCode: 400}).RetryAfter()
	assert.False(t, ok)
}

// TestUnexpectedBodies: bodies that are not the envelope keep the status and
// an excerpt; 5xx and 429 ones are retryable.
func TestUnexpectedBodies(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		excerpt     string
		retryable   bool
	}{
		{"HTML 502 from a proxy", 502, "text/html", "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", true},
		{"empty 503", 503, "", "", "", true},
		{"empty 200", 200, "application/json", "", "", false},
		{"truncated JSON 200", 200, "application/json", `{"error":null,"result":{"status":"succ`, `{"error":null,"result":{"status":"succ`, false},
		{"garbage 200", 200, "text/plain", "OK", "OK", false},
		{"JSON array 200", 200, "application/json", `[1,2]`, `[1,2]`, false},
		{"success envelope without result", 200, "application/json", `{"error":null}`, `{"error":null}`, false},
		{"null result", 200, "application/json", `{"error":null,"result":null}`, `{"error":null,"result":null}`, false},
		{"result of the wrong type", 200, "application/json", `{"error":null,"result":{"blockId":"x"}}`, `{"error":null,"result":{"blockId":"x"}}`, false},
		{"error field not an object", 400, "application/json", `{"error":"bad","result":null}`, `{"error":"bad","result":null}`, false},
		{"500 JSON without error object", 500, "application/json", `{"message":"Internal server error"}`, `{"message":"Internal server error"}`, true},
		{"429 plain text", 429, "text/plain", "Too Many Requests\n", "Too Many Requests ", true},
		{"binary", 500, "application/octet-stream", "\x00\x01\xff", "\uFFFD\uFFFD\uFFFD", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fixedServer(t, tt.status, map[string]string{"Content-Type": tt.contentType, "X-Request-Id": "u-1"}, tt.body)
			c := newTestClient(t, srv.URL)
			_, err := c.CelestiaSend(context.Background(), "celestia-mainnet-beta", CelestiaSendRequest{SignedTransaction: hexTx})
			var u *UnexpectedResponseError
			require.ErrorAs(t, err, &u)
			assert.Equal(t, tt.status, u.StatusCode)
			assert.Equal(t, tt.excerpt, u.Excerpt)
			assert.Equal(t, tt.contentType, u.ContentType)
			assert.Equal(t, "u-1", u.RequestID)
			assert.Equal(t, tt.retryable, u.Retryable())
			assert.Equal(t, tt.retryable, IsRetryable(err))
			assert.Equal(t, "u-1", RequestIDOf(err))
			assert.Contains(t, err.Error(), "status "+strconv.Itoa(tt.status))
			assert.Equal(t, tt.status == 429, IsThrottled(err))
		})
	}
}

// TestExcerptIsShort: a long body is cut to 200 bytes in the error.
func TestExcerptIsShort(t *testing.T) {
	srv, _ := fixedServer(t, 502, nil, strings.Repeat("x", 5000))
	c := newTestClient(t, srv.URL)
	_, err := c.SSVRequests(context.Background(), SSVRequestsQuery{})
	var u *UnexpectedResponseError
	require.ErrorAs(t, err, &u)
	assert.Len(t, u.Excerpt, 200)
}

// TestTransportErrors: network failures are *TransportError wrapping the
// cause; the caller's cancellation is not retryable, a refused connection is.
func TestTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	c := newTestClient(t, base)
	_, err := c.SSVRequests(context.Background(), SSVRequestsQuery{})
	var te *TransportError
	require.ErrorAs(t, err, &te)
	assert.True(t, IsRetryable(err))
	assert.NotContains(t, err.Error(), testToken)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.SSVRequests(ctx, SSVRequestsQuery{})
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, IsRetryable(err))
}

// TestTimeout: WithTimeout bounds a request the server never answers.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := newTestClient(t, srv.URL, WithTimeout(50*time.Millisecond))
	_, err := c.SSVRequests(context.Background(), SSVRequestsQuery{})
	var te *TransportError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, IsRetryable(err))
}

// TestMissingToken: without a token every call fails with ErrNoToken and
// nothing reaches the server.
func TestMissingToken(t *testing.T) {
	srv, hits := fixedServer(t, 200, nil, `{"error":null,"result":{}}`)
	c, err := New(srv.URL)
	require.NoError(t, err)
	for _, tc := range endpointCases() {
		_, err := tc.call(context.Background(), c)
		assert.ErrorIs(t, err, ErrNoToken, tc.name)
		assert.True(t, IsNoToken(err), tc.name)
	}
	assert.Zero(t, hits.Load(), "no request may be sent without a token")

	c, err = New(srv.URL, WithToken("   "))
	require.NoError(t, err)
	_, err = c.SSVRequests(context.Background(), SSVRequestsQuery{})
	assert.ErrorIs(t, err, ErrNoToken)
	assert.Zero(t, hits.Load())
}

// TestTokenFile: the token file is read at New and trimmed; an empty file is
// ErrNoToken; a missing file names the path.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/token"
	require.NoError(t, writeFile(good, "\n  "+testToken+" \n"))
	empty := dir + "/empty"
	require.NoError(t, writeFile(empty, " \n"))

	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		_, _ = w.Write([]byte(`{"error":null,"result":{"limit":50,"offset":0,"totalCount":0,"list":[]}}`))
	}))
	t.Cleanup(srv.Close)

	c, err := New(srv.URL, WithToken("ignored"), WithTokenFile(good))
	require.NoError(t, err)
	_, err = c.SSVRequests(context.Background(), SSVRequestsQuery{})
	require.NoError(t, err)
	assert.Equal(t, "Bearer "+testToken, <-got)

	_, err = New(srv.URL, WithTokenFile(empty))
	assert.ErrorIs(t, err, ErrNoToken)

	_, err = New(srv.URL, WithTokenFile(dir+"/absent"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir+"/absent")

	_, err = New(srv.URL, WithToken("two words"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "two words")
}

// TestTokenNeverLeaks drives successes and every kind of failure, with a
// server that echoes the Authorization header back in its bodies, and checks
// that the token appears in no error string and no log entry.
func TestTokenNeverLeaks(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	logger := zap.New(core)

	mode := atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch mode.Load() {
		case 0:
			_, _ = w.Write([]byte(`{"error":null,"result":{"limit":50,"offset":0,"totalCount":0,"list":[]}}`))
		case 1:
			w.WriteHeader(401)
			_, _ = w.Write([]byte(errorBody(NameWrongToken, 101109, "authentication", "bad token "+auth, "")))
		case 2:
			w.WriteHeader(502)
			_, _ = w.Write([]byte("<html>upstream refused " + auth + "</html>"))
		case 3:
			w.WriteHeader(400)
			_, _ = w.Write([]byte(errorBody(NameValidation, 100101, "client", "x", `[{"property":"`+auth+`","constraints":{"c":"`+auth+`"}}]`)))
		}
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, WithLogger(logger))

	var errs []error
	for m := range int32(4) {
		mode.Store(m)
		_, err := c.SSVRequests(context.Background(), SSVRequestsQuery{})
		errs = append(errs, err)
	}
	deadSrv := httptest.NewServer(http.NotFoundHandler())
	deadSrv.Close()
	dead := newTestClient(t, deadSrv.URL, WithLogger(logger))
	_, err := dead.SSVRequests(context.Background(), SSVRequestsQuery{})
	errs = append(errs, err)

	require.NoError(t, errs[0])
	for _, err := range errs[1:] {
		require.Error(t, err)
		assert.NotContains(t, err.Error(), testToken)
		assert.NotContains(t, fmt.Sprintf("%+v", err), testToken)
	}
	assert.Contains(t, errs[2].Error(), "upstream refused Bearer "+redacted)

	require.NotZero(t, logs.Len(), "requests are logged at debug level")
	for _, e := range logs.All() {
		assert.NotContains(t, e.Message, testToken)
		for k, v := range e.ContextMap() {
			assert.NotContains(t, fmt.Sprint(v), testToken, "log field %s", k)
		}
	}
}

// TestDefaultLoggerIsNop: a client built without WithLogger logs nothing and
// does not fail.
func TestDefaultLoggerIsNop(t *testing.T) {
	c := newTestClient(t, "http://127.0.0.1:1")
	for _, lvl := range []zapcore.Level{zapcore.DebugLevel, zapcore.ErrorLevel} {
		assert.False(t, c.log.Core().Enabled(lvl), "default logger must be a no-op")
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

func TestPredicatesOnOtherErrors(t *testing.T) {
	plain := errors.New("boom")
	for name, pred := range predicates {
		assert.False(t, pred(plain), name)
		assert.False(t, pred(nil), name)
	}
	assert.False(t, IsRetryable(plain))
	assert.Empty(t, RequestIDOf(plain))
	_, ok := RetryAfterOf(plain)
	assert.False(t, ok)
}
