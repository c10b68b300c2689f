package solana

import (
	"context"
	"errors"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/signer"
)

// recordSignerRefusal counts a transaction the signer refused, labelled by signerCheck(err).
func recordSignerRefusal(ctx context.Context, chain, operation string, err error) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	h.WithTags(map[string]string{
		activities.LabelChain: activities.LabelValue(chain), activities.LabelOperation: activities.LabelValue(operation), activities.LabelCheck: signerCheck(err),
	}).Counter(activities.MetricSignerRefusals).Inc(1)
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
