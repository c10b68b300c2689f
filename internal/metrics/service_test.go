package metrics_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/metrics"
)

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
