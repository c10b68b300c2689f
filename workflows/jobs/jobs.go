package jobs

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/workflows"
)

// Workflow types of the jobs.
const (
	APYJobWorkflowType     = "APYJobWorkflow"
	RewardsJobWorkflowType = "RewardsJobWorkflow"
	SSVJobWorkflowType     = "SSVJobWorkflow"
)

// Job kinds, as the starter names them (--job) and the StakeflowOperation search attribute
// records them.
const (
	KindAPY     = "apy"
	KindRewards = "rewards"
	KindSSV     = "ssv"
)

// maxFailedKept bounds the failed request IDs a job carries (the newest are kept; the store lists
// them all).
const maxFailedKept = 100

// DefaultMaxActivities is how many activity calls a job makes before it continues as new.
const DefaultMaxActivities = 50

// Module is the name of the data jobs's module: its operations run on the task queue
// workflows.TaskQueueOf(prefix, Module), served only by a worker configured for it.
const Module = "jobs"

// Register registers the jobs' workflows on r. Their functions are named apart from every other
// workflow's (see workflows/polygon.Register).
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(APYJob, workflow.RegisterOptions{Name: APYJobWorkflowType})
	r.RegisterWorkflowWithOptions(RewardsJob, workflow.RegisterOptions{Name: RewardsJobWorkflowType})
	r.RegisterWorkflowWithOptions(SSVJob, workflow.RegisterOptions{Name: SSVJobWorkflowType})
}

// Limits common to every job's input.
type Limits struct {
	// MaxRecords bounds the records one activity call reads (0: the activity's default).
	MaxRecords int `json:"maxRecords,omitempty"`
	// MaxActivities is how many activity calls a run makes before it continues as new (0:
	// DefaultMaxActivities).
	MaxActivities int `json:"maxActivities,omitempty"`
	// MaxRequests caps the requests to the service of one run, across its continue-as-new chain
	// (0: DefaultMaxRequests). A run that reaches it with pages left ends with ErrRequestCap.
	MaxRequests int `json:"maxRequests,omitempty"`
}

func (l Limits) validate() error {
	switch {
	case l.MaxRecords < 0:
		return &workflows.InputError{Field: "maxRecords", Reason: fmt.Sprintf("%d is negative", l.MaxRecords)}
	case l.MaxActivities < 0:
		return &workflows.InputError{Field: "maxActivities", Reason: fmt.Sprintf("%d is negative", l.MaxActivities)}
	case l.MaxRequests < 0:
		return &workflows.InputError{Field: "maxRequests", Reason: fmt.Sprintf("%d is negative", l.MaxRequests)}
	}
	return nil
}

func (l Limits) maxRequests() int {
	if l.MaxRequests <= 0 {
		return DefaultMaxRequests
	}
	return l.MaxRequests
}

func (l Limits) maxActivities() int {
	if l.MaxActivities <= 0 {
		return DefaultMaxActivities
	}
	return l.MaxActivities
}

// Progress sums a job's activity calls, across the runs of a continue-as-new chain.
type Progress struct {
	Calls    int    `json:"calls"`
	Read     int    `json:"read"`
	Upserted int    `json:"upserted"`
	Last     string `json:"last,omitempty"`
	// Changes and Failed are the SSV job's: status changes recorded, requests that failed.
	Changes int      `json:"changes,omitempty"`
	Failed  []string `json:"failed,omitempty"`
	// Runs counts the runs of the chain (1 for a job that never continued as new).
	Runs int `json:"runs"`
	// Requests counts the requests sent to the service (capped by Limits.MaxRequests); Flagged
	// the rows stored flagged (they contradict themselves or the chain).
	Requests int `json:"requests,omitempty"`
	Flagged  int `json:"flagged,omitempty"`
	// Stall is the job's current stall, nil when it is not stalled; Notified counts the events
	// posted (their IDs).
	Stall    *workflows.Stall `json:"stall,omitempty"`
	Notified int              `json:"notified,omitempty"`
}

// APYJobInput is the scope of an APY job.
type APYJobInput struct {
	Network string `json:"network"`
	// Since is where a network with nothing stored starts (zero: the service's default).
	Since time.Time `json:"since,omitzero"`
	Limits
	// Progress is carried from the previous run of the chain; nil at the first.
	Progress *Progress `json:"progress,omitempty"`
}

// Validate checks the network.
func (in APYJobInput) Validate() error {
	if !slices.Contains(actjobs.NetworkAPYNetworks, in.Network) {
		return &workflows.InputError{Field: "network", Reason: fmt.Sprintf("%q is not one of %s", in.Network, strings.Join(actjobs.NetworkAPYNetworks, ", "))}
	}
	return in.Limits.validate()
}

// RewardsJobInput is the scope of a rewards job.
type RewardsJobInput struct {
	Network string `json:"network"`
	Address string `json:"address"`
	// Since is where an address with nothing stored starts (zero: the service's default).
	Since time.Time `json:"since,omitzero"`
	Limits
	Progress *Progress `json:"progress,omitempty"`
}

// Validate checks the network and the address.
func (in RewardsJobInput) Validate() error {
	if !slices.Contains(actjobs.DelegatorAPRNetworks, in.Network) {
		return &workflows.InputError{Field: "network", Reason: fmt.Sprintf("%q is not one of %s", in.Network, strings.Join(actjobs.DelegatorAPRNetworks, ", "))}
	}
	if !actjobs.ValidAddress(in.Address) {
		return &workflows.InputError{Field: "address", Reason: fmt.Sprintf("%q is not an address of %s (0x and 40 hexadecimal digits)", in.Address, in.Network)}
	}
	return in.Limits.validate()
}

// SSVJobInput is the input of the SSV job (no scope: the worker's token).
type SSVJobInput struct {
	Limits
	// Offset is where the next call starts in the service's list (carried across runs).
	Offset   int       `json:"offset,omitempty"`
	Progress *Progress `json:"progress,omitempty"`
}

// Validate checks the limits.
func (in SSVJobInput) Validate() error {
	if in.Offset < 0 {
		return &workflows.InputError{Field: "offset", Reason: fmt.Sprintf("%d is negative", in.Offset)}
	}
	return in.Limits.validate()
}

// Summary is the one-line summary of a job for the Web UI.
func Summary(kind, network, address string) string {
	switch kind {
	case KindAPY:
		return "collect the network APY of " + network
	case KindRewards:
		return "collect the delegator rewards of " + address + " on " + network
	case KindSSV:
		return "watch the SSV set-up requests"
	}
	return "job " + kind
}

// activityOptions are the options of every job activity: a call reads at most a few pages
// between heartbeats; service outages and store failures are retried with backoff, a 429 after
// the service's Retry-After, bad input and a service that does not page never. After its
// attempts the job stalls (see job.stall) instead of trying again at once.
func activityOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 15 * time.Minute,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        5 * time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        5 * time.Minute,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	})
}

// invalidInput is the job's refusal of its input.
func invalidInput(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, err)
}

// step is one activity call of a job: it adds the call's result to the progress and says whether
// there is more to read and whether the call's request allowance stopped it.
type step func(ctx workflow.Context, p *Progress, allowance int) (more, capped bool, err error)

// loop runs step until it reports it has caught up, continuing as new (through next) after the
// run's budget of calls or when the server suggests it. A call that keeps failing in a way that
// may heal stalls the job (status, details, metric, notification) and is tried again after a
// backoff; a page that does not advance, the request cap reached or bad input end the run.
func loop(ctx workflow.Context, j *job, p *Progress, lim Limits, call step, next func() error) (Progress, error) {
	logger := workflow.GetLogger(ctx)
	p.Runs++
	j.status.Progress = *p
	maxReq := lim.maxRequests()
	fail := func(err error) (Progress, error) {
		j.failed(ctx, p, err)
		return *p, err
	}
	for calls := 0; ; calls++ {
		if calls > 0 && (calls >= lim.maxActivities() || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			logger.Info("Job continues as new", "calls", p.Calls, "read", p.Read)
			return *p, next()
		}
		before := p.Last
		more, capped, err := call(ctx, p, max(maxReq-p.Requests, 1))
		j.status.Progress = *p
		if err != nil {
			if stalls(err) {
				if serr := j.stall(ctx, p, err); serr != nil {
					return *p, serr
				}
				continue
			}
			return fail(err)
		}
		p.Calls++
		p.Stall = nil
		j.status.State, j.status.Progress = StateCollecting, *p
		if more && (capped || p.Requests >= maxReq) {
			return fail(temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"%s job %s: %d requests sent in this run, its cap (maxRequests %d), and the service still has pages to read",
				j.kind, j.scope, p.Requests, maxReq), ErrRequestCap, nil))
		}
		if more && before != "" && p.Last == before {
			return fail(temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"%s job %s: the service's pages do not advance: two calls in a row stopped at staking period %s", j.kind, j.scope, before),
				actjobs.ErrPageNotAdvancing, nil))
		}
		if !more {
			j.status.State = StateCaughtUp
			workflow.SetCurrentDetails(ctx, details(j.kind, j.scope, p, StateCaughtUp))
			logger.Info("Job caught up", "calls", p.Calls, "read", p.Read, "last", p.Last)
			return *p, nil
		}
		workflow.SetCurrentDetails(ctx, details(j.kind, j.scope, p, StateCollecting))
	}
}

// details are the job's current details in the Web UI (Markdown).
func details(kind, scope string, p *Progress, state string) string {
	d := fmt.Sprintf("**%s job** %s: %s\n\n- calls: %d (run %d)\n- records read: %d\n- rows written: %d\n",
		kind, scope, state, p.Calls, p.Runs, p.Read, p.Upserted)
	if p.Requests > 0 {
		d += fmt.Sprintf("- requests: %d\n", p.Requests)
	}
	if p.Flagged > 0 {
		d += fmt.Sprintf("- rows stored flagged: %d (see data export)\n", p.Flagged)
	}
	if st := p.Stall; st != nil && state != StateCaughtUp {
		d += fmt.Sprintf("- stalled since %s, %d tries, next at %s\n", st.Since.UTC().Format(time.RFC3339), st.Tries, st.NextTryAt.UTC().Format(time.RFC3339))
	}
	if p.Last != "" {
		d += "- last staking period: " + p.Last + "\n"
	}
	if kind == KindSSV {
		d += fmt.Sprintf("- status changes: %d\n- failed requests: %d\n", p.Changes, len(p.Failed))
	}
	return d
}

func progress(p *Progress) *Progress {
	if p == nil {
		return &Progress{}
	}
	return p
}

// APYJob collects a network's APY up to now.
func APYJob(ctx workflow.Context, in APYJobInput) (Progress, error) {
	if err := in.Validate(); err != nil {
		return Progress{}, invalidInput(err)
	}
	ctx = activityOptions(ctx)
	var a *actjobs.Activities
	p := progress(in.Progress)
	j, err := newJob(ctx, KindAPY, in.Network, in.Network, "", p, in.maxRequests())
	if err != nil {
		return *p, err
	}
	return loop(ctx, j, p, in.Limits, func(ctx workflow.Context, p *Progress, allowance int) (bool, bool, error) {
		return collect(ctx, p, a.CollectAPY, actjobs.APYInput{Network: in.Network, Since: in.Since, MaxRecords: in.MaxRecords, MaxRequests: allowance})
	}, func() error {
		in.Progress = p
		return workflow.NewContinueAsNewError(ctx, APYJobWorkflowType, in)
	})
}

// RewardsJob collects a delegator's rewards up to now.
func RewardsJob(ctx workflow.Context, in RewardsJobInput) (Progress, error) {
	if err := in.Validate(); err != nil {
		return Progress{}, invalidInput(err)
	}
	ctx = activityOptions(ctx)
	var a *actjobs.Activities
	p := progress(in.Progress)
	j, err := newJob(ctx, KindRewards, in.Address+" on "+in.Network, in.Network, in.Address, p, in.maxRequests())
	if err != nil {
		return *p, err
	}
	return loop(ctx, j, p, in.Limits, func(ctx workflow.Context, p *Progress, allowance int) (bool, bool, error) {
		return collect(ctx, p, a.CollectRewards, actjobs.RewardsInput{Network: in.Network, Address: in.Address, Since: in.Since,
			MaxRecords: in.MaxRecords, MaxRequests: allowance})
	}, func() error {
		in.Progress = p
		return workflow.NewContinueAsNewError(ctx, RewardsJobWorkflowType, in)
	})
}

// SSVJob reads every set-up request once and records their status changes.
func SSVJob(ctx workflow.Context, in SSVJobInput) (Progress, error) {
	if err := in.Validate(); err != nil {
		return Progress{}, invalidInput(err)
	}
	ctx = activityOptions(ctx)
	var a *actjobs.Activities
	p := progress(in.Progress)
	j, err := newJob(ctx, KindSSV, "token", "", "", p, in.maxRequests())
	if err != nil {
		return *p, err
	}
	return loop(ctx, j, p, in.Limits, func(ctx workflow.Context, p *Progress, allowance int) (bool, bool, error) {
		var r actjobs.SSVResult
		err := workflow.ExecuteActivity(ctx, a.WatchSSV, actjobs.SSVInput{Offset: in.Offset, MaxRecords: in.MaxRecords, MaxRequests: allowance}).Get(ctx, &r)
		if err != nil {
			return false, false, err
		}
		p.Read += r.Read
		p.Upserted += r.Read
		p.Requests += r.Requests
		p.Flagged += r.Flagged
		p.Changes += r.Changes
		p.Failed = append(p.Failed, r.Failed...)
		if len(p.Failed) > maxFailedKept {
			p.Failed = p.Failed[len(p.Failed)-maxFailedKept:]
		}
		in.Offset = r.Next
		return r.More, r.Capped, nil
	}, func() error {
		in.Progress = p
		return workflow.NewContinueAsNewError(ctx, SSVJobWorkflowType, in)
	})
}

// collect is one call of a collecting activity (CollectAPY, CollectRewards) with input, its
// result added to the progress.
func collect(ctx workflow.Context, p *Progress, activity, input any) (more, capped bool, err error) {
	var r actjobs.CollectResult
	if err := workflow.ExecuteActivity(ctx, activity, input).Get(ctx, &r); err != nil {
		return false, false, err
	}
	p.add(r)
	return r.More, r.Capped, nil
}

func (p *Progress) add(r actjobs.CollectResult) {
	p.Read += r.Read
	p.Upserted += r.Upserted
	p.Requests += r.Requests
	p.Flagged += r.Flagged
	if r.Last != "" {
		p.Last = r.Last
	}
}
