package workflows

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// ErrOperationFailed is the error type of an operation's failure when no application error in its
// chain of causes names one (a timeout, a workflow-side error).
const ErrOperationFailed = "OperationFailed"

// maxReason bounds a one-line reason, so a long service answer cannot flood a list or a title.
const maxReason = 300

// Reason says err in one line, cause first: the message of the first application error in its
// chain, which is what the activity (or the workflow) that failed chose to tell, such as
// "insufficient funds: staker X holds 1 SOL, the stake needs 5000 SOL plus fees"; for a timeout,
// which activity timed out and how. The whole chain stays in Status.Error and in the history.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	var msg string
	var appErr *temporal.ApplicationError
	var timeout *temporal.TimeoutError
	var actErr *temporal.ActivityError
	switch {
	case errors.As(err, &appErr):
		msg = appErr.Message()
	case errors.As(err, &timeout):
		msg = "timed out (" + timeout.TimeoutType().String() + ")"
		if errors.As(err, &actErr) {
			msg = actErr.ActivityType().GetName() + " " + msg
		}
	default:
		msg = err.Error()
	}
	msg = strings.TrimSpace(msg)
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	if r := []rune(msg); len(r) > maxReason {
		msg = string(r[:maxReason-1]) + "…"
	}
	return msg
}

// failure is the error an operation ends with: its one-line reason as the message (what the Web
// UI shows as the failure, and `starter list` as the reason), the error type of the first
// application error in the chain, and the whole chain as the cause.
func failure(err error, reason string) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && error(appErr) == err {
		// The workflow's own error already reads in one line.
		return err
	}
	typ := ErrOperationFailed
	if appErr != nil && appErr.Type() != "" {
		typ = appErr.Type()
	}
	return temporal.NewNonRetryableApplicationError(reason, typ, err)
}
