package apiclient

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Endpoint names one endpoint of the service interface: a stable, low-cardinality label for
// metrics and logs (never the path, which carries networks, addresses and hashes).
type Endpoint string

// The thirteen endpoints of the service interface, in its numbering.
const (
	EndpointDelegatorAPR                     Endpoint = "delegator_apr"                       // 1
	EndpointNetworkAPY                       Endpoint = "network_apy"                         // 2
	EndpointCelestiaSend                     Endpoint = "celestia_send"                       // 3
	EndpointPolygonSend                      Endpoint = "polygon_send"                        // 4
	EndpointEigenLayerVerifyCheckpointProofs Endpoint = "eigenlayer_verify_checkpoint_proofs" // 5
	EndpointHyperliquidWithdraw              Endpoint = "hyperliquid_withdraw"                // 6
	EndpointValidatorStatus                  Endpoint = "validator_status"                    // 7
	EndpointSSVRequests                      Endpoint = "ssv_requests"                        // 8
	EndpointTONTransactionStatus             Endpoint = "ton_transaction_status"              // 9
	EndpointStake                            Endpoint = "stake"                               // 10
	EndpointUnstake                          Endpoint = "unstake"                             // 11
	EndpointWithdraw                         Endpoint = "withdraw"                            // 12
	EndpointBroadcast                        Endpoint = "broadcast"                           // 13
)

// Endpoints lists every endpoint in the interface's numbering (Endpoints()[0] is endpoint 1).
func Endpoints() []Endpoint {
	return []Endpoint{
		EndpointDelegatorAPR, EndpointNetworkAPY, EndpointCelestiaSend, EndpointPolygonSend,
		EndpointEigenLayerVerifyCheckpointProofs, EndpointHyperliquidWithdraw, EndpointValidatorStatus,
		EndpointSSVRequests, EndpointTONTransactionStatus, EndpointStake, EndpointUnstake,
		EndpointWithdraw, EndpointBroadcast,
	}
}

// Call is what the client saw of one call to the service, handed to the Observer once the call
// is over. It holds no token, header or body.
type Call struct {
	// Endpoint is the endpoint called.
	Endpoint Endpoint
	// StatusCode is the HTTP status of the last response (after a resend on 401, the resend's);
	// 0 when no response came.
	StatusCode int
	// Duration is the call's time, from the first request to the decoded answer or the failure.
	Duration time.Duration
	// Err is the error the call returns, nil on success.
	Err error
}

// Status is the call's status label: "ok" on success; the HTTP status of an error answer ("400",
// "429", "503", ...); "canceled" when the context ended it, "invalid_request" when the client
// had no token to send, and "transport" for any other call that got no answer.
func (c Call) Status() string {
	status, _ := errorLabels(c.Err)
	return status
}

// Exception is the call's exception label: "" on success; the service's exception name of an
// error answer (APIError.Name, "unnamed" when the envelope gives none), "unexpected_response"
// for a body that is not the service's envelope, and the Status word for a call that got no
// answer.
func (c Call) Exception() string {
	_, exception := errorLabels(c.Err)
	return exception
}

// Throttled reports a 429 answer (or a ThrottlerException); RetryAfter then gives the delay the
// service asked for, when it gave one.
func (c Call) Throttled() bool { return c.Err != nil && IsThrottled(c.Err) }

// RetryAfter is the delay the answer asked for (Retry-After, or RateLimit-Reset on a 429), see
// RetryAfterOf.
func (c Call) RetryAfter() (time.Duration, bool) {
	if c.Err == nil {
		return 0, false
	}
	return RetryAfterOf(c.Err)
}

// RequestID is the request ID of an error answer ("" on success and without an answer; use
// WithResponseInfo for a success's).
func (c Call) RequestID() string { return RequestIDOf(c.Err) }

// Observer is told of every call the client makes to the service, once per call, on the calling
// goroutine, after the call is over and before its result is returned. ctx is the call's context
// (an activity's, when an activity called). It must not block.
type Observer func(ctx context.Context, call Call)

// WithObserver sets the Observer of every call (metrics, logs). Calls the client refuses before
// sending anything, for an argument that breaks the interface (an *ArgumentError), are not
// calls to the service and are not observed.
func WithObserver(o Observer) Option {
	return func(c *config) error {
		c.observer = o
		return nil
	}
}

// errorLabels returns the status and exception labels of a call's error (see Call.Status and
// Call.Exception).
func errorLabels(err error) (status, exception string) {
	if err == nil {
		return "ok", ""
	}
	var apiErr *APIError
	var unexpected *UnexpectedResponseError
	switch {
	case errors.As(err, &apiErr):
		name := apiErr.Name
		if name == "" {
			name = "unnamed"
		}
		return strconv.Itoa(apiErr.StatusCode), name
	case errors.As(err, &unexpected):
		return strconv.Itoa(unexpected.StatusCode), "unexpected_response"
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return "canceled", "canceled"
	case IsArgument(err) || errors.Is(err, ErrNoToken):
		return "invalid_request", "invalid_request"
	}
	return "transport", "transport"
}
