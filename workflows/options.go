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
func PolicyOptions() workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: activities.NonRetryable},
	}
}

// ValidatorOptions: a validator pre-flight (the service's status, our own RPC), retried for ten minutes.
func ValidatorOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	}
}

// ReadOptions: reads of the chain (a stake account, say), retried while the chain is unavailable (a read the RPC refuses for
// good is ChainRejected, non-retryable: the workflow decides).
func ReadOptions() workflow.ActivityOptions {
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
func FreshOptions() workflow.ActivityOptions {
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
func BuildOptions(opts Options) workflow.ActivityOptions {
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
func SignOptions() workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: activities.NonRetryable},
	}
}

// broadcastOptions: Broadcast, the same bytes re-sent for at most opts.BroadcastTimeout before
// the chain decides.
func BroadcastOptions(opts Options) workflow.ActivityOptions {
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
func ConfirmOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    ConfirmHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: activities.NonRetryable,
		},
	}
}
