package jobs

import (
	"context"
	"encoding/json"
	"maps"
	"math/big"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/stakeflow/stakeflow/activities"
)

// Gauges the jobs set, through activity.GetMetricsHandler (internal/metrics/doc.go lists every
// stakeflow metric).
const (
	// MetricNetworkAPY is the newest staking period's network APY, percent, by network.
	MetricNetworkAPY = "stakeflow_network_apy"
	// MetricSSVRequests is the number of stored SSV set-up requests by status.
	MetricSSVRequests = "stakeflow_ssv_requests"
)

// recordAPY sets MetricNetworkAPY; an APY that is not a decimal is not recorded.
func recordAPY(ctx context.Context, network string, apy json.Number) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	r, ok := new(big.Rat).SetString(apy.String())
	if !ok {
		return
	}
	f, _ := r.Float64()
	h.WithTags(map[string]string{activities.LabelNetwork: activities.LabelValue(network)}).Gauge(MetricNetworkAPY).Update(f)
}

// recordSSV sets MetricSSVRequests for every status counted, and to 0 for each status set before
// that no request holds any more.
func (a *Activities) recordSSV(ctx context.Context, counts map[string]int) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.statuses == nil {
		a.statuses = map[string]bool{}
	}
	for s := range counts {
		a.statuses[s] = true
	}
	for _, s := range slices.Sorted(maps.Keys(a.statuses)) {
		h.WithTags(map[string]string{activities.LabelStatus: activities.LabelValue(s)}).Gauge(MetricSSVRequests).Update(float64(counts[s]))
	}
}
