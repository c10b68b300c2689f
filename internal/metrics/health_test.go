package metrics_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/metrics/metricstest"
	"github.com/stakeflow/stakeflow/internal/metrics/prom"
)

// TestFeesStallsAndHealthGauges records fees, a stall and the health gauges through the worker's
// exporter and reads them back from its /metrics page.
func TestFeesStallsAndHealthGauges(t *testing.T) {
	exp := prom.New(prom.Options{FlushInterval: 5 * time.Millisecond})
	t.Cleanup(func() { _ = exp.Close() })
	h := exp.Handler()
	metrics.RecordFee(h, "solana", "testnet", "stake", 5000)
	metrics.RecordFee(h, "solana", "testnet", "stake", 7000)
	metrics.RecordFee(h, "solana", "testnet", "", 5000)
	metrics.ForOperation(h, "solana", "testnet", "unstake").Stalled()
	metrics.SetRPCVerified(h, "solana", "testnet", true)
	metrics.SetRPCVerified(h, "solana", "mainnet-beta", true)
	metrics.SetRPCVerified(h, "solana", "mainnet-beta", false)
	metrics.SetServiceAuthOK(h, false)
	// Nil handlers record nothing and do not panic.
	metrics.RecordFee(nil, "solana", "testnet", "stake", 1)
	metrics.SetRPCVerified(nil, "solana", "testnet", true)
	metrics.SetServiceAuthOK(nil, true)

	stake := map[string]string{metrics.LabelChain: "solana", metrics.LabelNetwork: "testnet", metrics.LabelOperation: "stake"}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rec := httptest.NewRecorder()
		exp.HTTPHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		var parser expfmt.TextParser
		fams, err := parser.TextToMetricFamilies(rec.Body)
		if !assert.NoError(c, err) {
			return
		}
		one := func(name string, labels map[string]string) float64 {
			ms := metricstest.Matching(fams, name, labels)
			if !assert.Len(c, ms, 1, "%s %v", name, labels) {
				return -1
			}
			if ms[0].GetGauge() != nil {
				return ms[0].GetGauge().GetValue()
			}
			return ms[0].GetCounter().GetValue()
		}
		assert.Equal(c, 12000.0, one(metrics.FeeLamports, stake))
		assert.Equal(c, 2.0, one(metrics.FeeTransactions, stake))
		assert.Equal(c, 5000.0, one(metrics.FeeLamports, map[string]string{metrics.LabelOperation: "unknown"}))
		assert.Equal(c, 1.0, one(metrics.Stalls, map[string]string{metrics.LabelOperation: "unstake"}))
		assert.Equal(c, 1.0, one(metrics.RPCVerified, map[string]string{metrics.LabelChain: "solana", metrics.LabelNetwork: "testnet"}))
		assert.Equal(c, 0.0, one(metrics.RPCVerified, map[string]string{metrics.LabelNetwork: "mainnet-beta"}))
		assert.Equal(c, 0.0, one(metrics.ServiceAuthOK, nil))
	}, 10*time.Second, 5*time.Millisecond)
}
