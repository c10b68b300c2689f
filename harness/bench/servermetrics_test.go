package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const exposition = `# HELP persistence_requests persistence_requests counter
# TYPE persistence_requests counter
persistence_requests{namespace="default",operation="UpdateWorkflowExecution",service_name="history"} 40
persistence_requests{namespace="other",operation="UpdateWorkflowExecution",service_name="history"} 2
persistence_requests{operation="CreateWorkflowExecution",service_name="history"} 10
persistence_requests{operation="GetTasks",service_name="matching"} 7
# HELP visibility_persistence_requests visibility_persistence_requests counter
# TYPE visibility_persistence_requests counter
visibility_persistence_requests{operation="UpsertWorkflowExecution",visibility_plugin_name="sqlite"} 20
visibility_persistence_requests{operation="RecordWorkflowExecutionClosed",visibility_plugin_name="sqlite"} 10
visibility_persistence_requests{operation="ListWorkflowExecutions",visibility_plugin_name="sqlite"} 3
# HELP task_requests task_requests counter
# TYPE task_requests counter
task_requests{operation="TimerActiveTaskWorkflowTaskTimeout",task_type="TimerActiveTaskWorkflowTaskTimeout"} 90
task_requests{operation="TimerActiveTaskActivityTimeout",task_type="TimerActiveTaskActivityTimeout"} 30
task_requests{operation="TransferActiveTaskWorkflowTask",task_type="TransferActiveTaskWorkflowTask"} 50
# HELP service_requests service_requests counter
# TYPE service_requests counter
service_requests{operation="RespondWorkflowTaskCompleted"} 50
service_requests{operation="RespondActivityTaskCompleted"} 40
# HELP persistence_latency persistence_latency histogram
# TYPE persistence_latency histogram
persistence_latency_bucket{operation="GetTasks",le="0.001"} 5
persistence_latency_bucket{operation="GetTasks",le="+Inf"} 7
persistence_latency_sum{operation="GetTasks"} 0.01
persistence_latency_count{operation="GetTasks"} 7
# HELP memory_allocated memory_allocated gauge
# TYPE memory_allocated gauge
memory_allocated 123456
`

func TestScrapeCounters(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(exposition))
	}))
	defer srv.Close()

	c, err := scrapeCounters(context.Background(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, 42.0, c["persistence_requests{operation=UpdateWorkflowExecution}"],
		"the namespace and service labels are dropped and their series summed")
	assert.Equal(t, 7.0, c["persistence_requests{operation=GetTasks}"])
	assert.NotContains(t, c, "memory_allocated", "gauges are not counters")
	for k := range c {
		assert.NotContains(t, k, "persistence_latency", "histograms are not counters")
	}

	w := c.Work()
	assert.Equal(t, ServerWork{
		WorkflowTasks: 50, ActivityTasks: 40,
		HistoryWrites:       52, // 42 updates + 10 creates
		VisibilityWrites:    30, // the list is a read
		TimerTasks:          120,
		PersistenceRequests: 59,
	}, w)
}

func TestScrapeCountersErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, err := scrapeCounters(context.Background(), srv.URL)
	require.ErrorContains(t, err, "503")
}

func TestCountersPerOp(t *testing.T) {
	before := Counters{"a": 10, "b": 5, "gone": 1}
	after := Counters{"a": 30, "b": 5, "new": 4}
	assert.Equal(t, Counters{"a": 2, "new": 0.4}, after.perOp(before, 10),
		"growth per operation; counters that did not grow are left out")
	assert.Nil(t, after.perOp(nil, 10), "no reading before, no figures")
	assert.Nil(t, Counters(nil).perOp(before, 10), "no reading after, no figures")
	assert.Nil(t, after.perOp(before, 0), "no operations, no figures")
}

func TestMergeWeighsServerCountersByOps(t *testing.T) {
	merged := Merge(
		Stats{Ops: 100, ServerCounters: Counters{"a": 2}},
		Stats{Ops: 300, ServerCounters: Counters{"a": 4, "b": 1}},
		Stats{Ops: 50}, // a round without a reading does not dilute the others
	)
	assert.InDelta(t, 3.5, merged.ServerCounters["a"], 1e-9)
	assert.InDelta(t, 0.75, merged.ServerCounters["b"], 1e-9)
}

func TestDrainWaitsFromTheRoundsEnd(t *testing.T) {
	e := &env{cfg: Config{Drain: 80 * time.Millisecond, TemporalCLI: "no-such-server"}}
	ended := time.Now()
	e.drain(context.Background(), ended)
	assert.GreaterOrEqual(t, time.Since(ended), 80*time.Millisecond)

	e.cfg.Drain = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() { e.drain(ctx, time.Now()); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("drain ignored its context's end")
	}
}
