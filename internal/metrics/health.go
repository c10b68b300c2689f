package metrics

import (
	"errors"
	"math"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/signer"
)

// Metric names. Counters end in _total and timers in _seconds, as Prometheus expects.
const (
	OperationsStarted      = "stakeflow_operations_started_total"
	OperationsCompleted    = "stakeflow_operations_completed_total"
	OperationsFailed       = "stakeflow_operations_failed_total"
	Rebuilds               = "stakeflow_rebuilds_total"
	Confirmations          = "stakeflow_confirmations_total"
	Broadcasts             = "stakeflow_broadcasts_total"
	SignerRefusals         = "stakeflow_signer_refusals_total"
	ServiceRequests        = "stakeflow_service_requests_total"
	ServiceRequestDuration = "stakeflow_service_request_duration_seconds"
	ServiceErrors          = "stakeflow_service_errors_total"
	ServiceThrottled       = "stakeflow_service_throttled_total"
	ServiceRetryAfter      = "stakeflow_service_retry_after_seconds"
	Stalls                 = "stakeflow_stalls_total"
	FeeLamports            = "stakeflow_fee_lamports_total"
	FeeTransactions        = "stakeflow_fee_transactions_total"
	RPCVerified            = "stakeflow_rpc_verified"
	ServiceAuthOK          = "stakeflow_service_auth_ok"
)

// Label names.
const (
	LabelChain       = "chain"
	LabelNetwork     = "network"
	LabelOperation   = "operation"
	LabelFailureType = "failure_type"
	LabelOutcome     = "outcome"
	LabelReason      = "reason"
	LabelCheck       = "check"
	LabelEndpoint    = "endpoint"
	LabelStatus      = "status"
	LabelException   = "exception"
)

// Broadcast outcomes and refusal reasons (labels of Broadcasts).
const (
	BroadcastSent             = "sent"
	BroadcastAlreadyProcessed = "already_processed"
	BroadcastRefused          = "refused"

	ReasonNone             = "none"
	ReasonBlockhashExpired = "blockhash_expired"
	ReasonRejected         = "rejected"
	ReasonThrottled        = "throttled"
	ReasonUnavailable      = "unavailable"
	ReasonUnauthorized     = "unauthorized"
	ReasonError            = "error"
)

// Failure types of OperationsFailed besides application error types.
const (
	FailureCancelled = "Cancelled"
	FailureTimeout   = "Timeout"
	FailureOther     = "Other"
)

// Operation records the life of one operation. Build it in the workflow from
// workflow.GetMetricsHandler(ctx) so that replays record nothing; the zero value records nothing.
type Operation struct {
	h client.MetricsHandler
}

// ForOperation returns the recorder of one operation's metrics, labelled with its chain, network
// and operation. h may be nil.
func ForOperation(h client.MetricsHandler, chain, network, operation string) Operation {
	if h == nil {
		return Operation{}
	}
	return Operation{h: h.WithTags(map[string]string{
		LabelChain: value(chain), LabelNetwork: value(network), LabelOperation: value(operation),
	})}
}

// Started counts the operation as started.
func (o Operation) Started() { o.inc(OperationsStarted, nil) }

// Completed counts the operation as completed successfully.
func (o Operation) Completed() { o.inc(OperationsCompleted, nil) }

// Failed counts the operation as failed with err, labelled by FailureType(err).
func (o Operation) Failed(err error) {
	o.inc(OperationsFailed, map[string]string{LabelFailureType: FailureType(err)})
}

// Rebuilt counts a transaction built again after the previous one was proven unable to land.
func (o Operation) Rebuilt() { o.inc(Rebuilds, nil) }

// Stalled counts the operation entering a stall: a step that cannot go on for a reason that does
// not heal by retrying at once.
func (o Operation) Stalled() { o.inc(Stalls, nil) }

// Confirmed counts a confirmation outcome (finalized, failed, expired).
func (o Operation) Confirmed(outcome string) {
	o.inc(Confirmations, map[string]string{LabelOutcome: value(outcome)})
}

func (o Operation) inc(name string, tags map[string]string) {
	if o.h == nil {
		return
	}
	h := o.h
	if tags != nil {
		h = h.WithTags(tags)
	}
	h.Counter(name).Inc(1)
}

// FailureType names the kind of err for OperationsFailed: the type of the application error it
// carries, Cancelled, Timeout, or Other.
func FailureType(err error) string {
	var appErr *temporal.ApplicationError
	var timeoutErr *temporal.TimeoutError
	switch {
	case temporal.IsCanceledError(err):
		return FailureCancelled
	case errors.As(err, &appErr) && appErr.Type() != "":
		return appErr.Type()
	case errors.As(err, &timeoutErr):
		return FailureTimeout
	}
	return FailureOther
}

// RecordBroadcast counts one broadcast answer. reason is ReasonNone unless outcome is
// BroadcastRefused. h may be nil.
func RecordBroadcast(h client.MetricsHandler, chain, network, outcome, reason string) {
	if h == nil {
		return
	}
	h.WithTags(map[string]string{
		LabelChain: value(chain), LabelNetwork: value(network), LabelOutcome: value(outcome), LabelReason: value(reason),
	}).Counter(Broadcasts).Inc(1)
}

// RecordFee adds the fee one landed transaction paid, in lamports, to FeeLamports and counts the
// transaction in FeeTransactions, so that their ratio is the mean fee. h may be nil.
func RecordFee(h client.MetricsHandler, chain, network, operation string, lamports uint64) {
	if h == nil {
		return
	}
	h = h.WithTags(map[string]string{LabelChain: value(chain), LabelNetwork: value(network), LabelOperation: value(operation)})
	h.Counter(FeeLamports).Inc(int64(min(lamports, math.MaxInt64)))
	h.Counter(FeeTransactions).Inc(1)
}

// SetRPCVerified sets the RPCVerified gauge of a network: 1 while its RPC is proven to serve it,
// 0 otherwise. h may be nil.
func SetRPCVerified(h client.MetricsHandler, chain, network string, verified bool) {
	if h == nil {
		return
	}
	h.WithTags(map[string]string{LabelChain: value(chain), LabelNetwork: value(network)}).Gauge(RPCVerified).Update(boolValue(verified))
}

// SetServiceAuthOK sets the ServiceAuthOK gauge: 1 while the staking service accepts the worker's
// token, 0 otherwise. h may be nil.
func SetServiceAuthOK(h client.MetricsHandler, ok bool) {
	if h == nil {
		return
	}
	h.Gauge(ServiceAuthOK).Update(boolValue(ok))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// RecordSignerRefusal counts a transaction the signer refused, labelled by SignerCheck(err). h may
// be nil.
func RecordSignerRefusal(h client.MetricsHandler, chain, operation string, err error) {
	if h == nil {
		return
	}
	h.WithTags(map[string]string{
		LabelChain: value(chain), LabelOperation: value(operation), LabelCheck: SignerCheck(err),
	}).Counter(SignerRefusals).Inc(1)
}

// SignerCheck names what made the signer refuse: the failed verification's check in snake case,
// or unknown_key, decode, intent, other.
func SignerCheck(err error) string {
	var v *signer.VerificationError
	switch {
	case errors.As(err, &v) && v.Check != "":
		return snake(v.Check)
	case errors.Is(err, signer.ErrUnknownKey):
		return "unknown_key"
	case errors.Is(err, signer.ErrDecode):
		return "decode"
	case errors.Is(err, signer.ErrIntent):
		return "intent"
	case errors.Is(err, signer.ErrVerification):
		return "verification"
	}
	return "other"
}

// snake lower-cases s and joins its words with underscores, leaving out words that are numbers
// (instruction indexes) so that the label stays one of a few values: "fee payer" -> "fee_payer",
// "instruction #2 program" -> "instruction_program".
func snake(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	kept := words[:0]
	for _, w := range words {
		if strings.Trim(w, "0123456789") != "" {
			kept = append(kept, w)
		}
	}
	out := strings.Join(kept, "_")
	if len(out) > 48 {
		out = out[:48]
	}
	if out == "" {
		return "other"
	}
	return out
}

// value keeps label values non-empty: an empty value would make the sample look unlabelled.
func value(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
