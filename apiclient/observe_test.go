package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// observedEndpoints names, for each case of endpointCases (by its fixture name), the Client
// method it calls and the endpoint label its calls must be observed under: the label names of
// metrics dashboards, written out here rather than taken from the code under test.
var observedEndpoints = map[string]struct{ method, label string }{
	"delegator_apr":                       {"DelegatorAPR", "delegator_apr"},
	"network_apy":                         {"NetworkAPY", "network_apy"},
	"celestia_send":                       {"CelestiaSend", "celestia_send"},
	"polygon_send":                        {"PolygonSend", "polygon_send"},
	"eigenlayer_verify_checkpoint_proofs": {"EigenLayerVerifyCheckpointProofs", "eigenlayer_verify_checkpoint_proofs"},
	"hyperliquid_withdraw":                {"HyperliquidWithdraw", "hyperliquid_withdraw"},
	"solana_validator_status":             {"SolanaValidatorStatus", "validator_status"},
	"ssv_requests":                        {"SSVRequests", "ssv_requests"},
	"ton_transaction_status":              {"TONTransactionStatus", "ton_transaction_status"},
	"stake":                               {"Stake", "stake"},
	"unstake":                             {"Unstake", "unstake"},
	"withdraw":                            {"Withdraw", "withdraw"},
	"broadcast":                           {"Broadcast", "broadcast"},
}

// notCalls are the Client's exported methods that are not one call to the service: the
// iterators make calls through the methods above, the others read the client's state.
var notCalls = []string{"AuthHealthy", "AuthFailingSince", "DelegatorAPRAll", "NetworkAPYAll", "SSVRequestsAll"}

// callRecorder is an Observer that keeps every call with the context it came with.
type callRecorder struct {
	mu    sync.Mutex
	calls []Call
	ctxs  []context.Context
}

func (r *callRecorder) observe(ctx context.Context, c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	r.ctxs = append(r.ctxs, ctx)
}

func (r *callRecorder) take() ([]Call, []context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, ctxs := r.calls, r.ctxs
	r.calls, r.ctxs = nil, nil
	return calls, ctxs
}

type ctxMark struct{}

// TestEveryEndpointIsObserved calls every endpoint method of the client against a server that
// answers with the spec's result, then a 429 with Retry-After, then a 500 naming an exception,
// and checks the observer saw each call once, under the endpoint's label, with its status,
// exception, throttling, Retry-After, a duration, and the caller's context.
func TestEveryEndpointIsObserved(t *testing.T) {
	cases := endpointCases()
	var covered []string
	for _, tc := range cases {
		oe, ok := observedEndpoints[tc.name]
		require.True(t, ok, "case %s has no expected label", tc.name)
		covered = append(covered, oe.method)
	}
	require.Len(t, covered, len(observedEndpoints))
	// Every exported method of the client is either one of the calls above or a known non-call,
	// so an endpoint added to the client without a case here fails this test.
	ct := reflect.TypeFor[*Client]()
	for i := range ct.NumMethod() {
		name := ct.Method(i).Name
		assert.True(t, slices.Contains(covered, name) || slices.Contains(notCalls, name),
			"Client.%s is neither an observed endpoint call of this test nor a known non-call", name)
	}

	for _, tc := range cases {
		want := observedEndpoints[tc.name]
		t.Run(tc.name, func(t *testing.T) {
			fixture, err := os.ReadFile(filepath.Join("testdata", "responses", tc.name+".json"))
			require.NoError(t, err)
			var mu sync.Mutex
			answer := "ok"
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				a := answer
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				switch a {
				case "ok":
					_, _ = w.Write(fixture)
				case "throttled":
					w.Header().Set("Retry-After", "7")
					w.WriteHeader(http.StatusTooManyRequests)
					_, _ = w.Write([]byte(`{"error":{"type":"client","message":"Too Many Requests","name":"ThrottlerException"},"result":null,"requestId":"req-429"}`))
				case "failed":
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = w.Write([]byte(`{"error":{"type":"server","code":115406,"message":"upstream failed","name":"GetDelegatorAutostakingDataException"},"result":null,"requestId":"req-500"}`))
				}
			}))
			t.Cleanup(srv.Close)
			rec := &callRecorder{}
			c, err := New(srv.URL, WithToken(testToken), WithObserver(rec.observe))
			require.NoError(t, err)
			ctx := context.WithValue(context.Background(), ctxMark{}, tc.name)

			for _, step := range []struct {
				answer, status, exception string
				code                      int
				throttled                 bool
				retryAfter                time.Duration
				requestID                 string
			}{
				{"ok", "ok", "", http.StatusOK, false, 0, ""},
				{"throttled", "429", "ThrottlerException", http.StatusTooManyRequests, true, 7 * time.Second, "req-429"},
				{"failed", "500", "GetDelegatorAutostakingDataException", http.StatusInternalServerError, false, 0, "req-500"},
			} {
				mu.Lock()
				answer = step.answer
				mu.Unlock()
				_, callErr := tc.call(ctx, c)
				calls, ctxs := rec.take()
				require.Len(t, calls, 1, "%s: one observation per call", step.answer)
				got := calls[0]
				assert.Equal(t, want.label, string(got.Endpoint), step.answer)
				assert.Equal(t, step.code, got.StatusCode, step.answer)
				assert.Equal(t, step.status, got.Status(), step.answer)
				assert.Equal(t, step.exception, got.Exception(), step.answer)
				assert.Equal(t, step.throttled, got.Throttled(), step.answer)
				d, ok := got.RetryAfter()
				assert.Equal(t, step.retryAfter != 0, ok, step.answer)
				assert.Equal(t, step.retryAfter, d, step.answer)
				assert.Equal(t, step.requestID, got.RequestID(), step.answer)
				assert.Positive(t, got.Duration, step.answer)
				assert.True(t, callErr == got.Err, "%s: the observer sees the error the caller gets: %v, %v", step.answer, got.Err, callErr)
				assert.Equal(t, tc.name, ctxs[0].Value(ctxMark{}), "%s: the observer gets the caller's context", step.answer)
			}
		})
	}
}

// TestObservedCallsWithoutAnswer: a call that reaches no server is observed as "transport", one
// whose context is canceled as "canceled", one refused for lack of a token as
// "invalid_request"; an argument the client refuses before sending is not a call and is not
// observed. No observation carries the token.
func TestObservedCallsWithoutAnswer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there any more
	rec := &callRecorder{}
	c, err := New(addr, WithToken(testToken), WithObserver(rec.observe))
	require.NoError(t, err)
	req := StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: staker, Amount: "5"}

	_, err = c.Stake(context.Background(), req)
	require.Error(t, err)
	calls, _ := rec.take()
	require.Len(t, calls, 1)
	assert.Equal(t, EndpointStake, calls[0].Endpoint)
	assert.Equal(t, 0, calls[0].StatusCode)
	assert.Equal(t, "transport", calls[0].Status())
	assert.Equal(t, "transport", calls[0].Exception())
	assert.NotContains(t, calls[0].Err.Error(), testToken)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Broadcast(ctx, BroadcastRequest{Chain: "solana", Network: "testnet", StakerAddress: staker, SignedTransaction: "AQID"})
	require.Error(t, err)
	calls, _ = rec.take()
	require.Len(t, calls, 1)
	assert.Equal(t, EndpointBroadcast, calls[0].Endpoint)
	assert.Equal(t, "canceled", calls[0].Status())

	_, err = c.Stake(context.Background(), StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: staker, Amount: "0"})
	require.True(t, IsArgument(err))
	calls, _ = rec.take()
	assert.Empty(t, calls, "an argument refused before sending is not a call")

	noToken := &Client{base: addr, httpClient: http.DefaultClient, log: c.log, now: time.Now, statusParam: DefaultValidatorStatusParam, observer: rec.observe}
	_, err = noToken.SolanaValidatorStatus(context.Background(), "testnet", []string{vote})
	require.ErrorIs(t, err, ErrNoToken)
	calls, _ = rec.take()
	require.Len(t, calls, 1)
	assert.Equal(t, EndpointValidatorStatus, calls[0].Endpoint)
	assert.Equal(t, "invalid_request", calls[0].Status())
}

// TestCallLabels pins the status and exception labels of each kind of call outcome.
func TestCallLabels(t *testing.T) {
	tests := []struct {
		name                    string
		err                     error
		wantStatus, wantExcName string
	}{
		{"ok", nil, "ok", ""},
		{"api error", &APIError{StatusCode: 400, Name: "ValidationException"}, "400", "ValidationException"},
		{"unnamed api error", &APIError{StatusCode: 500}, "500", "unnamed"},
		{"unexpected body", &UnexpectedResponseError{StatusCode: 502}, "502", "unexpected_response"},
		{"transport", &TransportError{Err: errors.New("connection refused")}, "transport", "transport"},
		{"canceled", &TransportError{Err: context.Canceled}, "canceled", "canceled"},
		{"deadline", &TransportError{Err: context.DeadlineExceeded}, "canceled", "canceled"},
		{"argument", &ArgumentError{Field: "amount"}, "invalid_request", "invalid_request"},
		{"no token", errors.Join(errors.New("apiclient: GET /x"), ErrNoToken), "invalid_request", "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Call{Err: tt.err}
			assert.Equal(t, tt.wantStatus, c.Status())
			assert.Equal(t, tt.wantExcName, c.Exception())
		})
	}
}

// TestEndpointsListsEveryLabel: Endpoints lists the thirteen labels, each once, in the
// interface's numbering.
func TestEndpointsListsEveryLabel(t *testing.T) {
	var got []string
	for _, e := range Endpoints() {
		got = append(got, string(e))
	}
	assert.Equal(t, []string{"delegator_apr", "network_apy", "celestia_send", "polygon_send",
		"eigenlayer_verify_checkpoint_proofs", "hyperliquid_withdraw", "validator_status", "ssv_requests",
		"ton_transaction_status", "stake", "unstake", "withdraw", "broadcast"}, got)
	for _, e := range got {
		assert.False(t, strings.ContainsAny(e, "/{}"), "%s is a label, not a path", e)
	}
}
