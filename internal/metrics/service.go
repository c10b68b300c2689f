package metrics

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/apiclient"
)

// Metrics of the staking service calls, recorded by Service. Counters end in _total and timers in
// _seconds, as Prometheus expects.
const (
	ServiceRequests        = "stakeflow_service_requests_total"
	ServiceRequestDuration = "stakeflow_service_request_duration_seconds"
	ServiceErrors          = "stakeflow_service_errors_total"
	ServiceThrottled       = "stakeflow_service_throttled_total"
	ServiceRetryAfter      = "stakeflow_service_retry_after_seconds"
)

// Endpoint labels of the staking service calls (activities.LabelEndpoint).
const (
	EndpointStake           = "stake"
	EndpointUnstake         = "unstake"
	EndpointWithdraw        = "withdraw"
	EndpointBroadcast       = "broadcast"
	EndpointValidatorStatus = "validator_status"
)

// Service counts and times every call to the staking service it wraps: requests by endpoint and
// status, latency, errors by exception name, 429s and their Retry-After delays. Called from an
// activity, it also logs each call at debug level through the activity's logger, which carries
// the workflow ID (operation ID) and run ID. It changes neither requests nor answers.
type Service struct {
	next actsolana.StakingService
	h    client.MetricsHandler
	now  func() time.Time
}

var _ actsolana.StakingService = (*Service)(nil)

// NewService wraps next, recording through h (nil: nothing is recorded, next is still called).
func NewService(next actsolana.StakingService, h client.MetricsHandler) *Service {
	return &Service{next: next, h: h, now: time.Now}
}

// Stake implements actsolana.StakingService.
func (s *Service) Stake(ctx context.Context, req apiclient.StakeRequest) (*apiclient.UnsignedTransaction, error) {
	start := s.now()
	res, err := s.next.Stake(ctx, req)
	s.record(ctx, EndpointStake, start, err)
	return res, err
}

// Unstake implements actsolana.StakingService.
func (s *Service) Unstake(ctx context.Context, req apiclient.UnstakeRequest) (*apiclient.UnsignedTransaction, error) {
	start := s.now()
	res, err := s.next.Unstake(ctx, req)
	s.record(ctx, EndpointUnstake, start, err)
	return res, err
}

// Withdraw implements actsolana.StakingService.
func (s *Service) Withdraw(ctx context.Context, req apiclient.WithdrawRequest) (*apiclient.UnsignedTransaction, error) {
	start := s.now()
	res, err := s.next.Withdraw(ctx, req)
	s.record(ctx, EndpointWithdraw, start, err)
	return res, err
}

// Broadcast implements actsolana.StakingService.
func (s *Service) Broadcast(ctx context.Context, req apiclient.BroadcastRequest) (*apiclient.BroadcastResult, error) {
	start := s.now()
	res, err := s.next.Broadcast(ctx, req)
	s.record(ctx, EndpointBroadcast, start, err)
	return res, err
}

// SolanaValidatorStatus implements actsolana.StakingService.
func (s *Service) SolanaValidatorStatus(ctx context.Context, network string, voteAccounts []string) (*apiclient.ValidatorStatusResult, error) {
	start := s.now()
	res, err := s.next.SolanaValidatorStatus(ctx, network, voteAccounts)
	s.record(ctx, EndpointValidatorStatus, start, err)
	return res, err
}

func (s *Service) record(ctx context.Context, endpoint string, start time.Time, err error) {
	took := s.now().Sub(start)
	status, exception := ServiceErrorLabels(err)
	if activity.IsActivity(ctx) {
		kv := []any{"endpoint", endpoint, "status", status, "duration", took}
		if err != nil {
			kv = append(kv, "exception", exception, "requestId", apiclient.RequestIDOf(err))
		}
		activity.GetLogger(ctx).Debug("Staking service call", kv...)
	}
	if s.h == nil {
		return
	}
	h := s.h.WithTags(map[string]string{activities.LabelEndpoint: endpoint})
	h.Timer(ServiceRequestDuration).Record(took)
	h.WithTags(map[string]string{activities.LabelStatus: status}).Counter(ServiceRequests).Inc(1)
	if err == nil {
		return
	}
	h.WithTags(map[string]string{activities.LabelStatus: status, activities.LabelException: exception}).Counter(ServiceErrors).Inc(1)
	if apiclient.IsThrottled(err) {
		h.Counter(ServiceThrottled).Inc(1)
		if d, ok := apiclient.RetryAfterOf(err); ok {
			h.Timer(ServiceRetryAfter).Record(d)
		}
	}
}

// ServiceErrorLabels returns the status and exception labels of a staking service call's error:
// "ok" and "" for nil; the HTTP status and the exception name (or "unexpected_response") for an
// answer; "canceled", "invalid_request" or "transport" (twice) for a call that got no answer.
func ServiceErrorLabels(err error) (status, exception string) {
	if err == nil {
		return "ok", ""
	}
	var apiErr *apiclient.APIError
	var unexpected *apiclient.UnexpectedResponseError
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
	case apiclient.IsArgument(err) || errors.Is(err, apiclient.ErrNoToken):
		return "invalid_request", "invalid_request"
	}
	return "transport", "transport"
}
