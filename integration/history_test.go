//go:build integration

package integration

import (
	"context"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// exportHistory returns a workflow's history in the JSON form `temporal workflow show --output
// json` writes, which the SDK's replayer reads.
func exportHistory(ctx context.Context, id string) ([]byte, error) {
	it := st.Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		h.Events = append(h.Events, ev)
	}
	return protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
}

// runHistorySizes are the sizes in bytes, as the server counts them (DescribeWorkflowExecution's
// HistorySizeBytes), of every run of operation id, the first run first: from the latest run back
// through each run's ContinuedExecutionRunId.
func runHistorySizes(ctx context.Context, id string) ([]int64, error) {
	var sizes []int64
	for run := ""; ; {
		d, err := st.Client.DescribeWorkflowExecution(ctx, id, run)
		if err != nil {
			return nil, err
		}
		info := d.GetWorkflowExecutionInfo()
		sizes = append([]int64{info.GetHistorySizeBytes()}, sizes...)
		it := st.Client.GetWorkflowHistory(ctx, id, info.GetExecution().GetRunId(), false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		first, err := it.Next()
		if err != nil {
			return nil, err
		}
		if run = first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId(); run == "" {
			return sizes, nil
		}
	}
}
