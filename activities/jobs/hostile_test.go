package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/jobs/jobstest"
	"github.com/stakeflow/stakeflow/apiclient"
)

// hostile is a staking service that answers what its handler says, counting the requests.
type hostile struct {
	mu       sync.Mutex
	requests int
	offsets  []int
	answer   func(w http.ResponseWriter, offset int)
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	h.mu.Lock()
	h.requests++
	h.offsets = append(h.offsets, offset)
	h.mu.Unlock()
	h.answer(w, offset)
}

func (h *hostile) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests
}

type hostileFixture struct {
	svc   *hostile
	store *jobstest.Store
	acts  *jobs.Activities
	env   *testsuite.TestActivityEnvironment
	// clock is the activities' clock: it moves only when they sleep; sleeps are every wait asked.
	mu     sync.Mutex
	clock  time.Time
	sleeps []time.Duration
}

func newHostile(t *testing.T, answer func(w http.ResponseWriter, offset int)) *hostileFixture {
	t.Helper()
	f := &hostileFixture{svc: &hostile{answer: answer}, store: jobstest.New(), clock: origin}
	srv := httptest.NewServer(f.svc)
	t.Cleanup(srv.Close)
	cl, err := apiclient.New(srv.URL, apiclient.WithToken("t0ken"))
	require.NoError(t, err)
	var ts testsuite.WorkflowTestSuite
	f.env = ts.NewTestActivityEnvironment()
	f.acts = jobs.New(cl, f.store)
	f.acts.Now = func() time.Time {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.clock
	}
	f.acts.Sleep = func(_ context.Context, d time.Duration) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.sleeps = append(f.sleeps, d)
		f.clock = f.clock.Add(d)
		return nil
	}
	f.env.RegisterActivity(f.acts)
	return f
}

// apyPage writes a page of endpoint 2 holding periods first..first+n-1, saying it starts at offset.
func apyPage(w http.ResponseWriter, offset int, first, n int64) {
	list := []any{}
	for p := first; p < first+n; p++ {
		list = append(list, map[string]any{"stakingPeriodNumber": p, "stakingPeriodStart": day(p), "stakingPeriodEnd": day(p + 1),
			"updatedAt": day(p + 1), "networkApy": json.Number("3.5"), "consensusLayerApy": json.Number("3"), "executionLayerApy": json.Number("0.5")})
	}
	writeResult(w, map[string]any{"limit": 1000, "offset": offset, "startAt": day(0), "finishAt": day(first + n), "list": list})
}

func requireNotAdvancing(t *testing.T, err error, contains ...string) {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "want an application error, got %v", err)
	assert.Equal(t, jobs.ErrPageNotAdvancing, appErr.Type())
	assert.True(t, appErr.NonRetryable(), "a service that does not page is not hammered by retries")
	for _, c := range contains {
		assert.Contains(t, err.Error(), c)
	}
}

// The finding: a pager that answers the same 1,000 rows whatever the offset made the APY job read
// forever. Now the second page, all rows already read, ends the call with an error naming it.
func TestSamePageWhateverTheOffsetEndsTheCall(t *testing.T) {
	f := newHostile(t, func(w http.ResponseWriter, offset int) { apyPage(w, offset, 0, 1000) })
	_, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "polkadot"})
	requireNotAdvancing(t, err, "network APY of polkadot", "the page at offset 1000 holds only rows already read", "period 0 was first read at offset 0")
	assert.Equal(t, 2, f.svc.count(), "two requests, not thousands")
	rows, err := f.store.APYs(context.Background(), jobs.Query{})
	require.NoError(t, err)
	assert.Len(t, rows, 1000, "what was read once is stored once")
}

// A pager that says it answered offset 0 to a request for offset 1000 ignores the offset.
func TestPageAtAnotherOffsetEndsTheCall(t *testing.T) {
	f := newHostile(t, func(w http.ResponseWriter, offset int) {
		apyPage(w, 0, int64(offset), 1000) // new rows each time, but always "offset 0"
	})
	_, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "sui"})
	requireNotAdvancing(t, err, "asked for offset 1000, it answered the page at offset 0")
	assert.Equal(t, 2, f.svc.count())
}

// The same for the rewards and the SSV requests: every pager is bounded.
func TestEveryJobRefusesAPageThatDoesNotAdvance(t *testing.T) {
	t.Run("rewards", func(t *testing.T) {
		f := newHostile(t, func(w http.ResponseWriter, offset int) {
			list := []any{}
			for p := int64(0); p < 1000; p++ {
				list = append(list, map[string]any{"stakingPeriod": strconv.FormatInt(p, 10), "stakingPeriodStart": day(p), "stakingPeriodEnd": day(p + 1),
					"rewards": []any{map[string]any{"type": "consensus", "amount": json.Number("1"), "netAmount": json.Number("0.9"),
						"fee": json.Number("0.1"), "currency": "ETH", "recipient": "0xr"}}})
			}
			writeResult(w, map[string]any{"limit": 1000, "offset": offset, "startAt": day(0), "finishAt": day(1000), "list": list})
		})
		_, err := f.env.ExecuteActivity(f.acts.CollectRewards, jobs.RewardsInput{Network: "ethereum", Address: "0x" + strings.Repeat("ab", 20)})
		requireNotAdvancing(t, err, "delegator rewards of 0x", `the page at offset 1000 holds only rows already read`, `period "0" was first read at offset 0`)
		assert.Equal(t, 2, f.svc.count())
	})
	t.Run("ssv", func(t *testing.T) {
		f := newHostile(t, func(w http.ResponseWriter, offset int) {
			list := []any{}
			for i := range 1000 {
				list = append(list, ssvRequest(fmt.Sprintf("r%d", i), "processing"))
			}
			writeResult(w, map[string]any{"limit": 1000, "offset": offset, "totalCount": 100000, "list": list})
		})
		_, err := f.env.ExecuteActivity(f.acts.WatchSSV, jobs.SSVInput{})
		requireNotAdvancing(t, err, "SSV set-up requests", `the page at offset 1000 holds only rows already read`, `request "r0" was first read at offset 0`)
		assert.Equal(t, 2, f.svc.count())
	})
}

// A service that pages honestly but without end is stopped by the call's request allowance: the
// call says so (Capped), and counts what it sent.
func TestRequestsOfACallAreCapped(t *testing.T) {
	f := newHostile(t, func(w http.ResponseWriter, offset int) { apyPage(w, offset, int64(offset), 1000) })
	v, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "kusama", MaxRequests: 3})
	require.NoError(t, err)
	var res jobs.CollectResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, jobs.CollectResult{Read: 3000, Upserted: 3000, Last: "2999", More: true, Requests: 3, Capped: true}, res)
	assert.Equal(t, 3, f.svc.count())

	// Without a bound in the input, the default bounds it.
	f = newHostile(t, func(w http.ResponseWriter, offset int) { apyPage(w, offset, int64(offset), 1000) })
	v, err = f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "kusama", MaxRecords: 1 << 30})
	require.NoError(t, err)
	require.NoError(t, v.Get(&res))
	assert.True(t, res.Capped)
	assert.Equal(t, jobs.DefaultMaxRequests, f.svc.count())
}

// Requests are spaced by the service's rate-limit headers: RateLimit-Policy 10;w=1 is one request
// every 100 ms; a 429 teaches its policy to the next call.
func TestRequestsArePacedByTheRateLimitHeaders(t *testing.T) {
	f := newHostile(t, func(w http.ResponseWriter, offset int) {
		w.Header().Set("RateLimit-Policy", "10;w=1, 1000;w=3600")
		w.Header().Set("RateLimit-Limit", "10")
		if offset < 2000 {
			apyPage(w, offset, int64(offset), 1000)
			return
		}
		apyPage(w, offset, int64(offset), 5)
	})
	_, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "celestia"})
	require.NoError(t, err)
	assert.Equal(t, 3, f.svc.count())
	// The slowest window: 1000 an hour is 3.6 s apart, slower than 10 a second.
	assert.Equal(t, []time.Duration{3600 * time.Millisecond, 3600 * time.Millisecond}, f.sleeps, "no wait before the first request, one between each two")

	throttled := true
	g := newHostile(t, func(w http.ResponseWriter, offset int) {
		if throttled {
			throttled = false
			w.Header().Set("Retry-After", "2")
			w.Header().Set("RateLimit-Policy", "4;w=1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = fmt.Fprint(w, `{"error":{"type":"client","code":0,"message":"ThrottlerException","name":"ThrottlerException"},"result":null,"requestId":"r1","timestamp":"2026-11-25T00:00:00Z"}`)
			return
		}
		apyPage(w, offset, int64(offset), 1000-int64(offset/1000)*999)
	})
	_, err = g.env.ExecuteActivity(g.acts.CollectAPY, jobs.APYInput{Network: "celestia"})
	require.Error(t, err, "the 429 fails the attempt, retried after Retry-After")
	_, err = g.env.ExecuteActivity(g.acts.CollectAPY, jobs.APYInput{Network: "celestia"})
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{250 * time.Millisecond, 250 * time.Millisecond}, g.sleeps, "4 a second, learnt from the 429")
}

// Records that contradict themselves or the chain are stored, flagged with the reason; values a
// chain can produce (a negative consensus reward, a negative network APY above -100%) are kept as
// they are.
func TestContradictoryRecordsAreStoredFlagged(t *testing.T) {
	apys := []map[string]any{
		{"stakingPeriodNumber": 1, "stakingPeriodStart": day(1), "stakingPeriodEnd": day(2), "networkApy": json.Number("-37.5"), "consensusLayerApy": json.Number("-37.5"), "executionLayerApy": json.Number("0")},
		{"stakingPeriodNumber": 2, "stakingPeriodStart": day(2), "stakingPeriodEnd": day(3), "networkApy": json.Number("1000000000000"), "consensusLayerApy": json.Number("3"), "executionLayerApy": json.Number("0.5")},
		{"stakingPeriodNumber": 3, "stakingPeriodStart": day(3), "stakingPeriodEnd": day(4), "networkApy": json.Number("1e12"), "consensusLayerApy": json.Number("-150"), "executionLayerApy": json.Number("-0.25")},
		{"stakingPeriodNumber": 4, "stakingPeriodStart": day(5), "stakingPeriodEnd": day(4), "networkApy": json.Number("3.5"), "consensusLayerApy": json.Number("3"), "executionLayerApy": json.Number("0.5")},
		{"stakingPeriodNumber": 5, "stakingPeriodStart": day(5), "stakingPeriodEnd": day(6), "networkApy": json.Number("1000"), "consensusLayerApy": json.Number("-100"), "executionLayerApy": json.Number("1e1000")},
	}
	reward := func(typ, amount, net, fee string) map[string]any {
		return map[string]any{"type": typ, "amount": json.Number(amount), "netAmount": json.Number(net), "fee": json.Number(fee), "currency": "ETH", "recipient": "0xr"}
	}
	records := []map[string]any{
		{"stakingPeriod": "1", "stakingPeriodStart": day(1), "stakingPeriodEnd": day(2), "rewards": []any{
			reward("consensus", "-1.5", "-1.5", "0"),                        // a penalty: kept
			reward("execution", "0.000537976", "0.00537976", "0.000053798"), // the finding's: net ten times amount
		}},
		{"stakingPeriod": "2", "stakingPeriodStart": day(2), "stakingPeriodEnd": day(3), "rewards": []any{
			reward("consensus", "0.000537976", "0.000484179", "0.000053798"), // one gwei off: rounding
			reward("execution", "-0.01", "-0.01", "0"),                       // execution rewards are never negative
		}},
		{"stakingPeriod": "3", "stakingPeriodStart": day(4), "stakingPeriodEnd": day(3), "rewards": []any{
			reward("consensus", "0.1", "0.11", "-0.01"), // net is amount minus fee, but the fee is negative
		}},
	}
	f := newHostile(t, func(w http.ResponseWriter, offset int) {
		writeResult(w, map[string]any{"limit": 1000, "offset": offset, "startAt": day(0), "finishAt": day(9), "list": apys})
	})
	v, err := f.env.ExecuteActivity(f.acts.CollectAPY, jobs.APYInput{Network: "ethereum"})
	require.NoError(t, err)
	var res jobs.CollectResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, 4, res.Flagged)
	rows, err := f.store.APYs(context.Background(), jobs.Query{})
	require.NoError(t, err)
	require.Len(t, rows, 5)
	got := map[int64]jobs.APY{}
	for _, r := range rows {
		got[r.Period] = r
	}
	assert.Equal(t, "", got[1].Flag, "a network APY of -37.5%% is within what penalties can do")
	assert.Equal(t, "-37.5", got[1].NetworkAPY)
	assert.Equal(t, "networkApy 1000000000000% is above 1000%: beyond what any staking network pays", got[2].Flag)
	assert.Equal(t, "1000000000000", got[3].NetworkAPY, "1e12 stored as decimal text")
	assert.Equal(t, "networkApy 1000000000000% is above 1000%: beyond what any staking network pays; "+
		"consensusLayerApy -150% is below -100%: a stake cannot lose more than itself; "+
		"executionLayerApy -0.25% is negative: execution-layer rewards (priority fees, MEV) are paid to validators, never taken", got[3].Flag)
	assert.Equal(t, "the period ends (2024-01-05T00:00:00Z) before it starts (2024-01-06T00:00:00Z)", got[4].Flag)
	assert.Equal(t, `executionLayerApy "1e1000" is beyond what can be stored exactly (exponent past ±400)`, got[5].Flag,
		"1000% and -100% are within the bounds; a number too large to write out is flagged, not a store failure")
	assert.Equal(t, "", got[5].ExecutionAPY)

	f = newHostile(t, func(w http.ResponseWriter, offset int) {
		writeResult(w, map[string]any{"limit": 1000, "offset": offset, "startAt": day(0), "finishAt": day(9), "list": records})
	})
	v, err = f.env.ExecuteActivity(f.acts.CollectRewards, jobs.RewardsInput{Network: "ethereum", Address: "0x" + strings.Repeat("cd", 20)})
	require.NoError(t, err)
	require.NoError(t, v.Get(&res))
	assert.Equal(t, 3, res.Flagged)
	rws, err := f.store.Rewards(context.Background(), jobs.Query{})
	require.NoError(t, err)
	flagOf := map[string]string{}
	for _, r := range rws {
		flagOf[r.Period+"/"+r.Type] = r.Flag
	}
	assert.Equal(t, map[string]string{
		"1/consensus": "",
		"1/execution": "netAmount 0.00537976 is not amount 0.000537976 minus fee 0.000053798 (0.000484178), beyond rounding",
		"2/consensus": "",
		"2/execution": "execution reward -0.01 is negative: priority fees and MEV are paid to validators, never taken",
		"3/consensus": "fee -0.01 is negative: the validator's fee is a share it takes from the rewards; " +
			"the period ends (2024-01-04T00:00:00Z) before it starts (2024-01-05T00:00:00Z)",
	}, flagOf)
}

// SSV requests that cannot be set-up requests are stored flagged, not refused by the store.
func TestImpossibleSSVRequestsAreStoredFlagged(t *testing.T) {
	bad := ssvRequest("x", "processing")
	bad["validatorsCount"] = 0
	bad["amountPerValidator"] = "lots"
	big := ssvRequest("y", "processing")
	big["amountPerValidator"] = "4096"
	f := newHostile(t, func(w http.ResponseWriter, offset int) {
		writeResult(w, map[string]any{"limit": 1000, "offset": offset, "totalCount": 3, "list": []any{ssvRequest("ok", "processing"), bad, big}})
	})
	v, err := f.env.ExecuteActivity(f.acts.WatchSSV, jobs.SSVInput{})
	require.NoError(t, err)
	var res jobs.SSVResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, 2, res.Flagged)
	rows, err := f.store.SSVRequests(context.Background(), jobs.Query{})
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, "", rows[0].Flag)
	assert.Equal(t, `validatorsCount 0 is below 1; amountPerValidator "lots" is not a decimal`, rows[1].Flag)
	assert.Equal(t, "", rows[1].AmountPerValidator)
	assert.Equal(t, "amountPerValidator 4096 ETH is outside 32 to 2048 ETH, what one validator can hold", rows[2].Flag)
}
