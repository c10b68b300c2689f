//go:build integration

package integration

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stakeflow/stakeflow/internal/metrics/metricstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/workflows"
)

// healthURL is the base URL of the stack's worker health address (/healthz, /readyz, /metrics).
func healthURL(t *testing.T) string {
	t.Helper()
	return strings.TrimRight(st.HealthURL(), "/")
}

func get(t require.TestingT, url string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// sumOf adds the values of the samples of family name whose labels include want.
func sumOf(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	sum, found := 0.0, false
	for _, m := range metricstest.Matching(fams, name, want) {
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		}
	}
	return sum, found
}

// TestMetricsAfterStake stakes through the admin tool, then scrapes the running worker's /metrics:
// the stake is counted as started and completed, its broadcast as sent, its confirmation as
// finalized, the service calls are timed, and the Temporal SDK's own metrics are there too.
func TestMetricsAfterStake(t *testing.T) {
	checkMetricsAfterStake(t, healthURL(t), st.Stakers[9].String())
}

func checkMetricsAfterStake(t *testing.T, base, staker string) {
	// The worker starts in the background with the stack: wait until it reports ready.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := get(c, base+"/readyz")
		assert.Equal(c, http.StatusOK, code, body)
	}, time.Minute, 100*time.Millisecond)

	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker, "--sol", "2", "--id", id, "--wait", "--json")
	require.NoError(t, err, out)
	require.Len(t, decodeResult(t, out).Transactions, 1)

	stake := map[string]string{activities.LabelOperation: "stake"}
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := get(c, base+"/metrics")
		require.Equal(c, http.StatusOK, code)
		var parser expfmt.TextParser
		fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
		require.NoError(c, err)

		for _, tc := range []struct {
			name   string
			labels map[string]string
		}{
			{workflows.MetricOperationsStarted, stake},
			{workflows.MetricOperationsCompleted, stake},
			{workflows.MetricConfirmations, map[string]string{activities.LabelOperation: "stake", activities.LabelOutcome: "finalized"}},
			{activities.MetricBroadcasts, map[string]string{activities.LabelOutcome: activities.BroadcastSent}},
			{metrics.ServiceRequests, map[string]string{activities.LabelEndpoint: string(apiclient.EndpointStake), activities.LabelStatus: "ok"}},
			{metrics.ServiceRequestDuration, map[string]string{activities.LabelEndpoint: string(apiclient.EndpointBroadcast)}},
			{"temporal_workflow_completed_total", map[string]string{"workflow_type": "StakeWorkflow"}},
			{"temporal_activity_execution_latency_seconds", map[string]string{"activity_type": "Build"}},
		} {
			v, found := sumOf(fams, tc.name, tc.labels)
			if assert.True(c, found, "no sample %s%v", tc.name, tc.labels) {
				assert.GreaterOrEqual(c, v, 1.0, "%s%v", tc.name, tc.labels)
			}
		}
	}, 30*time.Second, 200*time.Millisecond)
}
