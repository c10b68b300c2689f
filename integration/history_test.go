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
