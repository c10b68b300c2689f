package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/apiclient"
)

// BroadcastErrorReason is the refusal reason of a broadcast error that is retried or unforeseen.
func BroadcastErrorReason(err error) string {
	switch {
	case apiclient.IsThrottled(err):
		return ReasonThrottled
	case Unauthorized(err):
		return ReasonUnauthorized
	case apiclient.IsRetryable(err):
		return ReasonUnavailable
	}
	return ReasonError
}

// ClassifyService turns an apiclient error into an application error of the right retryability:
// a 401 (after the client re-read its token) or a missing token is ErrServiceUnauthorized and
// retried; a 429, and a 5xx with Retry-After (503), are retried after the service's delay.
func ClassifyService(what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return temporal.NewApplicationError(fmt.Sprintf("%s: %v", what, err), ErrServiceUnavailable)
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	after := temporal.ApplicationErrorOptions{}
	if d, ok := apiclient.RetryAfterOf(err); ok {
		after.NextRetryDelay = d
	}
	if apiclient.IsThrottled(err) {
		return temporal.NewApplicationErrorWithOptions(msg, ErrRateLimited, after)
	}
	var argErr *apiclient.ArgumentError
	if errors.As(err, &argErr) {
		return temporal.NewNonRetryableApplicationError(msg, ErrInvalidInput, nil)
	}
	if Unauthorized(err) {
		return temporal.NewApplicationError(msg+" (the service refuses the worker's token: replace --service-token-file)", ErrServiceUnauthorized)
	}
	if apiclient.IsRetryable(err) {
		return temporal.NewApplicationErrorWithOptions(msg, ErrServiceUnavailable, after)
	}
	var apiErr *apiclient.APIError
	var unexpected *apiclient.UnexpectedResponseError
	if errors.As(err, &apiErr) || errors.As(err, &unexpected) {
		return temporal.NewNonRetryableApplicationError(msg, ErrServiceRejected, nil)
	}
	// Transport errors and anything unforeseen: retry with backoff.
	return temporal.NewApplicationError(msg, ErrServiceUnavailable)
}

// Unauthorized reports whether the service refused the worker's token (HTTP 401, enveloped or
// not) or the client has none to send.
func Unauthorized(err error) bool {
	if errors.Is(err, apiclient.ErrNoToken) {
		return true
	}
	var apiErr *apiclient.APIError
	var unexpected *apiclient.UnexpectedResponseError
	return (errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusUnauthorized) ||
		(errors.As(err, &unexpected) && unexpected.StatusCode == http.StatusUnauthorized)
}
