package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/signer"
)

func TestFailureType(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"application error type", temporal.NewNonRetryableApplicationError("no", "TooManyBuilds", nil), "TooManyBuilds"},
		{"wrapped application error", fmt.Errorf("activity: %w", temporal.NewApplicationError("x", "ServiceUnavailable")), "ServiceUnavailable"},
		{"cancelled", temporal.NewCanceledError("stop"), metrics.FailureCancelled},
		{"untyped application error", temporal.NewApplicationError("x", ""), metrics.FailureOther},
		{"plain error", errors.New("boom"), metrics.FailureOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, metrics.FailureType(tt.err)) })
	}
}

func TestSignerCheck(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"verification check", &signer.VerificationError{Check: "fee payer"}, "fee_payer"},
		{"numbered instruction", fmt.Errorf("sign: %w", &signer.VerificationError{Check: "instruction #2 program"}), "instruction_program"},
		{"allow-list", &signer.VerificationError{Check: "vote account allow-list"}, "vote_account_allow_list"},
		{"unknown key", &signer.UnknownKeyError{Address: "x"}, "unknown_key"},
		{"decode", fmt.Errorf("%w: bad base64", signer.ErrDecode), "decode"},
		{"intent", fmt.Errorf("%w: no staker", signer.ErrIntent), "intent"},
		{"other", errors.New("boom"), "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, metrics.SignerCheck(tt.err)) })
	}
}

func TestServiceErrorLabels(t *testing.T) {
	tests := []struct {
		name                    string
		err                     error
		wantStatus, wantExcName string
	}{
		{"ok", nil, "ok", ""},
		{"api error", &apiclient.APIError{StatusCode: 400, Name: "ValidationException"}, "400", "ValidationException"},
		{"unnamed api error", &apiclient.APIError{StatusCode: 500}, "500", "unnamed"},
		{"unexpected body", &apiclient.UnexpectedResponseError{StatusCode: 502}, "502", "unexpected_response"},
		{"transport", &apiclient.TransportError{Err: errors.New("connection refused")}, "transport", "transport"},
		{"canceled", &apiclient.TransportError{Err: context.Canceled}, "canceled", "canceled"},
		{"argument", &apiclient.ArgumentError{Field: "amount"}, "invalid_request", "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, exc := metrics.ServiceErrorLabels(tt.err)
			assert.Equal(t, tt.wantStatus, status)
			assert.Equal(t, tt.wantExcName, exc)
		})
	}
}

func TestNilHandlersRecordNothing(t *testing.T) {
	op := metrics.ForOperation(nil, "solana", "testnet", "stake")
	op.Started()
	op.Failed(errors.New("boom"))
	metrics.RecordBroadcast(nil, "solana", "testnet", metrics.BroadcastSent, metrics.ReasonNone)
	metrics.RecordSignerRefusal(nil, "solana", "stake", errors.New("boom"))
	var zero metrics.Operation
	zero.Completed()
}
