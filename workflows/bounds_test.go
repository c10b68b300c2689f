package workflows

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
)

// The bounds below are those Options' documentation and the service contract state: MaxBuilds
// from 1 to 10 (0 the default), the confirmation poll at most a third of Confirm's 30s heartbeat
// timeout, broadcast and build timeouts of at least 10s, slots of at most a minute, epoch and stall
// waits of at least a second; no duration negative.
func TestOptionsValidateBounds(t *testing.T) {
	const ns = time.Nanosecond
	tests := []struct {
		name  string
		opts  Options
		field string // "" when valid
	}{
		{"zero takes every default", Options{}, ""},
		{"maxBuilds 1", Options{MaxBuilds: 1}, ""},
		{"maxBuilds 10", Options{MaxBuilds: 10}, ""},
		{"maxBuilds 11", Options{MaxBuilds: 11}, "options.maxBuilds"},
		{"maxBuilds -1", Options{MaxBuilds: -1}, "options.maxBuilds"},
		{"confirm poll 10s", Options{ConfirmPollInterval: 10 * time.Second}, ""},
		{"confirm poll 10s and a nanosecond", Options{ConfirmPollInterval: 10*time.Second + ns}, "options.confirmPollInterval"},
		{"broadcast timeout 10s", Options{BroadcastTimeout: 10 * time.Second}, ""},
		{"broadcast timeout just under 10s", Options{BroadcastTimeout: 10*time.Second - ns}, "options.broadcastTimeout"},
		{"build timeout 10s", Options{BuildTimeout: 10 * time.Second}, ""},
		{"build timeout just under 10s", Options{BuildTimeout: 10*time.Second - ns}, "options.buildTimeout"},
		{"slot a minute", Options{SlotDuration: time.Minute}, ""},
		{"slot over a minute", Options{SlotDuration: time.Minute + ns}, "options.slotDuration"},
		{"epoch wait a second", Options{MaxEpochWait: time.Second}, ""},
		{"epoch wait under a second", Options{MaxEpochWait: time.Second - ns}, "options.maxEpochWait"},
		{"stall wait a second", Options{MaxStallWait: time.Second}, ""},
		{"stall wait under a second", Options{MaxStallWait: time.Second - ns}, "options.maxStallWait"},
		{"negative approval timeout", Options{ApprovalTimeout: -ns}, "options.approvalTimeout"},
		{"negative confirm poll", Options{ConfirmPollInterval: -ns}, "options.confirmPollInterval"},
		{"negative broadcast timeout", Options{BroadcastTimeout: -ns}, "options.broadcastTimeout"},
		{"negative build timeout", Options{BuildTimeout: -ns}, "options.buildTimeout"},
		{"negative slot", Options{SlotDuration: -ns}, "options.slotDuration"},
		{"negative epoch wait", Options{MaxEpochWait: -ns}, "options.maxEpochWait"},
		{"negative stall wait", Options{MaxStallWait: -ns}, "options.maxStallWait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.field == "" {
				assert.NoError(t, err)
				return
			}
			var ie *InputError
			require.True(t, errors.As(err, &ie), "want an InputError, got %v", err)
			assert.Equal(t, tt.field, ie.Field)
		})
	}
}

func TestOptionsValidateNamesTheHeartbeatBound(t *testing.T) {
	err := Options{ConfirmPollInterval: 11 * time.Second}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at most 10s")
}

// The defaults as Options documents them.
func TestOptionsDefaults(t *testing.T) {
	want := Options{MaxBuilds: 3, ApprovalTimeout: 24 * time.Hour, ConfirmPollInterval: time.Second,
		BroadcastTimeout: 2 * time.Minute, BuildTimeout: 30 * time.Minute, SlotDuration: 400 * time.Millisecond,
		MaxEpochWait: time.Hour, MaxStallWait: 10 * time.Minute}
	assert.Equal(t, want, Options{}.WithDefaults())

	set := Options{MaxBuilds: 1, ApprovalTimeout: time.Minute, ConfirmPollInterval: 2 * time.Second,
		BroadcastTimeout: 20 * time.Second, BuildTimeout: 15 * time.Second, SlotDuration: time.Second,
		MaxEpochWait: 5 * time.Second, MaxStallWait: 3 * time.Second}
	assert.Equal(t, set, set.WithDefaults(), "options set are kept")
}

func TestValidateOperationID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"empty", "", false},
		{"200 characters", strings.Repeat("a", 200), true},
		{"201 characters", strings.Repeat("a", 201), false},
		{"lowest printable, !", "op-!", true},
		{"highest printable, ~", "op-~", true},
		{"space", "op 1", false},
		{"DEL", "op-\x7f", false},
		{"tab", "op\t1", false},
		{"non-ASCII", "opé", false},
		{"usual", "stake-2024-06-01-alice", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateOperationID(tt.id)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestAmountAttributeIsAPositiveInt64(t *testing.T) {
	tests := []struct {
		amount string
		want   int64
		ok     bool
	}{
		{"1", 1, true},
		{"2000000000", 2_000_000_000, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"0", 0, false},
		{"-5", 0, false},
		{"", 0, false},
		{"1.5", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.amount, func(t *testing.T) {
			n, ok := AmountAttribute(tt.amount)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.want, n)
			}
		})
	}
}

// Every step's activity options set a start-to-close timeout and an explicit, bounded backoff that
// never retries what activities.NonRetryable names; the pre-flight reads retry for ten minutes.
func TestActivityOptionsAreExplicitAndBounded(t *testing.T) {
	opts := Options{}.WithDefaults()
	check := func(t *testing.T, start time.Duration, rp *temporal.RetryPolicy) {
		t.Helper()
		assert.Positive(t, start, "StartToCloseTimeout")
		require.NotNil(t, rp)
		assert.Equal(t, activities.NonRetryable, rp.NonRetryableErrorTypes)
		if rp.InitialInterval > 0 {
			assert.GreaterOrEqual(t, rp.MaximumInterval, rp.InitialInterval, "MaximumInterval")
			assert.LessOrEqual(t, rp.MaximumInterval, time.Minute, "MaximumInterval")
		}
	}
	for name, o := range map[string]workflow.ActivityOptions{
		"validator": ValidatorOptions(), "read": ReadOptions(), "fresh": FreshOptions(),
		"build": BuildOptions(opts), "broadcast": BroadcastOptions(opts), "confirm": ConfirmOptions(),
	} {
		t.Run(name, func(t *testing.T) { check(t, o.StartToCloseTimeout, o.RetryPolicy) })
	}
	for name, o := range map[string]workflow.LocalActivityOptions{"policy": PolicyOptions(), "sign": SignOptions()} {
		t.Run(name, func(t *testing.T) { check(t, o.StartToCloseTimeout, o.RetryPolicy) })
	}
	assert.Equal(t, 10*time.Minute, ValidatorOptions().ScheduleToCloseTimeout, "a validator pre-flight retries for ten minutes")
	assert.Equal(t, 10*time.Minute, FreshOptions().ScheduleToCloseTimeout, "the freshness proof retries for ten minutes")
	assert.Equal(t, opts.BuildTimeout, BuildOptions(opts).ScheduleToCloseTimeout)
	assert.Equal(t, opts.BroadcastTimeout, BroadcastOptions(opts).ScheduleToCloseTimeout)
	c := ConfirmOptions()
	assert.Equal(t, ConfirmHeartbeatTimeout, c.HeartbeatTimeout)
	assert.Greater(t, c.StartToCloseTimeout, c.HeartbeatTimeout, "Confirm outlives one heartbeat")
}

func TestMayHeal(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"service unavailable", temporal.NewApplicationError("503", activities.ErrServiceUnavailable), true},
		{"rate limited", temporal.NewApplicationError("429", activities.ErrRateLimited), true},
		{"service unauthorized", temporal.NewApplicationError("401", activities.ErrServiceUnauthorized), true},
		{"chain unavailable", temporal.NewApplicationError("rpc down", activities.ErrChainUnavailable), true},
		{"chain rejected", temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil), true},
		{"retries timed out", temporal.NewTimeoutError(0, nil), true},
		{"wrapped", fmt.Errorf("build: %w", temporal.NewApplicationError("503", activities.ErrServiceUnavailable)), true},
		{"cancelled", temporal.NewCanceledError(), false},
		{"verification failed", temporal.NewNonRetryableApplicationError("no", activities.ErrVerificationFailed, nil), false},
		{"plain error", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, MayHeal(tt.err)) })
	}
}

func TestFailureTypeOfATimeout(t *testing.T) {
	assert.Equal(t, FailureTimeout, FailureType(temporal.NewTimeoutError(0, nil)))
}
