package jobs

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/workflows"
)

// Job states, as the status query and the current details name them.
const (
	StateCollecting = "collecting"
	StateStalled    = "stalled"
	StateCaughtUp   = "caught up"
	StateFailed     = "failed"
)

// Metrics the jobs' workflows record (through workflow.GetMetricsHandler: nothing on replay),
// labelled LabelJob with the job's kind.
const (
	// MetricJobStalls counts jobs entering a stall (a call that kept failing after its retries),
	// once per stall.
	MetricJobStalls = "stakeflow_job_stalls_total"
	// MetricJobFailures counts job runs that ended in failure, labelled
	// activities.LabelFailureType with workflows.FailureType(err) (PageNotAdvancing, JobRequestCap,
	// InvalidInput, ...).
	MetricJobFailures = "stakeflow_job_failures_total"
	// LabelJob is the job kind label (apy, rewards, ssv).
	LabelJob = "job"
)

// ErrRequestCap is the error type of a job run that reached its cap of requests (Limits.MaxRequests)
// with the service still answering more pages. Not retried: the next scheduled run resumes from
// what was stored.
const ErrRequestCap = "JobRequestCap"

// DefaultMaxRequests caps the requests of one job run, across its continue-as-new chain, when its
// input gives no cap: 500 pages of 1,000 records, far past a year of daily periods or the SSV
// list's 100,000 offsets.
const DefaultMaxRequests = 500

// stallRetry: the first wait of a stalled job before it tries again, doubling each try, at most
// maxStallWait. While a job stalls its schedule skips (overlap policy skip), so nothing else
// calls the service for its scope.
const (
	stallRetry   = time.Minute
	maxStallWait = 6 * time.Hour
)

// Status is what the status query (workflows.QueryStatus) of a job returns.
type Status struct {
	Kind  string `json:"kind"`
	Scope string `json:"scope"`
	// State is StateCollecting, StateStalled, StateCaughtUp or StateFailed.
	State    string   `json:"state"`
	Progress Progress `json:"progress"`
	// Stall says why the job waits and until when, while State is StateStalled (the last stall
	// stays after it healed, for the record, until the run ends).
	Stall *workflows.Stall `json:"stall,omitempty"`
	// Reason is the error that ended a failed run.
	Reason string `json:"reason,omitempty"`
	// MaxRequests is the run's cap of requests.
	MaxRequests int `json:"maxRequests"`
}

// job is one run of a job: its status, query and notifications.
type job struct {
	kind, scope, network, address string
	status                        Status
	notifyOn                      *bool // asked once, when first needed
}

func newJob(ctx workflow.Context, kind, scope, network, address string, p *Progress, maxRequests int) (*job, error) {
	j := &job{kind: kind, scope: scope, network: network, address: address,
		status: Status{Kind: kind, Scope: scope, State: StateCollecting, MaxRequests: maxRequests}}
	j.status.Progress = *p
	err := workflow.SetQueryHandler(ctx, workflows.QueryStatus, func() (Status, error) { return j.status, nil })
	return j, err
}

// stalls reports whether err is a failure that may heal by waiting (the service or the store
// down, throttling past the call's retries, a timeout): the job stalls on it instead of ending.
func stalls(err error) bool {
	var appErr *temporal.ApplicationError
	if temporal.IsCanceledError(err) {
		return false
	}
	if errors.As(err, &appErr) {
		return !appErr.NonRetryable()
	}
	return true
}

// stall shows the job stalled (status, current details, MetricJobStalls and a "stalled" event on
// the first try of a stall) and waits before the next try: stallRetry, doubling, at most
// maxStallWait.
func (j *job) stall(ctx workflow.Context, p *Progress, cause error) error {
	now := workflow.Now(ctx)
	tries, since := 1, now
	if st := p.Stall; st != nil {
		tries, since = st.Tries+1, st.Since
	}
	wait := min(stallRetry<<min(tries-1, 12), maxStallWait)
	p.Stall = &workflows.Stall{Step: StateCollecting, Since: since, Tries: tries, LastError: workflows.Reason(cause), NextTryAt: now.Add(wait)}
	j.status.State, j.status.Stall, j.status.Progress = StateStalled, p.Stall, *p
	workflow.SetCurrentDetails(ctx, details(j.kind, j.scope, p, StateStalled+": "+p.Stall.LastError))
	workflow.GetLogger(ctx).Warn("Job stalled", "tries", tries, "error", cause, "nextTry", wait)
	if tries == 1 {
		j.count(ctx, MetricJobStalls, nil)
		j.notify(ctx, p, notify.EventStalled, p.Stall.LastError)
	}
	if err := workflow.Sleep(ctx, wait); err != nil {
		return err
	}
	j.status.State = StateCollecting
	return nil
}

// failed records a run's failure (status, current details, MetricJobFailures, a "failed" event).
func (j *job) failed(ctx workflow.Context, p *Progress, err error) {
	j.status.State, j.status.Reason, j.status.Progress = StateFailed, workflows.Reason(err), *p
	workflow.SetCurrentDetails(ctx, details(j.kind, j.scope, p, StateFailed+": "+j.status.Reason))
	j.count(ctx, MetricJobFailures, map[string]string{activities.LabelFailureType: workflows.FailureType(err)})
	j.notify(ctx, p, notify.EventFailed, j.status.Reason)
}

func (j *job) count(ctx workflow.Context, name string, tags map[string]string) {
	h := workflow.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	h = h.WithTags(map[string]string{LabelJob: activities.LabelValue(j.kind)})
	if tags != nil {
		h = h.WithTags(tags)
	}
	h.Counter(name).Inc(1)
}

// notify posts an event of the job when the worker has a webhook, as operations do: an abandoned
// child workflow (workflows.NotifyWorkflow) whose start only is waited for.
func (j *job) notify(ctx workflow.Context, p *Progress, typ, reason string) {
	if j.notifyOn == nil {
		var cfg notify.Config
		lctx := workflow.WithLocalActivityOptions(ctx, workflows.PolicyOptions())
		var nf *notify.Notifier
		if err := workflow.ExecuteLocalActivity(lctx, nf.NotifyConfig).Get(ctx, &cfg); err != nil {
			workflow.GetLogger(ctx).Warn("Notifications off for this job: the worker's answer failed", "error", err)
		}
		j.notifyOn = &cfg.Enabled
	}
	if !*j.notifyOn {
		return
	}
	p.Notified++
	info := workflow.GetInfo(ctx)
	id := fmt.Sprintf("%s/%s/%d", info.WorkflowExecution.ID, typ, p.Notified)
	ev := notify.Event{ID: id, Type: typ, At: workflow.Now(ctx), OperationID: info.WorkflowExecution.ID,
		Network: j.network, Operation: "job-" + j.kind, Staker: j.address, Step: StateCollecting, Reason: reason}
	ev.Text = fmt.Sprintf("stakeflow: %s job %s %s: %s (%s)", j.kind, j.scope, typ, reason, ev.OperationID)
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	cctx := workflow.WithChildOptions(dctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:         "notify: " + typ + " of " + ev.OperationID,
	})
	child := workflow.ExecuteChildWorkflow(cctx, workflows.NotifyWorkflowType, ev)
	if err := child.GetChildWorkflowExecution().Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("Event not posted: its delivery could not start", "event", typ, "error", err)
	}
}
