package activities

import (
	"context"
	"errors"
	"math"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/stakeflow/stakeflow/signer"
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

// recordBroadcast counts one broadcast answer. reason is ReasonNone unless outcome is
// BroadcastRefused.
func recordBroadcast(ctx context.Context, chain, network, outcome, reason string) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	h.WithTags(map[string]string{
		LabelChain: LabelValue(chain), LabelNetwork: LabelValue(network), LabelOutcome: LabelValue(outcome), LabelReason: LabelValue(reason),
	}).Counter(MetricBroadcasts).Inc(1)
}

// recordFee adds the fee one landed transaction paid, in lamports, to MetricFeeLamports and counts
// the transaction in MetricFeeTransactions, so that their ratio is the mean fee.
func recordFee(ctx context.Context, chain, network, operation string, lamports uint64) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	h = h.WithTags(map[string]string{LabelChain: LabelValue(chain), LabelNetwork: LabelValue(network), LabelOperation: LabelValue(operation)})
	h.Counter(MetricFeeLamports).Inc(int64(min(lamports, math.MaxInt64)))
	h.Counter(MetricFeeTransactions).Inc(1)
}

// recordSignerRefusal counts a transaction the signer refused, labelled by signerCheck(err).
func recordSignerRefusal(ctx context.Context, chain, operation string, err error) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	h.WithTags(map[string]string{
		LabelChain: LabelValue(chain), LabelOperation: LabelValue(operation), LabelCheck: signerCheck(err),
	}).Counter(MetricSignerRefusals).Inc(1)
}

// signerCheck names what made the signer refuse: the failed verification's check in snake case,
// or unknown_key, decode, intent, verification, other.
func signerCheck(err error) string {
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
