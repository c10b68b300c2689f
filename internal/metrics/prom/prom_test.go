package prom

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func scrape(e *Exporter) string {
	rec := httptest.NewRecorder()
	e.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// TestExporterServesRecordedMetrics records through the handler and finds the samples, with
// Prometheus names, labels and histogram buckets, on the HTTP handler; a second exporter in the
// same process keeps its own registry.
func TestExporterServesRecordedMetrics(t *testing.T) {
	e := New(Options{FlushInterval: 10 * time.Millisecond, Buckets: []float64{1, 5}})
	t.Cleanup(func() { _ = e.Close() })
	other := New(Options{FlushInterval: 10 * time.Millisecond})
	t.Cleanup(func() { _ = other.Close() })

	h := e.Handler().WithTags(map[string]string{"network": "mainnet-beta", "check": "vote account"})
	h.Counter("stakeflow_things").Inc(2)
	h.Timer("stakeflow_wait").Record(3 * time.Second)
	other.Handler().Counter("stakeflow_things").Inc(7)

	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		body := scrape(e)
		assert.Contains(c, body, `stakeflow_things_total{check="vote account",network="mainnet-beta"} 2`)
		assert.Contains(c, body, `stakeflow_wait_seconds_bucket{check="vote account",network="mainnet-beta",le="5"} 1`)
		assert.Contains(c, body, `stakeflow_wait_seconds_bucket{check="vote account",network="mainnet-beta",le="1"} 0`)
		assert.Contains(c, body, "go_goroutines")
		assert.Contains(c, scrape(other), "stakeflow_things_total 7")
	}, 10*time.Second, 20*time.Millisecond)
}
