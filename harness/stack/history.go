package stack

import (
	"context"

	"go.temporal.io/api/enums/v1"
)

// RunHistorySizes are the sizes in bytes, as the server counts them (DescribeWorkflowExecution's
// HistorySizeBytes), of every run of workflow id, the first run first: from the latest run back
// through each run's ContinuedExecutionRunId.
func (s *Stack) RunHistorySizes(ctx context.Context, id string) ([]int64, error) {
	var sizes []int64
	for run := ""; ; {
		d, err := s.Client.DescribeWorkflowExecution(ctx, id, run)
		if err != nil {
			return nil, err
		}
		info := d.GetWorkflowExecutionInfo()
		sizes = append([]int64{info.GetHistorySizeBytes()}, sizes...)
		it := s.Client.GetWorkflowHistory(ctx, id, info.GetExecution().GetRunId(), false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		first, err := it.Next()
		if err != nil {
			return nil, err
		}
		if run = first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId(); run == "" {
			return sizes, nil
		}
	}
}
