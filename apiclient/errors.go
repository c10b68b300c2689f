package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ErrNoToken is returned (wrapped) by every endpoint method when the client has
// no bearer token configured; no request is sent in that case. New also wraps it
// when WithTokenFile names an empty file.
var ErrNoToken = errors.New("apiclient: no bearer token configured")

// Exception names of the service's error table (error.name).
const (
	NameValidation           = "ValidationException"
	NameInvalidDelegatorAddr = "InvalidDelegatorAddressException"
	NameNetworkNotSupported  = "DataNetworkIsNotIncludedInListException"
	NameNoToken              = "NoTokenException"
	NameWrongToken           = "WrongTokenException"
	NameThrottler            = "ThrottlerException"
	NameDelegatorDataFailure = "GetDelegatorAutostakingDataException"
)

// Error codes of the service's error table (error.code), as given by its
// schema. InvalidDelegatorAddressException and
// DataNetworkIsNotIncludedInListException also appear with CodeValidation in
// published examples; the predicates match by name first for that reason.
// ThrottlerException's code is not documented.
const (
	CodeValidation           = 100101
	CodeInvalidDelegatorAddr = 115400
	CodeNetworkNotSupported  = 115101
	CodeNoToken              = 101111
	CodeWrongToken           = 101109
	CodeDelegatorDataFailure = 115406
)

// Error types (error.type).
const (
	ErrorTypeClient         = "client"
	ErrorTypeAuthentication = "authentication"
	ErrorTypeServer         = "server"
)

// maxValidationErrorsInError bounds the validation errors quoted by Error().
const maxValidationErrorsInError = 3

// ValidationError is one entry of the error object's `errors` array: the
// failing property and the constraints it broke (constraint name to text).
type ValidationError struct {
	Property    string            `json:"property"`
	Constraints map[string]string `json:"constraints"`
}

// APIError is an error envelope returned by the service, decoded. Use
// errors.As to reach it, or the Is* predicates of this package.
type APIError struct {
	// Method and Path identify the request (path without base URL and query).
	Method string
	Path   string
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// Name is the exception class name (error.name).
	Name string
	// Code is the numeric error code (error.code); 0 when absent or not an integer.
	Code int32
	// Type is client, authentication or server (error.type).
	Type string
	// Message is error.message.
	Message string
	// Errors lists the failing properties of validation errors.
	Errors []ValidationError
	// RequestID is the envelope's requestId, or the x-request-id header when
	// the envelope has none.
	RequestID string
	// Timestamp is the envelope's timestamp (zero when absent or unparsable).
	Timestamp time.Time
	// RateLimit holds the rate-limit headers of the response, nil when none
	// were sent.
	RateLimit *RateLimit
}

// Error names the request, status, exception name, code and message.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiclient: %s %s: status %d", e.Method, e.Path, e.StatusCode)
	if e.Name != "" {
		fmt.Fprintf(&b, ": %s", e.Name)
	}
	fmt.Fprintf(&b, " (code %d)", e.Code)
	if e.Message != "" && e.Message != e.Name {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	for i, v := range e.Errors {
		if i == maxValidationErrorsInError {
			fmt.Fprintf(&b, "; and %d more", len(e.Errors)-i)
			break
		}
		fmt.Fprintf(&b, "; %s: %s", v.Property, joinConstraints(v.Constraints))
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [requestId %s]", e.RequestID)
	}
	return b.String()
}

func joinConstraints(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, m[k])
	}
	return strings.Join(parts, ", ")
}

// Retryable reports whether the same request may succeed later: 408, 409,
// 429 and 5xx. 408 is the service's request timeout and 409 a conflict while
// it is busy with the same request; neither settles the request.
func (e *APIError) Retryable() bool { return retryableEnvelopeStatus(e.StatusCode) }

// RetryAfter returns the delay the service asked for: the Retry-After header
// in either form (seconds, or an HTTP date turned into the delay from the
// response's arrival) on any status, 429 and 503 included; or for a 429
// without it, RateLimit-Reset. ok is false when neither was sent.
func (e *APIError) RetryAfter() (d time.Duration, ok bool) {
	return retryAfter(e.StatusCode, e.RateLimit)
}

// UnexpectedResponseError is returned when the response body is not the
// service's JSON envelope (an HTML page from a proxy, an empty or truncated
// body, a success status with an undecodable payload).
type UnexpectedResponseError struct {
	// Method and Path identify the request.
	Method string
	Path   string
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// ContentType is the response's Content-Type header.
	ContentType string
	// Excerpt is the start of the body (at most 200 bytes, control characters
	// replaced).
	Excerpt string
	// RequestID is the x-request-id header, when present.
	RequestID string
	// RateLimit holds the rate-limit headers, nil when none were sent.
	RateLimit *RateLimit
	// Err is the decoding failure.
	Err error
}

// Error names the request, status, what was wrong and the body excerpt.
func (e *UnexpectedResponseError) Error() string {
	msg := fmt.Sprintf("apiclient: %s %s: status %d: unexpected response", e.Method, e.Path, e.StatusCode)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.ContentType != "" {
		msg += fmt.Sprintf(" (content-type %q)", e.ContentType)
	}
	msg += fmt.Sprintf(": body %q", e.Excerpt)
	if e.RequestID != "" {
		msg += fmt.Sprintf(" [requestId %s]", e.RequestID)
	}
	return msg
}

// Unwrap returns the decoding failure.
func (e *UnexpectedResponseError) Unwrap() error { return e.Err }

// Retryable reports whether the same request may succeed later: 429 and 5xx.
func (e *UnexpectedResponseError) Retryable() bool { return retryableStatus(e.StatusCode) }

// RetryAfter returns the delay asked for by the Retry-After header in either
// form on any status, 429 and 503 included (or RateLimit-Reset on a 429); ok
// is false when neither was sent.
func (e *UnexpectedResponseError) RetryAfter() (time.Duration, bool) {
	return retryAfter(e.StatusCode, e.RateLimit)
}

// TransportError is a failure to send the request or read the response
// (connection refused, timeout, reset). It wraps the underlying error.
type TransportError struct {
	// Method and Path identify the request.
	Method string
	Path   string
	// Err is the underlying failure.
	Err error
}

// Error names the request and the underlying failure.
func (e *TransportError) Error() string {
	return fmt.Sprintf("apiclient: %s %s: %v", e.Method, e.Path, e.Err)
}

// Unwrap returns the underlying failure.
func (e *TransportError) Unwrap() error { return e.Err }

// ArgumentError reports an argument rejected before any request was sent.
type ArgumentError struct {
	// Field is the JSON or query name of the argument (dotted for nested fields).
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error names the field and the reason.
func (e *ArgumentError) Error() string {
	return fmt.Sprintf("apiclient: invalid argument %s: %s", e.Field, e.Reason)
}

func argErr(field, format string, args ...any) *ArgumentError {
	return &ArgumentError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// retryableStatus reports whether a response with this status may succeed if
// the same request is sent again: 429 (throttled) and 5xx (the service or a
// proxy in front of it failed). An error envelope answered with 408 or 409 is
// retryable too, see retryableEnvelopeStatus.
func retryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// retryableEnvelopeStatus is retryableStatus for a response that carries the
// service's error envelope, plus two statuses that say "not now" rather than
// "never": 408 (the service gave up waiting for the request; nothing was
// decided, so the same request can be sent again) and 409 (a conflict while
// the service is still busy with the same request, such as a broadcast of
// bytes it is already submitting; once it is done, sending the same request
// again gets the settled answer). Retrying either is safe because a request is
// always re-sent with the same body: a broadcast re-sends the same signed
// bytes. Without the envelope, such a status did not come from the service
// and is not known to mean the same.
func retryableEnvelopeStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict || retryableStatus(status)
}

func retryAfter(status int, rl *RateLimit) (time.Duration, bool) {
	if rl == nil {
		return 0, false
	}
	if rl.HasRetryAfter {
		return rl.RetryAfter, true
	}
	if status == 429 && rl.HasReset {
		return rl.Reset, true
	}
	return 0, false
}

func asAPIError(err error) (*APIError, bool) {
	var e *APIError
	ok := errors.As(err, &e)
	return e, ok
}

// matchException matches an API error by exception name first; only when the
// service sent no name does it fall back to the numeric code.
func matchException(err error, name string, codes ...int32) bool {
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	if e.Name != "" {
		return e.Name == name
	}
	for _, c := range codes {
		if e.Code == c {
			return true
		}
	}
	return false
}

// IsValidation reports whether err carries a ValidationException (code 100101).
// An InvalidDelegatorAddressException or DataNetworkIsNotIncludedInListException
// sent with code 100101 is not a ValidationException: the name decides.
func IsValidation(err error) bool {
	return matchException(err, NameValidation, CodeValidation)
}

// IsInvalidDelegatorAddress reports whether err carries an
// InvalidDelegatorAddressException, whatever its code (115400 or 100101).
func IsInvalidDelegatorAddress(err error) bool {
	return matchException(err, NameInvalidDelegatorAddr, CodeInvalidDelegatorAddr)
}

// IsNetworkNotSupported reports whether err carries a
// DataNetworkIsNotIncludedInListException, whatever its code (115101 or 100101).
func IsNetworkNotSupported(err error) bool {
	return matchException(err, NameNetworkNotSupported, CodeNetworkNotSupported)
}

// IsNoToken reports whether err is the service's NoTokenException (101111) or
// the client's own ErrNoToken.
func IsNoToken(err error) bool {
	return errors.Is(err, ErrNoToken) || matchException(err, NameNoToken, CodeNoToken)
}

// IsWrongToken reports whether err carries a WrongTokenException (101109).
func IsWrongToken(err error) bool {
	return matchException(err, NameWrongToken, CodeWrongToken)
}

// IsThrottled reports whether err is a ThrottlerException or any 429 response
// (enveloped or not).
func IsThrottled(err error) bool {
	if e, ok := asAPIError(err); ok {
		return e.Name == NameThrottler || e.StatusCode == 429
	}
	var u *UnexpectedResponseError
	return errors.As(err, &u) && u.StatusCode == 429
}

// IsDelegatorDataFailure reports whether err carries a
// GetDelegatorAutostakingDataException (115406).
func IsDelegatorDataFailure(err error) bool {
	return matchException(err, NameDelegatorDataFailure, CodeDelegatorDataFailure)
}

// IsArgument reports whether err is an *ArgumentError (nothing was sent).
func IsArgument(err error) bool {
	var a *ArgumentError
	return errors.As(err, &a)
}

// IsRetryable reports whether the request that failed with err may succeed if
// sent again: 429 and 5xx responses (enveloped or not), 408 and 409 answered
// with the service's error envelope (see APIError.Retryable), and transport
// failures other than the caller's own cancellation.
func IsRetryable(err error) bool {
	if e, ok := asAPIError(err); ok {
		return e.Retryable()
	}
	var u *UnexpectedResponseError
	if errors.As(err, &u) {
		return u.Retryable()
	}
	var t *TransportError
	if errors.As(err, &t) {
		return !errors.Is(err, context.Canceled)
	}
	return false
}

// RetryAfterOf returns the delay the service asked for in the response behind
// err, if any: Retry-After (seconds or HTTP date) on any status, 429 and 503
// alike, or RateLimit-Reset on a 429 without Retry-After.
func RetryAfterOf(err error) (time.Duration, bool) {
	if e, ok := asAPIError(err); ok {
		return e.RetryAfter()
	}
	var u *UnexpectedResponseError
	if errors.As(err, &u) {
		return u.RetryAfter()
	}
	return 0, false
}

// RequestIDOf returns the request ID of the response behind err ("" when err
// carries none).
func RequestIDOf(err error) string {
	if e, ok := asAPIError(err); ok {
		return e.RequestID
	}
	var u *UnexpectedResponseError
	if errors.As(err, &u) {
		return u.RequestID
	}
	return ""
}
