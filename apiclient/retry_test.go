package apiclient

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetryAfterOn503: a 503 with Retry-After in either form gives its delay
// through RetryAfterOf, enveloped or not, and stays retryable.
func TestRetryAfterOn503(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	envelope := errorBody("ServiceUnavailableException", 100503, "server", "maintenance", "")
	tests := []struct {
		name       string
		retryAfter string
		body       string
		want       time.Duration
	}{
		{"seconds, envelope", "120", envelope, 2 * time.Minute},
		{"HTTP date, envelope", now.Add(90 * time.Second).Format(http.TimeFormat), envelope, 90 * time.Second},
		{"seconds, HTML from a proxy", "5", "<html>503 Service Unavailable</html>", 5 * time.Second},
		{"HTTP date, HTML from a proxy", now.Add(time.Hour).Format(http.TimeFormat), "<html>down</html>", time.Hour},
		{"HTTP date already past", now.Add(-time.Minute).Format(http.TimeFormat), envelope, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fixedServer(t, http.StatusServiceUnavailable, map[string]string{"Retry-After": tt.retryAfter}, tt.body)
			c := newTestClient(t, srv.URL, withClock(func() time.Time { return now }))
			_, err := c.SSVRequests(context.Background(), SSVRequestsQuery{})
			require.Error(t, err)
			wrapped := fmt.Errorf("activity: %w", err)
			d, ok := RetryAfterOf(wrapped)
			assert.True(t, ok, "Retry-After of a 503 is reported")
			assert.Equal(t, tt.want, d)
			assert.True(t, IsRetryable(wrapped))
			assert.False(t, IsThrottled(wrapped), "a 503 is not throttling")
		})
	}

	// Without Retry-After a 503 says nothing about when; RateLimit-Reset is a
	// 429's fallback only.
	srv, _ := fixedServer(t, http.StatusServiceUnavailable, map[string]string{"RateLimit-Reset": "30"}, envelope)
	c := newTestClient(t, srv.URL)
	_, err := c.SSVRequests(context.Background(), SSVRequestsQuery{})
	_, ok := RetryAfterOf(err)
	assert.False(t, ok)
	assert.True(t, IsRetryable(err))
}

// TestRetryableStatuses: 408 and 409 answered with the error envelope are
// retryable like 429 and 5xx; other 4xx are not, and without the envelope 408
// and 409 are not known to come from the service.
func TestRetryableStatuses(t *testing.T) {
	tests := []struct {
		status    int
		envelope  bool
		retryable bool
	}{
		{408, true, true},
		{409, true, true},
		{429, true, true},
		{500, true, true},
		{503, true, true},
		{400, true, false},
		{401, true, false},
		{403, true, false},
		{404, true, false},
		{422, true, false},
		{408, false, false},
		{409, false, false},
		{502, false, true},
	}
	for _, tt := range tests {
		name := strconv.Itoa(tt.status)
		body := "<html>" + name + "</html>"
		if tt.envelope {
			name += " envelope"
			body = errorBody("SomeException", 100000+tt.status, "server", "x", "")
		}
		t.Run(name, func(t *testing.T) {
			srv, _ := fixedServer(t, tt.status, nil, body)
			c := newTestClient(t, srv.URL)
			_, err := c.Broadcast(context.Background(), BroadcastRequest{Chain: ChainSolana, Network: "testnet", StakerAddress: staker, SignedTransaction: base64Tx})
			require.Error(t, err)
			if tt.envelope {
				var a *APIError
				require.ErrorAs(t, err, &a)
				assert.Equal(t, tt.retryable, a.Retryable())
			} else {
				var u *UnexpectedResponseError
				require.ErrorAs(t, err, &u)
				assert.Equal(t, tt.retryable, u.Retryable())
			}
			assert.Equal(t, tt.retryable, IsRetryable(fmt.Errorf("wrapped: %w", err)))
		})
	}
}
