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
}

func (l Limits) validate() error {
	switch {
	case l.MaxRecords < 0:
		return &workflows.InputError{Field: "maxRecords", Reason: fmt.Sprintf("%d is negative", l.MaxRecords)}
	case l.MaxActivities < 0:
		return &workflows.InputError{Field: "maxActivities", Reason: fmt.Sprintf("%d is negative", l.MaxActivities)}
	}
	return nil
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
// the service's Retry-After, bad input never.
func activityOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 15 * time.Minute,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        5 * time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        5 * time.Minute,
			MaximumAttempts:        20,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	})
}

// invalidInput is the job's refusal of its input.
func invalidInput(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, err)
}

// loop runs step until it reports it has caught up, continuing as new (through next) after the
// run's budget of calls or when the server suggests it.
func loop(ctx workflow.Context, kind, scope string, p *Progress, budget int, step func(workflow.Context, *Progress) (bool, error), next func() error) (Progress, error) {
	logger := workflow.GetLogger(ctx)
	p.Runs++
	for calls := 0; ; calls++ {
		if calls > 0 && (calls >= budget || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			logger.Info("Job continues as new", "calls", p.Calls, "read", p.Read)
			return *p, next()
		}
		more, err := step(ctx, p)
		if err != nil {
			workflow.SetCurrentDetails(ctx, details(kind, scope, p, "failed: "+err.Error()))
			return *p, err
		}
		p.Calls++
		if !more {
			workflow.SetCurrentDetails(ctx, details(kind, scope, p, "caught up"))
			logger.Info("Job caught up", "calls", p.Calls, "read", p.Read, "last", p.Last)
			return *p, nil
		}
		workflow.SetCurrentDetails(ctx, details(kind, scope, p, "collecting"))
	}
}

// details are the job's current details in the Web UI (Markdown).
func details(kind, scope string, p *Progress, state string) string {
	d := fmt.Sprintf("**%s job** %s: %s\n\n- calls: %d (run %d)\n- records read: %d\n- rows written: %d\n",
		kind, scope, state, p.Calls, p.Runs, p.Read, p.Upserted)
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
	return loop(ctx, KindAPY, in.Network, p, in.maxActivities(), collect(a.CollectAPY,
		actjobs.APYInput{Network: in.Network, Since: in.Since, MaxRecords: in.MaxRecords}), func() error {
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
	return loop(ctx, KindRewards, in.Address+" on "+in.Network, p, in.maxActivities(), collect(a.CollectRewards,
		actjobs.RewardsInput{Network: in.Network, Address: in.Address, Since: in.Since, MaxRecords: in.MaxRecords}), func() error {
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
	return loop(ctx, KindSSV, "token", p, in.maxActivities(), func(ctx workflow.Context, p *Progress) (bool, error) {
		var r actjobs.SSVResult
		err := workflow.ExecuteActivity(ctx, a.WatchSSV, actjobs.SSVInput{Offset: in.Offset, MaxRecords: in.MaxRecords}).Get(ctx, &r)
		if err != nil {
			return false, err
		}
		p.Read += r.Read
		p.Upserted += r.Read
		p.Changes += r.Changes
		p.Failed = append(p.Failed, r.Failed...)
		if len(p.Failed) > maxFailedKept {
			p.Failed = p.Failed[len(p.Failed)-maxFailedKept:]
		}
		in.Offset = r.Next
		return r.More, nil
	}, func() error {
		in.Progress = p
		return workflow.NewContinueAsNewError(ctx, SSVJobWorkflowType, in)
	})
}

// collect is one step of a collecting job: a call of activity (CollectAPY, CollectRewards) with
// input, its result added to the progress; it says whether there is more to read.
func collect(activity, input any) func(workflow.Context, *Progress) (bool, error) {
	return func(ctx workflow.Context, p *Progress) (bool, error) {
		var r actjobs.CollectResult
		if err := workflow.ExecuteActivity(ctx, activity, input).Get(ctx, &r); err != nil {
			return false, err
		}
		p.add(r)
		return r.More, nil
	}
}

func (p *Progress) add(r actjobs.CollectResult) {
	p.Read += r.Read
	p.Upserted += r.Upserted
	if r.Last != "" {
		p.Last = r.Last
	}
}
