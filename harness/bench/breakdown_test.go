package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// historyOf builds a history from (type, milliseconds after the start, the ID an attribute
// points at, activity type) rows; event IDs count from 1.
type evRow struct {
	t     enums.EventType
	ms    int
	ref   int64
	activ string
}

func historyOf(rows ...evRow) []*history.HistoryEvent {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var out []*history.HistoryEvent
	for i, r := range rows {
		ev := &history.HistoryEvent{EventId: int64(i + 1), EventType: r.t, EventTime: timestamppb.New(t0.Add(time.Duration(r.ms) * time.Millisecond))}
		switch r.t {
		case enums.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			ev.Attributes = &history.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &history.WorkflowTaskStartedEventAttributes{ScheduledEventId: r.ref}}
		case enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			ev.Attributes = &history.HistoryEvent_WorkflowTaskCompletedEventAttributes{WorkflowTaskCompletedEventAttributes: &history.WorkflowTaskCompletedEventAttributes{StartedEventId: r.ref}}
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			ev.Attributes = &history.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &history.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: r.activ}}}
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			ev.Attributes = &history.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &history.ActivityTaskCompletedEventAttributes{ScheduledEventId: r.ref}}
		case enums.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			ev.Attributes = &history.HistoryEvent_ActivityTaskFailedEventAttributes{ActivityTaskFailedEventAttributes: &history.ActivityTaskFailedEventAttributes{ScheduledEventId: r.ref}}
		}
		out = append(out, ev)
	}
	return out
}

const (
	wfStarted   = enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
	wfCompleted = enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
	wtScheduled = enums.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
	wtStarted   = enums.EVENT_TYPE_WORKFLOW_TASK_STARTED
	wtCompleted = enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
	atScheduled = enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
	atCompleted = enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
	atFailed    = enums.EVENT_TYPE_ACTIVITY_TASK_FAILED
	timerFired  = enums.EVENT_TYPE_TIMER_FIRED
)

// oneActivity is a workflow that runs one activity, taking the given milliseconds in it, and
// waits wait milliseconds on a timer after it.
func oneActivity(activity string, took, wait int) []*history.HistoryEvent {
	return historyOf(
		evRow{t: wfStarted, ms: 0},
		evRow{t: wtScheduled, ms: 0},
		evRow{t: wtStarted, ms: 2, ref: 2},
		evRow{t: wtCompleted, ms: 5, ref: 3},
		evRow{t: atScheduled, ms: 5, activ: activity},
		evRow{t: atCompleted, ms: 5 + took, ref: 5},
		evRow{t: wtScheduled, ms: 5 + took + wait},
		evRow{t: wtStarted, ms: 7 + took + wait, ref: 7},
		evRow{t: wtCompleted, ms: 10 + took + wait, ref: 8},
		evRow{t: wfCompleted, ms: 10 + took + wait},
	)
}

func TestPhasesPartitionAWorkflowsLife(t *testing.T) {
	phases, order, total := phasesOf(oneActivity("Build", 4, 0))
	assert.Equal(t, 14*time.Millisecond, total)
	assert.Equal(t, map[string]time.Duration{
		phaseFirstTask:          2 * time.Millisecond,
		phaseTaskWork:           6 * time.Millisecond,
		phaseActivity + "Build": 4 * time.Millisecond,
		phaseTaskWait:           2 * time.Millisecond,
		phaseUnaccounted:        0,
	}, phases)
	assert.Equal(t, []string{phaseFirstTask, phaseTaskWork, phaseActivity + "Build", phaseTaskWait, phaseUnaccounted}, order)

	phases, _, total = phasesOf(oneActivity("Build", 4, 10))
	assert.Equal(t, 24*time.Millisecond, total)
	assert.Equal(t, 10*time.Millisecond, phases[phaseUnaccounted], "a timer's wait is in no phase")

	failed := oneActivity("Broadcast", 3, 0)
	failed[5].EventType = atFailed
	failed[5].Attributes = &history.HistoryEvent_ActivityTaskFailedEventAttributes{ActivityTaskFailedEventAttributes: &history.ActivityTaskFailedEventAttributes{ScheduledEventId: 5}}
	phases, _, _ = phasesOf(failed)
	assert.Equal(t, 3*time.Millisecond, phases[phaseActivity+"Broadcast"], "a failed activity's time counts too")

	twice := historyOf(
		evRow{t: wfStarted, ms: 0},
		evRow{t: wtScheduled, ms: 0},
		evRow{t: wtStarted, ms: 1, ref: 2},
		evRow{t: wtCompleted, ms: 2, ref: 3},
		evRow{t: atScheduled, ms: 2, activ: "Preflight"},
		evRow{t: atCompleted, ms: 5, ref: 5},
		evRow{t: atScheduled, ms: 5, activ: "Build"},
		evRow{t: atCompleted, ms: 9, ref: 7},
		evRow{t: atScheduled, ms: 9, activ: "Preflight"},
		evRow{t: atCompleted, ms: 13, ref: 9},
		evRow{t: wfCompleted, ms: 13},
	)
	phases, order, _ = phasesOf(twice)
	assert.Equal(t, 7*time.Millisecond, phases[phaseActivity+"Preflight (2 runs)"], "both runs of an activity count, under one phase")
	assert.Equal(t, 4*time.Millisecond, phases[phaseActivity+"Build"])
	assert.Equal(t, []string{phaseFirstTask, phaseTaskWork, phaseActivity + "Preflight (2 runs)", phaseActivity + "Build", phaseUnaccounted}, order)

	open := oneActivity("Build", 4, 0)
	phases, _, _ = phasesOf(open[:len(open)-1])
	assert.Nil(t, phases, "a workflow still running is not broken down")
}

func TestBreakdownTakesMediansAndCountsMissingPhasesAsZero(t *testing.T) {
	var hs [][]*history.HistoryEvent
	for _, took := range []int{1, 2, 9} {
		hs = append(hs, oneActivity("Build", took, 0))
	}
	hs = append(hs, oneActivity("Confirm", 50, 0)) // no Build: Build counts zero here
	open := oneActivity("Build", 4, 0)
	hs = append(hs, open[:5]) // not completed: left out

	b := breakdownOf(hs)
	require.NotNil(t, b)
	assert.Equal(t, 4, b.Ops)
	assert.Equal(t, Duration(12*time.Millisecond), b.Total, "median of 11, 12, 19 and 60 ms (nearest rank)")
	got := map[string]Duration{}
	for _, p := range b.Phases {
		got[p.Name] = p.Median
	}
	assert.Equal(t, Duration(1*time.Millisecond), got[phaseActivity+"Build"], "median of 0, 1, 2 and 9 ms")
	assert.Equal(t, Duration(0), got[phaseActivity+"Confirm"], "median of 0, 0, 0 and 50 ms")
	assert.Equal(t, phaseUnaccounted, b.Phases[len(b.Phases)-1].Name, "unaccounted comes last")

	assert.Nil(t, breakdownOf(nil))
	assert.Nil(t, breakdownOf(hs[4:]), "nothing completed")
}
