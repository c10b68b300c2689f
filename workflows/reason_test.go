package workflows

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"
)

func TestReasonIsTheFirstApplicationMessageInOneLine(t *testing.T) {
	inner := temporal.NewNonRetryableApplicationError("insufficient funds: staker X holds 1 SOL", "InsufficientFunds",
		errors.New("apiclient: POST /build: status 400"))
	long := strings.Repeat("x", 400)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"application error", inner, "insufficient funds: staker X holds 1 SOL"},
		{"wrapped by the workflow", fmt.Errorf("stake: %w", inner), "insufficient funds: staker X holds 1 SOL"},
		{"second line dropped", temporal.NewApplicationError("first line\nsecond line", "T"), "first line"},
		{"plain error", errors.New("  something broke \n at line 2"), "something broke"},
		{"timeout", temporal.NewTimeoutError(0, nil), "timed out (Unspecified)"},
		{"bounded", errors.New(long), strings.Repeat("x", maxReason-1) + "…"},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, Reason(tc.err)) })
	}
}

func TestFailureKeepsTheTypeAndTheChain(t *testing.T) {
	inner := temporal.NewNonRetryableApplicationError("refused", "TransactionRejected", nil)
	wrapped := fmt.Errorf("broadcast: %w", inner)
	f := failure(wrapped, Reason(wrapped))
	var appErr *temporal.ApplicationError
	if assert.ErrorAs(t, f, &appErr) {
		assert.Equal(t, "refused", appErr.Message())
		assert.Equal(t, "TransactionRejected", appErr.Type())
		assert.True(t, appErr.NonRetryable())
	}
	assert.ErrorIs(t, f, inner, "the whole chain stays as the cause")
	assert.Same(t, inner, failure(inner, Reason(inner)), "an error that already reads in one line is returned as it is")

	plain := errors.New("workflow-side")
	assert.ErrorAs(t, failure(plain, Reason(plain)), &appErr)
	assert.Equal(t, ErrOperationFailed, appErr.Type())
}
