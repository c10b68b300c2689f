package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// timeLayout is the ISO 8601 form of every timestamp the sandbox writes
// (UTC, millisecond precision, as JavaScript's toISOString).
const timeLayout = "2006-01-02T15:04:05.000Z"

// formatTime renders t in timeLayout.
func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// Error names, codes and types of the spec's error table, plus the sandbox's
// own broadcast rejection.
const (
	nameValidation        = "ValidationException"
	nameInvalidDelegator  = "InvalidDelegatorAddressException"
	nameNetworkNotInList  = "DataNetworkIsNotIncludedInListException"
	nameNoToken           = "NoTokenException"
	nameWrongToken        = "WrongTokenException"
	nameThrottler         = "ThrottlerException"
	nameTxRejected        = "TransactionRejectedException"
	nameInternal          = "InternalServerErrorException"
	nameNotFound          = "NotFoundException"
	nameMethodNotAllowed  = "MethodNotAllowedException"
	codeValidation        = 100101
	codeInvalidDelegator  = 115400
	codeNetworkNotInList  = 115101
	codeNoToken           = 101111
	codeWrongToken        = 101109
	codeThrottler         = 429
	codeTxRejected        = 100400
	codeInternal          = 100500
	codeNotFound          = 100404
	codeMethodNotAllowed  = 100405
	typeClient            = "client"
	typeAuthentication    = "authentication"
	typeServer            = "server"
	supportedNetworksList = "solana, ethereum, polkadot, kusama, cosmoshub, polygon, sui, ton, cardano, tonwhales, celestia"
)

// supportedNetworks is the list quoted by DataNetworkIsNotIncludedInListException.
var supportedNetworks = strings.Split(supportedNetworksList, ", ")

// fieldError is one entry of a ValidationException's errors array.
type fieldError struct {
	Property    string            `json:"property"`
	Constraints map[string]string `json:"constraints"`
}

// apiError is an error answered with the spec's error envelope.
type apiError struct {
	Status  int
	Name    string
	Code    int
	Type    string
	Message string
	Errors  []fieldError
	Header  http.Header
}

// Error names the exception and its message.
func (e *apiError) Error() string { return e.Name + ": " + e.Message }

// errorBody is the error object inside the envelope.
type errorBody struct {
	Type    string       `json:"type"`
	Code    int          `json:"code"`
	Message string       `json:"message"`
	Name    string       `json:"name"`
	Errors  []fieldError `json:"errors,omitempty"`
}

type errorEnvelope struct {
	Error     errorBody `json:"error"`
	Result    any       `json:"result"`
	RequestID string    `json:"requestId"`
	Timestamp string    `json:"timestamp"`
}

type successEnvelope struct {
	Error  any `json:"error"`
	Result any `json:"result"`
}

// validation builds a ValidationException from one or more field errors.
func validation(errs ...fieldError) *apiError {
	msgs := make([]string, 0, len(errs))
	for _, fe := range errs {
		for _, k := range sortedKeys(fe.Constraints) {
			msgs = append(msgs, fe.Constraints[k])
		}
	}
	return &apiError{
		Status: http.StatusBadRequest, Name: nameValidation, Code: codeValidation, Type: typeClient,
		Message: "Validation failed: " + strings.Join(msgs, "; "), Errors: errs,
	}
}

// fieldErr is a fieldError with one constraint.
func fieldErr(property, constraint, format string, args ...any) fieldError {
	return fieldError{Property: property, Constraints: map[string]string{constraint: fmt.Sprintf(format, args...)}}
}

// invalidField is a ValidationException on one property.
func invalidField(property, constraint, format string, args ...any) *apiError {
	return validation(fieldErr(property, constraint, format, args...))
}

func networkNotInList(network string) *apiError {
	return &apiError{
		Status: http.StatusBadRequest, Name: nameNetworkNotInList, Code: codeNetworkNotInList, Type: typeClient,
		Message: fmt.Sprintf("Network %q is not included in the list of supported networks: %s", network, supportedNetworksList),
	}
}

func invalidDelegator(property, address, network string) *apiError {
	return &apiError{
		Status: http.StatusBadRequest, Name: nameInvalidDelegator, Code: codeInvalidDelegator, Type: typeClient,
		Message: fmt.Sprintf("%s %q is not a valid address on network %s", property, address, network),
	}
}

func txRejected(reason, detail string) *apiError {
	return &apiError{
		Status: http.StatusBadRequest, Name: nameTxRejected, Code: codeTxRejected, Type: typeClient,
		Message: reason + ": " + detail,
	}
}

func internalError(msg string) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Name: nameInternal, Code: codeInternal, Type: typeServer, Message: msg}
}

// newRequestID returns a random UUID v4.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return formatUUID(b)
}

// formatUUID renders 16 bytes as a version-4 UUID.
func formatUUID(b [16]byte) string {
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeSuccess(w http.ResponseWriter, result any) {
	writeJSON(w, http.StatusOK, successEnvelope{Error: nil, Result: result})
}

func writeError(w http.ResponseWriter, requestID string, e *apiError) {
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	writeJSON(w, e.Status, errorEnvelope{
		Error:     errorBody{Type: e.Type, Code: e.Code, Message: e.Message, Name: e.Name, Errors: e.Errors},
		Result:    nil,
		RequestID: requestID,
		Timestamp: formatTime(time.Now()),
	})
}
