package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/jobs/jobstest"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/metrics/metricstest"
	"github.com/stakeflow/stakeflow/internal/metrics/prom"
)

var origin = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// apyText is period n's APY: 21 significant digits, more than a float64 holds.
func apyText(n int64) string { return fmt.Sprintf("3.%020d", n) }

// service is a fake staking service: periods 0..periods-1 of a day each for endpoints 1 and 2,
// and the set-up requests in ssv for endpoint 8. It records every query.
type service struct {
	periods int64
	mu      sync.Mutex
	ssv     []map[string]any
	queries []url.Values
	// throttle, when set, answers 429 with this Retry-After.
	throttle string
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	s.queries = append(s.queries, q)
	if s.throttle != "" {
		w.Header().Set("Retry-After", s.throttle)
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = fmt.Fprint(w, `{"error":{"type":"client","code":0,"message":"ThrottlerException","name":"ThrottlerException"},"result":null,"requestId":"r1","timestamp":"2026-11-25T00:00:00Z"}`)
		return
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	offset, _ := strconv.Atoi(q.Get("offset"))
	first := int64(0)
	if n := q.Get("startNumber"); n != "" {
		first, _ = strconv.ParseInt(n, 10, 64)
	}
	if t := q.Get("startAt"); t != "" {
		at, _ := time.Parse(time.RFC3339Nano, t)
		first = max(first, int64(at.Sub(origin)/(24*time.Hour)))
	}
	var list []any
	switch {
	case strings.HasSuffix(r.URL.Path, "/network/apy"):
		for n := first + int64(offset); n < s.periods && len(list) < limit; n++ {
			list = append(list, map[string]any{"stakingPeriodNumber": n, "stakingPeriodStart": day(n), "stakingPeriodEnd": day(n + 1),
				"updatedAt": day(n + 1), "networkApy": json.Number(apyText(n)), "consensusLayerApy": json.Number(apyText(n)), "executionLayerApy": json.Number("0")})
		}
	case strings.HasSuffix(r.URL.Path, "/delegator/apr"):
		for n := first + int64(offset); n < s.periods && len(list) < limit; n++ {
			list = append(list, map[string]any{"stakingPeriod": strconv.FormatInt(n, 10), "stakingPeriodStart": day(n), "stakingPeriodEnd": day(n + 1),
				"validator": "0xv", "notFinalized": n == s.periods-1, "rewards": []any{
					map[string]any{"type": "consensus", "amount": json.Number("1.000000000000000001" + strconv.FormatInt(n, 10)),
						"netAmount": json.Number("0.900000000000000001" + strconv.FormatInt(n, 10)), "fee": json.Number("0.1"), "currency": "ETH", "recipient": q.Get("address")},
				}})
		}
	default:
		for i := offset; i < len(s.ssv) && len(list) < limit; i++ {
			list = append(list, s.ssv[i])
		}
		writeResult(w, map[string]any{"limit": limit, "offset": offset, "totalCount": len(s.ssv), "list": list})
		return
	}
	writeResult(w, map[string]any{"limit": limit, "offset": offset, "startAt": day(0), "finishAt": day(s.periods), "list": list})
}

func writeResult(w http.ResponseWriter, result any) {
	if result.(map[string]any)["list"] == nil {
		result.(map[string]any)["list"] = []any{}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": nil, "result": result})
}

func day(n int64) string { return origin.Add(time.Duration(n) * 24 * time.Hour).Format(time.RFC3339) }

func (s *service) lastQueries() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.queries...)
}

type fixture struct {
	svc   *service
	store *jobstest.Store
	acts  *jobs.Activities
	env   *testsuite.TestActivityEnvironment
	exp   *prom.Exporter
	logs  *recordingLogger
}

func newFixture(t *testing.T, periods int64) *fixture {
	t.Helper()
	f := &fixture{svc: &service{periods: periods}, store: jobstest.New(), logs: &recordingLogger{}}
	srv := httptest.NewServer(f.svc)
	t.Cleanup(srv.Close)
	cl, err := apiclient.New(srv.URL, apiclient.WithToken("t0ken"))
	require.NoError(t, err)
	f.exp = prom.New(prom.Options{FlushInterval: 10 * time.Millisecond})
	t.Cleanup(func() { _ = f.exp.Close() })
	var ts testsuite.WorkflowTestSuite
	ts.SetMetricsHandler(f.exp.Handler())
	ts.SetLogger(f.logs)
	f.env = ts.NewTestActivityEnvironment()
	f.acts = jobs.New(cl, f.store)
	f.acts.Now = func() time.Time { return origin }
	f.env.RegisterActivity(f.acts)
	return f
}

func (f *fixture) gauge(c *assert.CollectT, name string, labels map[string]string) float64 {
	rec := httptest.NewRecorder()
	f.exp.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(rec.Body)
	if !assert.NoError(c, err) {
		return -1
	}
	ms := metricstest.Matching(fams, name, labels)
	if !assert.Len(c, ms, 1, "%s%v", name, labels) {
		return -1
	}
	return ms[0].GetGauge().GetValue()
}

func TestCollectAPYResumesFromLastStoredAndPages(t *testing.T) {
	f := newFixture(t, 2500)
	_, err := f.store.UpsertAPY(context.Background(), []jobs.APY{{Network: "polkadot", Period: 1200, NetworkAPY: "1"}})
	require.NoError(t, err)

	v, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "polkadot"})
	require.NoError(t, err)
	var res jobs.CollectResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, jobs.CollectResult{Read: 1300, Upserted: 1300, Last: "2499", Requests: 2}, res)

	qs := f.svc.lastQueries()
	require.Len(t, qs, 2, "1300 periods from 1200: a page of 1000 and a short one")
	for _, q := range qs {
		assert.Equal(t, "1200", q.Get("startNumber"), "resumes at the last stored period")
		assert.Equal(t, "1000", q.Get("limit"))
	}
	assert.Equal(t, "1000", qs[1].Get("offset"))
	rows, err := f.store.APYs(context.Background(), jobs.Query{Network: "polkadot"})
	require.NoError(t, err)
	require.Len(t, rows, 1300)
	assert.Equal(t, int64(1200), rows[0].Period)
	assert.Equal(t, "3.00000000000000001200", rows[0].NetworkAPY, "the stored period is read again, exactly")
	assert.Equal(t, "3.00000000000000002499", rows[1299].NetworkAPY)
	assert.Equal(t, origin.Add(2499*24*time.Hour), rows[1299].PeriodStart)

	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.InDelta(c, 3.0, f.gauge(c, jobs.MetricNetworkAPY, map[string]string{activities.LabelNetwork: "polkadot"}), 1e-12)
	}, 10*time.Second, 20*time.Millisecond)
}

func TestCollectAPYStopsAtItsBound(t *testing.T) {
	f := newFixture(t, 30)
	v, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "sui", MaxRecords: 20})
	require.NoError(t, err)
	var res jobs.CollectResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, jobs.CollectResult{Read: 20, Upserted: 20, Last: "19", More: true, Requests: 1}, res)

	v, err = f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "sui", MaxRecords: 20})
	require.NoError(t, err)
	require.NoError(t, v.Get(&res))
	assert.Equal(t, jobs.CollectResult{Read: 11, Upserted: 11, Last: "29", Requests: 1}, res, "periods 19..29, caught up")

	v, err = f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "sui", MaxRecords: 20})
	require.NoError(t, err)
	require.NoError(t, v.Get(&res))
	assert.False(t, res.More)
	assert.Equal(t, 1, res.Read, "only the last period, read again")
}

func TestCollectAPYWaitsForRetryAfter(t *testing.T) {
	f := newFixture(t, 3)
	f.svc.throttle = "7"
	_, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "solana"})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "want an application error, got %v", err)
	assert.Equal(t, activities.ErrRateLimited, appErr.Type())
	assert.Equal(t, 7*time.Second, appErr.NextRetryDelay())
	assert.False(t, appErr.NonRetryable())
}

func TestCollectRefusesBadInput(t *testing.T) {
	f := newFixture(t, 3)
	for name, call := range map[string]func() error{
		"unknown network": func() error {
			_, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "bitcoin"})
			return err
		},
		"rewards network": func() error {
			_, err := f.env.ExecuteActivity(f.acts.CollectRewards, jobs.RewardsInput{Network: "solana", Address: "0x" + strings.Repeat("a", 40)})
			return err
		},
		"malformed address": func() error {
			_, err := f.env.ExecuteActivity(f.acts.CollectRewards, jobs.RewardsInput{Network: "ethereum", Address: "0x1234"})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(call(), &appErr))
			assert.Equal(t, activities.ErrInvalidInput, appErr.Type())
			assert.True(t, appErr.NonRetryable())
		})
	}
	assert.Empty(t, f.svc.lastQueries(), "nothing was asked of the service")
}

func TestCollectRewardsResumesAtLastPeriodStart(t *testing.T) {
	f := newFixture(t, 10)
	addr := "0xAbCdEf0123456789abcdef0123456789ABCDEF01"
	lower := strings.ToLower(addr)
	_, err := f.store.UpsertRewards(context.Background(), []jobs.Reward{{Network: "ethereum", Address: lower, Period: "6",
		Type: "consensus", Validator: "0xv", PeriodStart: origin.Add(6 * 24 * time.Hour), NotFinalized: true}})
	require.NoError(t, err)

	v, err := f.env.ExecuteActivity(f.acts.CollectRewards, jobs.RewardsInput{Network: "ethereum", Address: addr})
	require.NoError(t, err)
	var res jobs.CollectResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, jobs.CollectResult{Read: 4, Upserted: 4, Last: "9", Requests: 1}, res)
	qs := f.svc.lastQueries()
	require.Len(t, qs, 1)
	assert.Equal(t, day(6), qs[0].Get("startAt"))
	assert.Equal(t, lower, qs[0].Get("address"))

	rows, err := f.store.Rewards(context.Background(), jobs.Query{Address: lower})
	require.NoError(t, err)
	require.Len(t, rows, 4)
	assert.Equal(t, jobs.Reward{Network: "ethereum", Address: lower, Period: "6", Type: "consensus", Validator: "0xv", Currency: "ETH",
		Recipient: lower, Amount: "1.0000000000000000016", NetAmount: "0.9000000000000000016", Fee: "0.1",
		PeriodStart: origin.Add(6 * 24 * time.Hour), PeriodEnd: origin.Add(7 * 24 * time.Hour)}, rows[0], "period 6 is final now")
	assert.True(t, rows[3].NotFinalized)
}

func ssvRequest(id, status string) map[string]any {
	return map[string]any{"id": id, "status": status, "validatorsCount": 2, "amountPerValidator": "32", "type": "without-encrypt-key",
		"ssvOwnerAddress": "0xo", "withdrawalAddress": "0xw", "feeRecipientAddress": "0xf"}
}

func TestWatchSSVRecordsChangesAndLogsFailures(t *testing.T) {
	f := newFixture(t, 0)
	f.svc.ssv = []map[string]any{ssvRequest("a", "processing"), ssvRequest("b", "processing"), ssvRequest("c", "processing")}
	v, err := f.env.ExecuteActivity(f.acts.WatchSSV, jobs.SSVInput{})
	require.NoError(t, err)
	var res jobs.SSVResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, jobs.SSVResult{Read: 3, Changes: 3, Next: 3, Requests: 1}, res)

	f.svc.mu.Lock()
	f.svc.ssv[1] = ssvRequest("b", "failed")
	f.svc.ssv[2] = ssvRequest("c", "done")
	f.svc.mu.Unlock()
	v, err = f.env.ExecuteActivity(f.acts.WatchSSV, jobs.SSVInput{})
	require.NoError(t, err)
	require.NoError(t, v.Get(&res))
	assert.Equal(t, jobs.SSVResult{Read: 3, Changes: 2, Failed: []string{"b"}, Next: 3, Requests: 1}, res)
	assert.Equal(t, []jobs.SSVEvent{{RequestID: "b", From: "processing", To: "failed", At: origin}, {RequestID: "c", From: "processing", To: "done", At: origin}},
		f.store.Events[3:])
	errs := f.logs.find("ERROR", "SSV set-up request failed")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "b")

	failed, err := f.store.SSVRequests(context.Background(), jobs.Query{Status: "failed"})
	require.NoError(t, err)
	require.Len(t, failed, 1)
	assert.Equal(t, jobs.SSVRequest{ID: "b", Status: "failed", ValidatorsCount: 2, AmountPerValidator: "32", Type: "without-encrypt-key",
		SSVOwnerAddress: "0xo", WithdrawalAddress: "0xw", FeeRecipientAddress: "0xf", UpdatedAt: origin}, failed[0])

	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		for status, n := range map[string]float64{"processing": 1, "failed": 1, "done": 1} {
			assert.Equal(c, n, f.gauge(c, jobs.MetricSSVRequests, map[string]string{activities.LabelStatus: status}), status)
		}
	}, 10*time.Second, 20*time.Millisecond)

	f.svc.mu.Lock()
	f.svc.ssv[0] = ssvRequest("a", "done")
	f.svc.mu.Unlock()
	_, err = f.env.ExecuteActivity(f.acts.WatchSSV, jobs.SSVInput{})
	require.NoError(t, err)
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 0.0, f.gauge(c, jobs.MetricSSVRequests, map[string]string{activities.LabelStatus: "processing"}), "no request is processing any more")
		assert.Equal(c, 2.0, f.gauge(c, jobs.MetricSSVRequests, map[string]string{activities.LabelStatus: "done"}))
	}, 10*time.Second, 20*time.Millisecond)
}

func TestFailedStatus(t *testing.T) {
	for s, want := range map[string]bool{"failed": true, "FAILED": true, "registration-failed": true, "deposit_failed": true,
		"processing": false, "done": false, "failedover": false, "": false} {
		assert.Equal(t, want, jobs.FailedStatus(s), s)
	}
}

// recordingLogger keeps every log line as "LEVEL msg key=value ...".
type recordingLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *recordingLogger) add(level, msg string, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintln(append([]any{level, msg}, kv...)...))
}

func (l *recordingLogger) Debug(msg string, kv ...any) { l.add("DEBUG", msg, kv...) }
func (l *recordingLogger) Info(msg string, kv ...any)  { l.add("INFO", msg, kv...) }
func (l *recordingLogger) Warn(msg string, kv ...any)  { l.add("WARN", msg, kv...) }
func (l *recordingLogger) Error(msg string, kv ...any) { l.add("ERROR", msg, kv...) }

func (l *recordingLogger) find(level, msg string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.HasPrefix(s, level+" "+msg) {
			out = append(out, s)
		}
	}
	return out
}
