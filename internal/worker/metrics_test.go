package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stakeflow/stakeflow/internal/metrics/metricstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/activities"
	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/metrics/prom"
	"github.com/stakeflow/stakeflow/signer"
)

const (
	staker = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	vote   = "CertusDeBmqN8ZawdkxK5kFGMwBXdudvWHYwtNgNhvLu"
	sig    = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
)

// fakeService is the staking service: the first stake request is throttled (Retry-After 3), the
// next is answered, and every broadcast is refused.
func fakeService(t *testing.T, opts ...apiclient.Option) *apiclient.Client {
	t.Helper()
	var mu sync.Mutex
	stakes := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-request-id", "req-1")
		switch {
		case strings.HasSuffix(r.URL.Path, "/unified/staking/stake"):
			mu.Lock()
			stakes++
			n := stakes
			mu.Unlock()
			if n == 1 {
				w.Header().Set("Retry-After", "3")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(errorEnvelope("ThrottlerException", 429, "", "ThrottlerException")))
				return
			}
			_, _ = fmt.Fprintf(w, `{"error":null,"result":{"amount":5,"stakerAddress":%q,"unsignedTransactionData":"AQID","createdAt":"2026-11-22T00:00:00Z","extraData":{"network":"testnet","feePayer":%q,"voteAccount":%q}}}`,
				staker, staker, vote)
		case strings.HasSuffix(r.URL.Path, "/unified/transaction/broadcast"):
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(errorEnvelope("ValidationException", 100101, "client", "Transaction simulation failed: insufficient funds")))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := apiclient.New(srv.URL, append([]apiclient.Option{apiclient.WithToken("test-token-value")}, opts...)...)
	require.NoError(t, err)
	return c
}

func errorEnvelope(name string, code int, typ, msg string) string {
	return fmt.Sprintf(`{"error":{"type":%q,"code":%d,"message":%q,"name":%q},"result":null,"requestId":"req-1","timestamp":"2026-11-22T00:00:00Z"}`,
		typ, code, msg, name)
}

// refusingSigner refuses every transaction: its vote account is not the one asked for.
type refusingSigner struct{}

func (refusingSigner) Sign(context.Context, string, signer.Intent) (*signer.Signed, error) {
	return nil, &signer.VerificationError{Check: "vote account", Want: vote, Got: staker}
}

func (refusingSigner) AllowedVoteAccounts() []string { return nil }

type keys struct{}

func (keys) Has(string) bool { return true }
func (keys) Len() int        { return 1 }

// recordingLogger keeps every log line's message and key-value pairs.
type recordingLogger struct {
	mu    sync.Mutex
	lines []logLine
}

type logLine struct {
	msg string
	kv  map[string]any
}

func (l *recordingLogger) record(msg string, kv []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := logLine{msg: msg, kv: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		line.kv[fmt.Sprint(kv[i])] = kv[i+1]
	}
	l.lines = append(l.lines, line)
}

func (l *recordingLogger) Debug(msg string, kv ...any) { l.record(msg, kv) }
func (l *recordingLogger) Info(msg string, kv ...any)  { l.record(msg, kv) }
func (l *recordingLogger) Warn(msg string, kv ...any)  { l.record(msg, kv) }
func (l *recordingLogger) Error(msg string, kv ...any) { l.record(msg, kv) }

func (l *recordingLogger) With(kv ...any) log.Logger {
	return &withLogger{root: l, with: kv}
}

type withLogger struct {
	root *recordingLogger
	with []any
}

func (w *withLogger) log(msg string, kv []any) {
	w.root.record(msg, append(append([]any{}, w.with...), kv...))
}

func (w *withLogger) Debug(msg string, kv ...any) { w.log(msg, kv) }
func (w *withLogger) Info(msg string, kv ...any)  { w.log(msg, kv) }
func (w *withLogger) Warn(msg string, kv ...any)  { w.log(msg, kv) }
func (w *withLogger) Error(msg string, kv ...any) { w.log(msg, kv) }
func (w *withLogger) With(kv ...any) log.Logger {
	return &withLogger{root: w.root, with: append(append([]any{}, w.with...), kv...)}
}

func (l *recordingLogger) find(msg string) []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logLine
	for _, line := range l.lines {
		if line.msg == msg {
			out = append(out, line)
		}
	}
	return out
}

// scrape reads /metrics from mux and parses it with Prometheus' text parser.
func scrape(t require.TestingT, mux http.Handler) map[string]*dto.MetricFamily {
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var parser expfmt.TextParser
	fams, err := parser.TextToMetricFamilies(rec.Body)
	require.NoError(t, err)
	return fams
}

// sample finds the one metric of family name whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	if ms := metricstest.Matching(fams, name, want); len(ms) > 0 {
		return ms[0]
	}
	return nil
}

func counter(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := sample(fams, name, labels)
	if m == nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// TestMetricsEndpointReportsActivityAndServiceMetrics drives the activities, with the worker's
// metrics pipeline, against a service that throttles a build once and refuses a broadcast and a
// signer that refuses, then reads the samples from the worker's /metrics.
func TestMetricsEndpointReportsActivityAndServiceMetrics(t *testing.T) {
	exp := prom.New(prom.Options{FlushInterval: 10 * time.Millisecond})
	t.Cleanup(func() { _ = exp.Close() })
	logs := &recordingLogger{}
	var ts testsuite.WorkflowTestSuite
	ts.SetMetricsHandler(exp.Handler())
	ts.SetLogger(logs)
	env := ts.NewTestActivityEnvironment()
	acts := &actsolana.Activities{
		Service: fakeService(t, apiclient.WithObserver(metrics.ServiceObserver(exp.Handler()))),
		Signer:  refusingSigner{},
		Keys:    keys{},
		Chains:  map[string]actsolana.SolanaReader{},
	}
	env.RegisterActivity(acts)
	intent := actsolana.Intent{Operation: actsolana.OpStake, Chain: "solana", Network: "testnet", Staker: staker, Lamports: 5, VoteAccount: vote}

	_, err := env.ExecuteActivity(acts.Build, intent)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "want an application error, got %v", err)
	require.Equal(t, activities.ErrRateLimited, appErr.Type())
	require.Equal(t, 3*time.Second, appErr.NextRetryDelay(), "the Retry-After delay is handed to Temporal")

	_, err = env.ExecuteActivity(acts.Build, intent)
	require.NoError(t, err)

	_, err = env.ExecuteActivity(acts.Sign, actsolana.SignInput{Intent: intent, UnsignedTransaction: "AQID"})
	require.ErrorContains(t, err, "refused to sign")

	_, err = env.ExecuteActivity(acts.Broadcast, actsolana.BroadcastInput{Intent: intent, Signature: sig, SignedTransaction: "AQID"})
	require.True(t, errors.As(err, &appErr))
	require.Equal(t, activities.ErrTransactionRejected, appErr.Type())

	mux := newHealthMux(healthChecks{}, exp.HTTPHandler())
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		fams := scrape(c, mux)
		stake := map[string]string{activities.LabelEndpoint: string(apiclient.EndpointStake)}
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceThrottled, stake))
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceRequests, map[string]string{activities.LabelEndpoint: string(apiclient.EndpointStake), activities.LabelStatus: "429"}))
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceRequests, map[string]string{activities.LabelEndpoint: string(apiclient.EndpointStake), activities.LabelStatus: "ok"}))
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceErrors, map[string]string{
			activities.LabelEndpoint: string(apiclient.EndpointStake), activities.LabelStatus: "429", activities.LabelException: "ThrottlerException"}))
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceErrors, map[string]string{
			activities.LabelEndpoint: string(apiclient.EndpointBroadcast), activities.LabelStatus: "400", activities.LabelException: "ValidationException"}))
		if m := sample(fams, metrics.ServiceRetryAfter, stake); assert.NotNil(c, m, "retry-after histogram") {
			assert.Equal(c, uint64(1), m.GetHistogram().GetSampleCount())
			assert.Equal(c, 3.0, m.GetHistogram().GetSampleSum())
		}
		if m := sample(fams, metrics.ServiceRequestDuration, stake); assert.NotNil(c, m, "latency histogram") {
			assert.Equal(c, uint64(2), m.GetHistogram().GetSampleCount())
		}
		assert.Equal(c, 1.0, counter(fams, activities.MetricBroadcasts, map[string]string{
			activities.LabelChain: "solana", activities.LabelNetwork: "testnet", activities.LabelOutcome: activities.BroadcastRefused, activities.LabelReason: activities.ReasonRejected}))
		assert.Equal(c, -1.0, counter(fams, activities.MetricBroadcasts, map[string]string{activities.LabelOutcome: activities.BroadcastSent}), "nothing was sent")
		assert.Equal(c, 1.0, counter(fams, activities.MetricSignerRefusals, map[string]string{
			activities.LabelChain: "solana", activities.LabelOperation: "stake", activities.LabelCheck: "vote_account"}))
	}, 10*time.Second, 20*time.Millisecond)
}

// TestActivityLogsCarryOperationAndRunID checks that activity log lines, and the staking service
// calls logged on their behalf, carry the workflow ID (the operation ID) and the run ID.
func TestActivityLogsCarryOperationAndRunID(t *testing.T) {
	logs := &recordingLogger{}
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(logs)
	env := ts.NewTestActivityEnvironment()
	acts := &actsolana.Activities{Service: fakeService(t, apiclient.WithObserver(metrics.ServiceObserver(nil))), Signer: refusingSigner{}, Keys: keys{}}
	env.RegisterActivity(acts)
	intent := actsolana.Intent{Operation: actsolana.OpStake, Chain: "solana", Network: "testnet", Staker: staker, Lamports: 5, VoteAccount: vote}
	_, err := env.ExecuteActivity(acts.Build, intent) // throttled
	require.Error(t, err)
	_, err = env.ExecuteActivity(acts.Build, intent)
	require.NoError(t, err)
	_, err = env.ExecuteActivity(acts.Sign, actsolana.SignInput{Intent: intent, UnsignedTransaction: "AQID"})
	require.Error(t, err)

	for _, msg := range []string{"Built transaction", "Refused to sign", "Staking service call"} {
		lines := logs.find(msg)
		require.NotEmpty(t, lines, "no %q log line", msg)
		for _, l := range lines {
			assert.NotEmpty(t, l.kv["WorkflowID"], "%q lacks WorkflowID: %v", msg, l.kv)
			assert.NotEmpty(t, l.kv["RunID"], "%q lacks RunID: %v", msg, l.kv)
		}
	}
	calls := logs.find("Staking service call")
	require.Len(t, calls, 2)
	assert.Equal(t, "429", calls[0].kv["status"])
	assert.Equal(t, "ThrottlerException", calls[0].kv["exception"])
	assert.Equal(t, "ok", calls[1].kv["status"])
}

type fakeTemporal struct{ err error }

func (f fakeTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, f.err
}

// withKeys is a worker serving one module, Solana's, holding n keys.
func withKeys(n int) []served {
	return []served{{name: "solana", queue: "stakeflow-solana", keys: func() int { return n }}}
}

// TestReadyz checks each readiness condition: worker started, each module's keys loaded, Temporal
// reachable; a ready worker lists its modules and their queues.
func TestReadyz(t *testing.T) {
	started := make(chan struct{})
	close(started)
	tests := []struct {
		name     string
		checks   healthChecks
		wantCode int
		wantBody string
	}{
		{"not started", healthChecks{ready: make(chan struct{}), temporal: fakeTemporal{}, modules: withKeys(1)}, 503, "worker not started"},
		{"no keys", healthChecks{ready: started, temporal: fakeTemporal{}, modules: withKeys(0)}, 503, "solana: no keys loaded"},
		{"no module", healthChecks{ready: started, temporal: fakeTemporal{}}, 503, "no module served"},
		{"temporal down", healthChecks{ready: started, temporal: fakeTemporal{err: errors.New("unavailable")}, modules: withKeys(2)}, 503, "temporal unreachable"},
		{"ready", healthChecks{ready: started, temporal: fakeTemporal{}, modules: withKeys(2)}, 200, "ready\nmodule solana (task queue stakeflow-solana): ready\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			newHealthMux(tt.checks, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			assert.Equal(t, tt.wantCode, rec.Code)
			assert.Contains(t, rec.Body.String(), tt.wantBody)
		})
	}
}

// TestWorkerServiceClientCountsEveryChain: the staking service client the worker builds counts
// and times the calls of every chain, not Solana's only: a Celestia broadcast, a Polygon broadcast
// the service fails with 500 and a TON status read, made through the interfaces Run hands to
// those chains' activities, appear on /metrics under their endpoints.
func TestWorkerServiceClientCountsEveryChain(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/celestia/"):
			_, _ = w.Write([]byte(`{"error":null,"result":{"status":"success","blockId":7,"fee":0.002,"gas":{"used":1,"wanted":2},"transactionHash":"A1B2"}}`))
		case r.URL.Path == "/api/v1/polygon/transaction/send":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(errorEnvelope("InternalServerErrorException", 500, "server", "upstream")))
		case strings.HasPrefix(r.URL.Path, "/api/v1/ton/"):
			_, _ = w.Write([]byte(`{"error":null,"result":{"address":"EQ","lt":"1","prevTransactionHash":"p","prevTransactionLt":"0","now":1763770000,"outMessagesCount":1,"oldStatus":"active","endStatus":"active","transactionHash":"abc"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte("test-token-value"), 0o600))
	cfg := defaultConfig(t)
	cfg.ServiceURL, cfg.ServiceTokenFile = srv.URL, token

	exp := prom.New(prom.Options{FlushInterval: 10 * time.Millisecond})
	t.Cleanup(func() { _ = exp.Close() })
	svc, err := newService(cfg, zap.NewNop(), exp.Handler())
	require.NoError(t, err)
	ctx := context.Background()
	// The one client every module's Env carries, through each chain's own interface.
	var cel actcelestia.StakingService = svc
	_, err = cel.CelestiaSend(ctx, "celestia-mocha-testnet", apiclient.CelestiaSendRequest{SignedTransaction: "0a8f01"})
	require.NoError(t, err)
	var pol actevm.StakingService = svc
	_, err = pol.PolygonSend(ctx, apiclient.PolygonSendRequest{SignedTransaction: "0x02f8", StakerAddress: "0x8f2b1d6c1f0e4f1a9b9a1e1d2c3b4a5968776655"})
	require.Error(t, err)
	var ton actton.Service = svc
	_, err = ton.TONTransactionStatus(ctx, "testnet", "abc")
	require.NoError(t, err)

	mux := newHealthMux(healthChecks{}, exp.HTTPHandler())
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		fams := scrape(c, mux)
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceRequests, map[string]string{activities.LabelEndpoint: "celestia_send", activities.LabelStatus: "ok"}))
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceRequests, map[string]string{activities.LabelEndpoint: "polygon_send", activities.LabelStatus: "500"}))
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceErrors, map[string]string{
			activities.LabelEndpoint: "polygon_send", activities.LabelStatus: "500", activities.LabelException: "InternalServerErrorException"}))
		assert.Equal(c, 1.0, counter(fams, metrics.ServiceRequests, map[string]string{activities.LabelEndpoint: "ton_transaction_status", activities.LabelStatus: "ok"}))
		if m := sample(fams, metrics.ServiceRequestDuration, map[string]string{activities.LabelEndpoint: "celestia_send"}); assert.NotNil(c, m, "latency histogram") {
			assert.Equal(c, uint64(1), m.GetHistogram().GetSampleCount())
		}
	}, 10*time.Second, 20*time.Millisecond)
}
