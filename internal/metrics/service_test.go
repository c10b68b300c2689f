package metrics_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/metrics"
)

// serviceRecorder is a metrics handler that keeps every counter's total and every timer's
// recordings by name and labels (name{k=v,...}, labels sorted).
type serviceRecorder struct {
	mu     sync.Mutex
	counts map[string]int64
	timers map[string][]time.Duration
}

type serviceTagged struct {
	root *serviceRecorder
	tags map[string]string
}

func newServiceRecorder() *serviceTagged {
	return &serviceTagged{root: &serviceRecorder{counts: map[string]int64{}, timers: map[string][]time.Duration{}}}
}

func (t *serviceTagged) key(name string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(t.tags)) {
		parts = append(parts, k+"="+t.tags[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

func (t *serviceTagged) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(t.tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	return &serviceTagged{root: t.root, tags: merged}
}

func (t *serviceTagged) Counter(name string) client.MetricsCounter {
	k := t.key(name)
	return serviceCounter(func(n int64) {
		t.root.mu.Lock()
		defer t.root.mu.Unlock()
		t.root.counts[k] += n
	})
}

func (t *serviceTagged) Timer(name string) client.MetricsTimer {
	k := t.key(name)
	return serviceTimer(func(d time.Duration) {
		t.root.mu.Lock()
		defer t.root.mu.Unlock()
		t.root.timers[k] = append(t.root.timers[k], d)
	})
}

func (t *serviceTagged) Gauge(string) client.MetricsGauge { return client.MetricsNopHandler.Gauge("") }

type serviceCounter func(int64)

func (f serviceCounter) Inc(n int64) { f(n) }

type serviceTimer func(time.Duration)

func (f serviceTimer) Record(d time.Duration) { f(d) }

// TestServiceObserverRecordsEveryEndpoint drives a staking service client with the observer
// against a service that answers a Celestia broadcast, throttles a Solana stake once
// (Retry-After 3), refuses a unified broadcast (400 ValidationException), fails a TON status
// read (500) and answers an APY read, and checks every counter and timer by name and labels:
// endpoints of every chain and of the data jobs are counted, not Solana's only.
func TestServiceObserverRecordsEveryEndpoint(t *testing.T) {
	var mu sync.Mutex
	stakes := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p := r.URL.Path
		switch {
		case strings.HasSuffix(p, "/transaction/send"):
			_, _ = w.Write([]byte(`{"error":null,"result":{"status":"success","blockId":3456789,"fee":0.002,"gas":{"used":81234,"wanted":100000},"transactionHash":"A1B2"}}`))
		case strings.HasSuffix(p, "/unified/staking/stake"):
			mu.Lock()
			stakes++
			n := stakes
			mu.Unlock()
			if n == 1 {
				w.Header().Set("Retry-After", "3")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"error":{"type":"client","message":"Too Many Requests","name":"ThrottlerException"},"result":null,"requestId":"req-1"}`))
				return
			}
			_, _ = w.Write([]byte(`{"error":null,"result":{"amount":5,"stakerAddress":"` + staker + `","unsignedTransactionData":"AQID","createdAt":"2026-11-22T00:00:00Z","extraData":{"network":"testnet"}}}`))
		case strings.HasSuffix(p, "/unified/transaction/broadcast"):
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"type":"client","code":100101,"message":"Transaction simulation failed","name":"ValidationException"},"result":null,"requestId":"req-2"}`))
		case strings.Contains(p, "/ton/"):
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"type":"server","message":"upstream","name":"InternalServerErrorException"},"result":null,"requestId":"req-3"}`))
		case strings.HasSuffix(p, "/data/network/apy"):
			_, _ = w.Write([]byte(`{"error":null,"result":{"limit":50,"offset":0,"startAt":"2026-10-01T00:00:00Z","finishAt":"2026-11-01T00:00:00Z","list":[]}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	h := newServiceRecorder()
	c, err := apiclient.New(srv.URL, apiclient.WithToken("test-token-value"), apiclient.WithObserver(metrics.ServiceObserver(h)))
	require.NoError(t, err)
	ctx := context.Background()

	_, err = c.CelestiaSend(ctx, "celestia-mocha-testnet", apiclient.CelestiaSendRequest{SignedTransaction: "0a8f01"})
	require.NoError(t, err)
	stake := apiclient.StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: staker, Amount: "5"}
	_, err = c.Stake(ctx, stake)
	require.True(t, apiclient.IsThrottled(err), "first stake throttled: %v", err)
	_, err = c.Stake(ctx, stake)
	require.NoError(t, err)
	_, err = c.Broadcast(ctx, apiclient.BroadcastRequest{Chain: "solana", Network: "testnet", StakerAddress: staker, SignedTransaction: "AQID"})
	require.True(t, apiclient.IsValidation(err), "broadcast refused: %v", err)
	_, err = c.TONTransactionStatus(ctx, "testnet", "abc")
	require.Error(t, err)
	_, err = c.NetworkAPY(ctx, "celestia", apiclient.NetworkAPYQuery{})
	require.NoError(t, err)

	h.root.mu.Lock()
	defer h.root.mu.Unlock()
	assert.Equal(t, map[string]int64{
		"stakeflow_service_requests_total{endpoint=celestia_send,status=ok}":                                                1,
		"stakeflow_service_requests_total{endpoint=stake,status=429}":                                                       1,
		"stakeflow_service_requests_total{endpoint=stake,status=ok}":                                                        1,
		"stakeflow_service_requests_total{endpoint=broadcast,status=400}":                                                   1,
		"stakeflow_service_requests_total{endpoint=ton_transaction_status,status=500}":                                      1,
		"stakeflow_service_requests_total{endpoint=network_apy,status=ok}":                                                  1,
		"stakeflow_service_errors_total{endpoint=stake,exception=ThrottlerException,status=429}":                            1,
		"stakeflow_service_errors_total{endpoint=broadcast,exception=ValidationException,status=400}":                       1,
		"stakeflow_service_errors_total{endpoint=ton_transaction_status,exception=InternalServerErrorException,status=500}": 1,
		"stakeflow_service_throttled_total{endpoint=stake}":                                                                 1,
	}, h.root.counts)

	timers := map[string]int{}
	for k, ds := range h.root.timers {
		timers[k] = len(ds)
		for _, d := range ds {
			assert.Positive(t, d, k)
		}
	}
	assert.Equal(t, map[string]int{
		"stakeflow_service_request_duration_seconds{endpoint=celestia_send}":          1,
		"stakeflow_service_request_duration_seconds{endpoint=stake}":                  2,
		"stakeflow_service_request_duration_seconds{endpoint=broadcast}":              1,
		"stakeflow_service_request_duration_seconds{endpoint=ton_transaction_status}": 1,
		"stakeflow_service_request_duration_seconds{endpoint=network_apy}":            1,
		"stakeflow_service_retry_after_seconds{endpoint=stake}":                       1,
	}, timers)
	assert.Equal(t, []time.Duration{3 * time.Second}, h.root.timers["stakeflow_service_retry_after_seconds{endpoint=stake}"],
		"the Retry-After delay the service asked for")
	for k := range h.root.counts {
		assert.NotContains(t, k, "test-token-value")
		assert.NotContains(t, k, "/", "no path in a label: %s", k)
	}
}

// TestServiceObserverWithoutHandler: with no metrics handler the observer records nothing and
// the call goes through unchanged.
func TestServiceObserverWithoutHandler(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"error":null,"result":{"statuses":"active"}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := apiclient.New(srv.URL, apiclient.WithToken("test-token-value"), apiclient.WithObserver(metrics.ServiceObserver(nil)))
	require.NoError(t, err)
	res, err := c.SolanaValidatorStatus(context.Background(), "testnet", []string{vote})
	require.NoError(t, err)
	assert.JSONEq(t, `"active"`, string(res.Statuses))
}
