package metrics

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
)

// Metrics of the staking service calls, recorded by ServiceObserver. Counters end in _total and
// timers in _seconds, as Prometheus expects.
const (
	ServiceRequests        = "stakeflow_service_requests_total"
	ServiceRequestDuration = "stakeflow_service_request_duration_seconds"
	ServiceErrors          = "stakeflow_service_errors_total"
	ServiceThrottled       = "stakeflow_service_throttled_total"
	ServiceRetryAfter      = "stakeflow_service_retry_after_seconds"
)

// ServiceObserver returns the apiclient.Observer that counts and times every call of a staking
// service client, whichever endpoint and whichever chain or job makes it: requests by endpoint
// and status, latency, errors by exception name, 429s and their Retry-After delays, labelled by
// activities.LabelEndpoint with the endpoint's apiclient label ("stake", "celestia_send", ...).
// Called from an activity, it also logs each call at debug level through the activity's logger,
// which carries the workflow ID (operation ID) and run ID. h nil records nothing (the log
// remains). Set it with apiclient.WithObserver where the client is built.
func ServiceObserver(h client.MetricsHandler) apiclient.Observer {
	return func(ctx context.Context, call apiclient.Call) {
		recordServiceCall(ctx, h, call)
	}
}

func recordServiceCall(ctx context.Context, h client.MetricsHandler, call apiclient.Call) {
	endpoint := string(call.Endpoint)
	status, exception := call.Status(), call.Exception()
	if activity.IsActivity(ctx) {
		kv := []any{"endpoint", endpoint, "status", status, "duration", call.Duration}
		if call.Err != nil {
			kv = append(kv, "exception", exception, "requestId", call.RequestID())
		}
		activity.GetLogger(ctx).Debug("Staking service call", kv...)
	}
	if h == nil {
		return
	}
	h = h.WithTags(map[string]string{activities.LabelEndpoint: endpoint})
	h.Timer(ServiceRequestDuration).Record(call.Duration)
	h.WithTags(map[string]string{activities.LabelStatus: status}).Counter(ServiceRequests).Inc(1)
	if call.Err == nil {
		return
	}
	h.WithTags(map[string]string{activities.LabelStatus: status, activities.LabelException: exception}).Counter(ServiceErrors).Inc(1)
	if call.Throttled() {
		h.Counter(ServiceThrottled).Inc(1)
		if d, ok := call.RetryAfter(); ok {
			h.Timer(ServiceRetryAfter).Record(d)
		}
	}
}
