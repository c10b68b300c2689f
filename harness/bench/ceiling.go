package bench

import (
	"context"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// Names under which the ceiling workflows and their activities are registered. They exist only
// in the benchmark's own worker.
const (
	// CeilingWorkflowName is StakeWorkflow with activities that do nothing: its shape (CheckPolicy
	// and Sign local; CheckValidator, Build, CheckFresh, Broadcast and Confirm normal activities)
	// and what it writes for the Web UI: current details at each step and search attributes
	// upserted where the operation rests (confirming, the end). It is started as a stake is, with
	// the stake's search attributes.
	CeilingWorkflowName = "BenchCeilingWorkflow"
	// CeilingPlainWorkflowName is the same shape without search attributes or current details:
	// what those cost the server.
	CeilingPlainWorkflowName = "BenchCeilingPlainWorkflow"
	// CeilingLocalWorkflowName is the plain ceiling with Build and Broadcast local too, so that
	// only CheckValidator and Confirm are normal activities.
	CeilingLocalWorkflowName = "BenchCeilingLocalWorkflow"
	// CeilingNaiveWorkflowName is the plain ceiling with all seven activities normal, none local.
	CeilingNaiveWorkflowName = "BenchCeilingNaiveWorkflow"
	// noopPrefix prefixes the no-op activities' names.
	noopPrefix = "BenchNoop"
)

// signatureLike stands for a transaction signature in the ceiling's search attributes: as long
// as the longest base58 ed25519 signature, so that it costs alike.
var signatureLike = strings.Repeat("5", 88)

// Shape tells which activities of a ceiling workflow run as local activities, and whether it
// writes what StakeWorkflow shows the Web UI.
type Shape struct {
	// LocalBuildBroadcast runs Build and Broadcast as local activities.
	LocalBuildBroadcast bool
	// Plain leaves out the search-attribute upserts and current details.
	Plain bool
	// Naive runs every activity as a normal activity (CheckPolicy and Sign too).
	Naive bool
}

// CeilingInput is the input of the ceiling workflows; it carries about what StakeWorkflow's
// activities carry so that payload handling costs alike.
type CeilingInput struct {
	Staker      string `json:"staker"`
	VoteAccount string `json:"voteAccount"`
	Lamports    uint64 `json:"lamports"`
}

// NoopActivities are activities that return at once. Their methods mirror StakeWorkflow's.
type NoopActivities struct{}

// NoopResult is what every no-op activity returns.
type NoopResult struct {
	Value string `json:"value"`
}

// CheckPolicy does nothing.
func (*NoopActivities) CheckPolicy(context.Context, CeilingInput) (NoopResult, error) {
	return NoopResult{}, nil
}

// CheckValidator does nothing.
func (*NoopActivities) CheckValidator(context.Context, CeilingInput) (NoopResult, error) {
	return NoopResult{}, nil
}

// Build does nothing.
func (*NoopActivities) Build(context.Context, CeilingInput) (NoopResult, error) {
	return NoopResult{}, nil
}

// Sign does nothing.
func (*NoopActivities) Sign(context.Context, CeilingInput) (NoopResult, error) {
	return NoopResult{}, nil
}

// CheckFresh does nothing.
func (*NoopActivities) CheckFresh(context.Context, CeilingInput) (NoopResult, error) {
	return NoopResult{}, nil
}

// Broadcast does nothing.
func (*NoopActivities) Broadcast(context.Context, CeilingInput) (NoopResult, error) {
	return NoopResult{}, nil
}

// Confirm does nothing.
func (*NoopActivities) Confirm(context.Context, CeilingInput) (NoopResult, error) {
	return NoopResult{}, nil
}

// RegisterCeiling registers the ceiling workflows and the no-op activities on r.
func RegisterCeiling(r worker.Registry) {
	r.RegisterWorkflowWithOptions(CeilingWorkflow, workflow.RegisterOptions{Name: CeilingWorkflowName})
	r.RegisterWorkflowWithOptions(CeilingPlainWorkflow, workflow.RegisterOptions{Name: CeilingPlainWorkflowName})
	r.RegisterWorkflowWithOptions(CeilingLocalWorkflow, workflow.RegisterOptions{Name: CeilingLocalWorkflowName})
	r.RegisterWorkflowWithOptions(CeilingNaiveWorkflow, workflow.RegisterOptions{Name: CeilingNaiveWorkflowName})
	r.RegisterActivityWithOptions(&NoopActivities{}, activity.RegisterOptions{Name: noopPrefix})
}

// CeilingWorkflow runs StakeWorkflow's sequence with no-op activities, writing what
// StakeWorkflow writes for the Web UI.
func CeilingWorkflow(ctx workflow.Context, in CeilingInput) error {
	return runCeiling(ctx, in, Shape{})
}

// CeilingPlainWorkflow runs the sequence without search attributes or current details.
func CeilingPlainWorkflow(ctx workflow.Context, in CeilingInput) error {
	return runCeiling(ctx, in, Shape{Plain: true})
}

// CeilingLocalWorkflow runs the plain sequence with Build and Broadcast as local activities.
func CeilingLocalWorkflow(ctx workflow.Context, in CeilingInput) error {
	return runCeiling(ctx, in, Shape{Plain: true, LocalBuildBroadcast: true})
}

// CeilingNaiveWorkflow runs the plain sequence with every activity normal: what the local
// CheckPolicy and Sign save.
func CeilingNaiveWorkflow(ctx workflow.Context, in CeilingInput) error {
	return runCeiling(ctx, in, Shape{Plain: true, Naive: true})
}

func runCeiling(ctx workflow.Context, in CeilingInput, shape Shape) error {
	// Each activity runs with the options StakeWorkflow gives it (timeouts and retry policies,
	// which cost the server timer tasks), moved to the other kind where the shape says so.
	normalOpts, localOpts := wfsolana.StakeStepOptions()
	for name, lo := range localOpts {
		normalOpts[name] = workflow.ActivityOptions{StartToCloseTimeout: lo.StartToCloseTimeout, RetryPolicy: lo.RetryPolicy}
	}
	for name, ao := range normalOpts {
		if _, ok := localOpts[name]; !ok {
			localOpts[name] = workflow.LocalActivityOptions{
				StartToCloseTimeout: ao.StartToCloseTimeout, ScheduleToCloseTimeout: ao.ScheduleToCloseTimeout, RetryPolicy: ao.RetryPolicy,
			}
		}
	}
	// pending holds search-attribute updates: StakeWorkflow sends them as one upsert where the
	// operation rests, here before Confirm and at the end (the starter sets chain, network,
	// operation, staker, amount and the first step at start).
	var pending []temporal.SearchAttributeUpdate
	flush := func() {
		if len(pending) > 0 {
			_ = workflow.UpsertTypedSearchAttributes(ctx, pending...)
			pending = nil
		}
	}
	local := func(name string) error {
		var out NoopResult
		lctx := workflow.WithLocalActivityOptions(ctx, localOpts[name])
		return workflow.ExecuteLocalActivity(lctx, noopPrefix+name, in).Get(ctx, &out)
	}
	normal := func(name string) error {
		var out NoopResult
		actx := workflow.WithActivityOptions(ctx, normalOpts[name])
		f := workflow.ExecuteActivity(actx, noopPrefix+name, in)
		if name == "Confirm" {
			flush()
		}
		return f.Get(ctx, &out)
	}
	buildOrBroadcast := normal
	if shape.LocalBuildBroadcast {
		buildOrBroadcast = local
	}
	policyOrSign := local
	if shape.Naive {
		policyOrSign = normal
	}
	step := func(name string) {
		if shape.Plain {
			return
		}
		pending = append(pending, workflows.SAStep.ValueSet(name))
		workflow.SetCurrentDetails(ctx, "**"+name+"**: stake")
	}
	steps := []struct {
		name, step string
		run        func(string) error
	}{
		{"CheckPolicy", workflows.StepValidating, policyOrSign},
		{"CheckValidator", workflows.StepCheckingValidator, normal},
		{"Build", workflows.StepBuilding, buildOrBroadcast},
		{"Sign", workflows.StepSigning, policyOrSign},
		{"CheckFresh", workflows.StepSigning, normal},
		{"Broadcast", workflows.StepBroadcasting, buildOrBroadcast},
		{"Confirm", workflows.StepConfirming, normal},
	}
	for _, s := range steps {
		step(s.step)
		if s.name == "Broadcast" && !shape.Plain {
			pending = append(pending, workflows.SASignatures.ValueSet([]string{signatureLike}), workflows.SAStakeAccount.ValueSet(in.Staker))
		}
		if err := s.run(s.name); err != nil {
			return err
		}
	}
	step(workflows.StepDone)
	flush()
	return nil
}
