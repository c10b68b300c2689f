package activities

import (
	"context"
	"math"

	"go.temporal.io/sdk/activity"
)

// Metrics the activities record, through activity.GetMetricsHandler (internal/metrics/doc.go
// lists every stakeflow metric). Counters end in _total, as Prometheus expects.
const (
	// MetricBroadcasts counts broadcast answers by chain, network, outcome and reason.
	MetricBroadcasts = "stakeflow_broadcasts_total"
	// MetricSignerRefusals counts transactions the signer refused, by chain, operation and check.
	MetricSignerRefusals = "stakeflow_signer_refusals_total"
	// MetricFeeLamports adds up the fees finalized transactions paid, by chain, network and
	// operation.
	MetricFeeLamports = "stakeflow_fee_lamports_total"
	// MetricFeeTransactions counts the transactions whose fee is in MetricFeeLamports.
	MetricFeeTransactions = "stakeflow_fee_transactions_total"
)

// Label keys of every stakeflow metric, wherever it is recorded: the activities, the workflows
// and package internal/metrics all label with these.
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

// Broadcast outcomes and refusal reasons (labels of MetricBroadcasts).
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

// LabelValue keeps a label value non-empty: an empty value would make the sample look
// unlabelled, so it becomes "unknown".
func LabelValue(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// RecordBroadcast counts one broadcast answer. reason is ReasonNone unless outcome is
// BroadcastRefused.
func RecordBroadcast(ctx context.Context, chain, network, outcome, reason string) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	h.WithTags(map[string]string{
		LabelChain: LabelValue(chain), LabelNetwork: LabelValue(network), LabelOutcome: LabelValue(outcome), LabelReason: LabelValue(reason),
	}).Counter(MetricBroadcasts).Inc(1)
}

// RecordFee adds the fee one landed transaction paid, in lamports, to MetricFeeLamports and counts
// the transaction in MetricFeeTransactions, so that their ratio is the mean fee.
func RecordFee(ctx context.Context, chain, network, operation string, lamports uint64) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	h = h.WithTags(map[string]string{LabelChain: LabelValue(chain), LabelNetwork: LabelValue(network), LabelOperation: LabelValue(operation)})
	h.Counter(MetricFeeLamports).Inc(int64(min(lamports, math.MaxInt64)))
	h.Counter(MetricFeeTransactions).Inc(1)
}
