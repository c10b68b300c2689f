package workflows

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"
)

func TestFailureType(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"application error type", temporal.NewNonRetryableApplicationError("no", "TooManyBuilds", nil), "TooManyBuilds"},
		{"wrapped application error", fmt.Errorf("activity: %w", temporal.NewApplicationError("x", "ServiceUnavailable")), "ServiceUnavailable"},
		{"cancelled", temporal.NewCanceledError("stop"), FailureCancelled},
		{"untyped application error", temporal.NewApplicationError("x", ""), FailureOther},
		{"plain error", errors.New("boom"), FailureOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, FailureType(tt.err)) })
	}
}

func TestZeroOpMetricsRecordsNothing(t *testing.T) {
	var m opMetrics
	m.started()
	m.failed(errors.New("boom"))
	m.completed()
	m.confirmed("finalized")
}
