package metrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

const (
	staker   = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	vote     = "Vote111111111111111111111111111111111111111"
	stakeAcc = "5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1"
)

var a *actsolana.Activities

// recorder is a metrics handler that keeps every counter's total by name and labels.
type recorder struct {
	mu     sync.Mutex
	counts map[string]int64
	tags   map[string]string
}

func newRecorder() *recorder { return &recorder{counts: map[string]int64{}} }

func (r *recorder) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(r.tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	return &tagged{root: r, tags: merged}
}
func (r *recorder) Counter(name string) client.MetricsCounter {
	return (&tagged{root: r}).Counter(name)
}
func (r *recorder) Gauge(string) client.MetricsGauge { return client.MetricsNopHandler.Gauge("") }
func (r *recorder) Timer(string) client.MetricsTimer { return client.MetricsNopHandler.Timer("") }

type tagged struct {
	root *recorder
	tags map[string]string
}

func (t *tagged) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(t.tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	return &tagged{root: t.root, tags: merged}
}
func (t *tagged) Counter(name string) client.MetricsCounter {
	k := key(name, t.tags)
	return counterFunc(func(n int64) {
		t.root.mu.Lock()
		defer t.root.mu.Unlock()
		t.root.counts[k] += n
	})
}

type counterFunc func(int64)

func (f counterFunc) Inc(n int64)                  { f(n) }
func (t *tagged) Gauge(string) client.MetricsGauge { return client.MetricsNopHandler.Gauge("") }
func (t *tagged) Timer(string) client.MetricsTimer { return client.MetricsNopHandler.Timer("") }

// key renders a sample as name{k=v,...} with the labels sorted, keeping only stakeflow's labels.
func key(name string, tags map[string]string) string {
	own := []string{activities.LabelChain, activities.LabelNetwork, activities.LabelOperation, activities.LabelFailureType, activities.LabelOutcome}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if slices.Contains(own, k) {
			parts = append(parts, k+"="+tags[k])
		}
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

func (r *recorder) snapshot() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int64{}
	for k, v := range r.counts {
		if strings.HasPrefix(k, "stakeflow_") {
			out[k] = v
		}
	}
	return out
}

const stakeLabels = "chain=solana,network=testnet,operation=stake"

// chain signs with a fresh signature and blockhash per call.
type chain struct {
	mu    sync.Mutex
	signs int
}

func (c *chain) sign(_ context.Context, in actsolana.SignInput) (actsolana.SignResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signs++
	return actsolana.SignResult{
		Signature: fmt.Sprintf("sig-%d", c.signs), SignedTransaction: "signed", RecentBlockhash: fmt.Sprintf("hash-%d", c.signs),
		StakeAccount: stakeAcc, VoteAccount: in.Intent.VoteAccount,
	}, nil
}

func runStake(t *testing.T, h client.MetricsHandler, setup func(env *testsuite.TestWorkflowEnvironment)) {
	t.Helper()
	run(t, h, wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "testnet", Staker: staker, Lamports: 2_000_000_000, VoteAccount: vote}, setup)
}

// run executes workflow wf with input, recording through h, its activities mocked to build,
// sign, check and broadcast one transaction; setup mocks the rest (at least Sign and Confirm).
func run(t *testing.T, h client.MetricsHandler, wf, input any, setup func(env *testsuite.TestWorkflowEnvironment)) {
	t.Helper()
	var ts testsuite.WorkflowTestSuite
	ts.SetMetricsHandler(h)
	ts.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(wf)
	env.RegisterActivity(a)
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Maybe()
	env.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(actsolana.PreflightResult{}, nil).Maybe()
	env.OnActivity(a.CheckPolicy, mock.Anything, mock.Anything).Return(activities.PolicyDecision{}, nil)
	env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{Status: "active"}, nil)
	env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(actsolana.BuildResult{UnsignedTransaction: "unsigned", VoteAccount: vote}, nil)
	env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in actsolana.FreshInput) (actsolana.FreshResult, error) {
			return actsolana.FreshResult{Signature: in.Signature, NewStakeAccount: in.NewStakeAccount}, nil
		})
	env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in actsolana.BroadcastInput) (actsolana.BroadcastResult, error) {
			return actsolana.BroadcastResult{Signature: in.Signature, Slot: 10}, nil
		})
	setup(env)
	env.ExecuteWorkflow(wf, input)
	require.True(t, env.IsWorkflowCompleted())
}

func finalized(env *testsuite.TestWorkflowEnvironment) {
	c := &chain{}
	env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 42}, nil)
}

// TestOperationCountersPerOutcome checks what one operation records for each way it can end.
func TestOperationCountersPerOutcome(t *testing.T) {
	tests := []struct {
		name  string
		setup func(env *testsuite.TestWorkflowEnvironment)
		want  map[string]int64
	}{
		{
			name:  "finalized",
			setup: finalized,
			want: map[string]int64{
				workflows.MetricOperationsStarted + "{" + stakeLabels + "}":               1,
				workflows.MetricOperationsCompleted + "{" + stakeLabels + "}":             1,
				workflows.MetricConfirmations + "{" + stakeLabels + ",outcome=finalized}": 1,
			},
		},
		{
			name: "cannot land once, then finalized",
			setup: func(env *testsuite.TestWorkflowEnvironment) {
				c := &chain{}
				env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
				env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeCannotLand}, nil).Once()
				env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 42}, nil).Once()
			},
			want: map[string]int64{
				workflows.MetricOperationsStarted + "{" + stakeLabels + "}":                 1,
				workflows.MetricOperationsCompleted + "{" + stakeLabels + "}":               1,
				workflows.MetricRebuilds + "{" + stakeLabels + "}":                          1,
				workflows.MetricConfirmations + "{" + stakeLabels + ",outcome=cannot-land}": 1,
				workflows.MetricConfirmations + "{" + stakeLabels + ",outcome=finalized}":   1,
			},
		},
		{
			name: "signer refused",
			setup: func(env *testsuite.TestWorkflowEnvironment) {
				env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(actsolana.SignResult{},
					temporal.NewNonRetryableApplicationError("refused to sign: vote account", activities.ErrVerificationFailed, nil))
			},
			want: map[string]int64{
				workflows.MetricOperationsStarted + "{" + stakeLabels + "}":                                                         1,
				workflows.MetricOperationsFailed + "{chain=solana,failure_type=VerificationFailed,network=testnet,operation=stake}": 1,
			},
		},
		{
			name: "failed on chain",
			setup: func(env *testsuite.TestWorkflowEnvironment) {
				c := &chain{}
				env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
				env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFailed, Error: "InstructionError"}, nil)
			},
			want: map[string]int64{
				workflows.MetricOperationsStarted + "{" + stakeLabels + "}":                                                        1,
				workflows.MetricConfirmations + "{" + stakeLabels + ",outcome=failed}":                                             1,
				workflows.MetricOperationsFailed + "{chain=solana,failure_type=TransactionFailed,network=testnet,operation=stake}": 1,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			runStake(t, rec, tt.setup)
			assert.Equal(t, tt.want, rec.snapshot())
		})
	}
}

// TestOperationsCompletedOncePerOperation runs several operations against one handler: the
// completed counter moves exactly once for each.
func TestOperationsCompletedOncePerOperation(t *testing.T) {
	rec := newRecorder()
	const n = 3
	for range n {
		runStake(t, rec, finalized)
	}
	got := rec.snapshot()
	assert.Equal(t, int64(n), got[workflows.MetricOperationsStarted+"{"+stakeLabels+"}"])
	assert.Equal(t, int64(n), got[workflows.MetricOperationsCompleted+"{"+stakeLabels+"}"])
}
