package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Counters are the dev server's Prometheus counters, keyed by name and labels
// (`persistence_requests{operation=UpdateWorkflowExecution}`).
type Counters map[string]float64

// ignoredLabels say nothing about the work a side makes the server do.
var ignoredLabels = map[string]bool{"namespace": true, "namespace_state": true, "service_name": true, "host": true}

// scrapeCounters reads every counter the dev server exports at url.
func scrapeCounters(ctx context.Context, url string) (Counters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading server metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading server metrics: %s", resp.Status)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing server metrics: %w", err)
	}
	out := Counters{}
	for name, f := range fams {
		if f.GetType() != dto.MetricType_COUNTER {
			continue
		}
		for _, m := range f.GetMetric() {
			out[counterKey(name, m.GetLabel())] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

func counterKey(name string, labels []*dto.LabelPair) string {
	var kv []string
	for _, l := range labels {
		if !ignoredLabels[l.GetName()] && l.GetValue() != "" && l.GetValue() != "_unknown_" {
			kv = append(kv, l.GetName()+"="+l.GetValue())
		}
	}
	if len(kv) == 0 {
		return name
	}
	sort.Strings(kv)
	return name + "{" + strings.Join(kv, ",") + "}"
}

// perOp is how much each counter grew from before to c, per operation; counters that did not
// grow are left out.
func (c Counters) perOp(before Counters, ops int) Counters {
	if c == nil || before == nil || ops == 0 {
		return nil
	}
	out := Counters{}
	for k, v := range c {
		if d := v - before[k]; d > 0 {
			out[k] = d / float64(ops)
		}
	}
	return out
}

// ServerWork is what a side asked of the server per operation, read from its counters.
type ServerWork struct {
	// WorkflowTasks and ActivityTasks are the workflow and activity task completions.
	WorkflowTasks float64 `json:"workflowTasks"`
	ActivityTasks float64 `json:"activityTasks"`
	// HistoryWrites are the executions' create and update transactions.
	HistoryWrites float64 `json:"historyWrites"`
	// VisibilityWrites are the visibility records written (started, upserted, closed).
	VisibilityWrites float64 `json:"visibilityWrites"`
	// TimerTasks are the timer tasks processed (workflow-task and activity timeouts, timers).
	TimerTasks float64 `json:"timerTasks"`
	// PersistenceRequests are all of the server's calls to its database but visibility's.
	PersistenceRequests float64 `json:"persistenceRequests"`
}

// Work sums c into ServerWork.
func (c Counters) Work() ServerWork {
	in := func(values ...string) func(string) bool {
		return func(v string) bool { return slices.Contains(values, v) }
	}
	prefix := func(p string) func(string) bool {
		return func(v string) bool { return strings.HasPrefix(v, p) }
	}
	return ServerWork{
		WorkflowTasks:       c.sum("service_requests", "operation", in("RespondWorkflowTaskCompleted")),
		ActivityTasks:       c.sum("service_requests", "operation", in("RespondActivityTaskCompleted")),
		HistoryWrites:       c.sum("persistence_requests", "operation", in("CreateWorkflowExecution", "UpdateWorkflowExecution")),
		VisibilityWrites:    c.sum("visibility_persistence_requests", "operation", in("RecordWorkflowExecutionStarted", "UpsertWorkflowExecution", "RecordWorkflowExecutionClosed")),
		TimerTasks:          c.sum("task_requests", "task_type", prefix("TimerActive")),
		PersistenceRequests: c.sum("persistence_requests", "operation", prefix("")),
	}
}

// sum adds the counters named name whose label's value keep accepts.
func (c Counters) sum(name, label string, keep func(string) bool) float64 {
	var t float64
	for k, v := range c {
		if n, l := splitKey(k); n == name && keep(l[label]) {
			t += v
		}
	}
	return t
}

// splitKey parses a counterKey back into its name and labels.
func splitKey(k string) (string, map[string]string) {
	name, rest, ok := strings.Cut(k, "{")
	labels := map[string]string{}
	if ok {
		for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
			if l, v, ok := strings.Cut(kv, "="); ok {
				labels[l] = v
			}
		}
	}
	return name, labels
}
