package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
)

// Breakdown is where one side's operations spent their time at concurrency 1, read from the
// server's event times in their histories: for each phase, the median over the operations read.
// The phases partition a workflow's life from its start to its completion, so the medians add
// up to about the median total; what the client adds around it (starting, fetching the result)
// is the side's p50 less that total.
type Breakdown struct {
	// Ops is how many histories were read.
	Ops int `json:"ops"`
	// Total is the median time from the start event to the completion event.
	Total Duration `json:"total"`
	// Phases are in the order they first occur.
	Phases []PhaseTime `json:"phases"`
}

// PhaseTime is the median time operations spent in one phase.
type PhaseTime struct {
	Name   string   `json:"name"`
	Median Duration `json:"median"`
}

// Phase names of a breakdown; activities are named by their type (the ceiling's no-op
// activities have the stake's activities' names).
const (
	phaseFirstTask   = "start → first workflow task picked up"
	phaseTaskWait    = "later workflow tasks: waiting for the worker"
	phaseTaskWork    = "workflow tasks on the worker (local activities included)"
	phaseActivity    = "activity "
	phaseUnaccounted = "unaccounted"
)

// phasesOf splits one workflow's history into phases: from the start to the first workflow
// task's pickup; each later workflow task from scheduled to started; every workflow task from
// started to completed (the worker's work, local activities included, and the server's
// recording of the result); each activity from scheduled to closed (dispatch, execution,
// retries; an activity run more than once is one phase, its name saying how many runs). For a
// workflow that runs one thing at a time these cover its whole life; whatever
// they do not (a timer, say) is unaccounted. It returns nil for a history that did not complete.
func phasesOf(events []*history.HistoryEvent) (map[string]time.Duration, []string, time.Duration) {
	if len(events) < 2 || events[len(events)-1].GetEventType() != enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
		return nil, nil, 0
	}
	at := func(ev *history.HistoryEvent) time.Time { return ev.GetEventTime().AsTime() }
	out := map[string]time.Duration{}
	var order []string
	add := func(name string, d time.Duration) {
		if _, ok := out[name]; !ok {
			order = append(order, name)
		}
		out[name] += d
	}
	// An activity the workflow ran more than once is one phase, named with how often it ran.
	runs := map[string]int{}
	for _, ev := range events {
		if ev.GetEventType() == enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
			runs[ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()]++
		}
	}
	byID := map[int64]*history.HistoryEvent{}
	first := true
	for _, ev := range events {
		byID[ev.GetEventId()] = ev
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			sched := byID[ev.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId()]
			if first {
				add(phaseFirstTask, at(ev).Sub(at(events[0])))
				first = false
			} else if sched != nil {
				add(phaseTaskWait, at(ev).Sub(at(sched)))
			}
		case enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			if started := byID[ev.GetWorkflowTaskCompletedEventAttributes().GetStartedEventId()]; started != nil {
				add(phaseTaskWork, at(ev).Sub(at(started)))
			}
		default:
			if id, closed := activityClosed(ev); closed && byID[id] != nil {
				sched := byID[id]
				name := sched.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
				if n := runs[name]; n > 1 {
					name += fmt.Sprintf(" (%d runs)", n)
				}
				add(phaseActivity+name, at(ev).Sub(at(sched)))
			}
		}
	}
	total := at(events[len(events)-1]).Sub(at(events[0]))
	var covered time.Duration
	for _, d := range out {
		covered += d
	}
	add(phaseUnaccounted, max(total-covered, 0))
	return out, order, total
}

// activityClosed tells whether ev closes an activity, and the ID of the event that scheduled it.
func activityClosed(ev *history.HistoryEvent) (int64, bool) {
	switch ev.GetEventType() {
	case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
		return ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId(), true
	case enums.EVENT_TYPE_ACTIVITY_TASK_FAILED:
		return ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId(), true
	case enums.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
		return ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId(), true
	case enums.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
		return ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId(), true
	}
	return 0, false
}

// breakdownOf takes the median of each phase over the histories given; histories that did not
// complete are left out.
func breakdownOf(histories [][]*history.HistoryEvent) *Breakdown {
	var order []string
	samples := map[string][]time.Duration{}
	var totals []time.Duration
	for _, h := range histories {
		phases, names, total := phasesOf(h)
		if phases == nil {
			continue
		}
		for _, n := range names {
			if !slices.Contains(order, n) {
				order = append(order, n)
			}
		}
		for n, d := range phases {
			samples[n] = append(samples[n], d)
		}
		totals = append(totals, total)
	}
	if len(totals) == 0 {
		return nil
	}
	b := &Breakdown{Ops: len(totals), Total: Duration(Percentile(totals, 50))}
	// A phase not in every history (an activity that did not run) counts zero where it is absent.
	for _, n := range unaccountedLast(order) {
		s := samples[n]
		for len(s) < len(totals) {
			s = append(s, 0)
		}
		b.Phases = append(b.Phases, PhaseTime{Name: n, Median: Duration(Percentile(s, 50))})
	}
	return b
}

// unaccountedLast moves the unaccounted phase, if named, to the end of names.
func unaccountedLast(names []string) []string {
	if i := slices.Index(names, phaseUnaccounted); i >= 0 {
		names = append(slices.Delete(names, i, i+1), phaseUnaccounted)
	}
	return names
}

// breakdown reads the histories of the workflows ops names (at most breakdownOps of them, spread
// over the run) and breaks them down; nil when none could be read.
func (e *env) breakdown(ctx context.Context, ops []*SlowOp) *Breakdown {
	step := max((len(ops)+breakdownOps-1)/breakdownOps, 1)
	var histories [][]*history.HistoryEvent
	for i := 0; i < len(ops); i += step {
		// A history cut short by an error is left out: it did not complete.
		if events, err := e.history(ctx, ops[i].WorkflowID, ops[i].runID); err == nil {
			histories = append(histories, events)
		}
	}
	return breakdownOf(histories)
}

// breakdownOps is how many histories a breakdown reads per side.
const breakdownOps = 60
