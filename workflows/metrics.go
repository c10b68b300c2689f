package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
)

// Metrics the workflows record, exactly once per event: through workflow.GetMetricsHandler, which
// records nothing while a workflow replays its history. Each is labelled with the operation's
// chain, network and operation (activities.LabelChain, ...); internal/metrics/doc.go lists every
// stakeflow metric.
const (
	// MetricOperationsStarted counts operations started (after their input was validated).
	MetricOperationsStarted = "stakeflow_operations_started_total"
	// MetricOperationsCompleted counts operations that reached their end successfully.
	MetricOperationsCompleted = "stakeflow_operations_completed_total"
	// MetricOperationsFailed counts started operations that ended in failure, labelled
	// activities.LabelFailureType with FailureType(err).
	MetricOperationsFailed = "stakeflow_operations_failed_total"
	// MetricRebuilds counts transactions built again because the previous one was proven unable to
	// land.
	MetricRebuilds = "stakeflow_rebuilds_total"
	// MetricConfirmations counts confirmation results, labelled activities.LabelOutcome with
	// Confirm's outcome (activities.OutcomeFinalized, OutcomeFailed, OutcomeCannotLand, OutcomeReplace).
	MetricConfirmations = "stakeflow_confirmations_total"
	// MetricStalls counts operations entering a stall, once per stall.
	MetricStalls = "stakeflow_stalls_total"
)

// Failure types of MetricOperationsFailed besides application error types.
const (
	FailureCancelled = "Cancelled"
	FailureTimeout   = "Timeout"
	FailureOther     = "Other"
)

// FailureType names the kind of err for MetricOperationsFailed: the type of the application error
// it carries, FailureCancelled, FailureTimeout, or FailureOther.
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

// opMetrics records the life of one operation. The zero value records nothing.
type opMetrics struct {
	// inc adds one to the counter name, with tags besides the operation's own labels.
	inc func(name string, tags map[string]string)
}

// newOpMetrics returns the recorder of one operation's metrics, built from
// workflow.GetMetricsHandler(ctx) so that replays record nothing.
func newOpMetrics(ctx workflow.Context, chain, network, operation string) opMetrics {
	h := workflow.GetMetricsHandler(ctx)
	if h == nil {
		return opMetrics{}
	}
	h = h.WithTags(map[string]string{
		activities.LabelChain:     activities.LabelValue(chain),
		activities.LabelNetwork:   activities.LabelValue(network),
		activities.LabelOperation: activities.LabelValue(operation),
	})
	return opMetrics{inc: func(name string, tags map[string]string) {
		th := h
		if tags != nil {
			th = th.WithTags(tags)
		}
		th.Counter(name).Inc(1)
	}}
}

// started counts the operation as started.
func (m opMetrics) started() { m.count(MetricOperationsStarted, nil) }

// completed counts the operation as completed successfully.
func (m opMetrics) completed() { m.count(MetricOperationsCompleted, nil) }

// failed counts the operation as failed with err, labelled by FailureType(err).
func (m opMetrics) failed(err error) {
	m.count(MetricOperationsFailed, map[string]string{activities.LabelFailureType: FailureType(err)})
}

// rebuilt counts a transaction built again after the previous one was proven unable to land.
func (m opMetrics) rebuilt() { m.count(MetricRebuilds, nil) }

// stalled counts the operation entering a stall.
func (m opMetrics) stalled() { m.count(MetricStalls, nil) }

// confirmed counts a confirmation outcome.
func (m opMetrics) confirmed(outcome string) {
	m.count(MetricConfirmations, map[string]string{activities.LabelOutcome: activities.LabelValue(outcome)})
}

func (m opMetrics) count(name string, tags map[string]string) {
	if m.inc != nil {
		m.inc(name, tags)
	}
}
