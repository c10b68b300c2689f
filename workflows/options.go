package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
)

// The options of each step's activity. The timeouts bound how long a failing service or chain
// is retried; the retry policies never retry what activities.NonRetryable names.

// policyOptions: CheckPolicy, a local activity (in-process, pure).
func policyOptions() workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: activities.NonRetryable},
	}
}

// validatorOptions: CheckValidator, the service's validator status, retried for ten minutes.
func validatorOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	}
}

// readOptions: ReadStakeState, retried while the chain is unavailable (a read the RPC refuses for
// good is ChainRejected, non-retryable: the workflow decides).
func readOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	}
}

// freshOptions: CheckFresh, reads of the chain before the first broadcast, retried for ten
// minutes; nothing has been sent, so giving up then fails the operation cleanly.
func freshOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	}
}

// buildOptions: Build, retried while the service fails, for at most opts.BuildTimeout.
func buildOptions(opts Options) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: opts.BuildTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	}
}

// signOptions: Sign, a local activity (deterministic: a re-run yields the same bytes).
func signOptions() workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: activities.NonRetryable},
	}
}

// broadcastOptions: Broadcast, the same bytes re-sent for at most opts.BroadcastTimeout before
// the chain decides.
func broadcastOptions(opts Options) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: opts.BroadcastTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	}
}

// confirmOptions: Confirm, heartbeating once it lasts, retried until the transaction's fate is
// known.
func confirmOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    ConfirmHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	}
}

// StakeStepOptions are the options StakeWorkflow runs its activities with under the default
// Options, by activity name: CheckPolicy and Sign local, the others normal. The benchmark's
// same-shape ceiling runs no-op activities with exactly these.
func StakeStepOptions() (normal map[string]workflow.ActivityOptions, local map[string]workflow.LocalActivityOptions) {
	opts := Options{}.withDefaults()
	normal = map[string]workflow.ActivityOptions{
		"CheckValidator": validatorOptions(),
		"Build":          buildOptions(opts),
		"CheckFresh":     freshOptions(),
		"Broadcast":      broadcastOptions(opts),
		"Confirm":        confirmOptions(),
	}
	local = map[string]workflow.LocalActivityOptions{
		"CheckPolicy": policyOptions(),
		"Sign":        signOptions(),
	}
	return normal, local
}
