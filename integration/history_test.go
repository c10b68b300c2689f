//go:build integration

package integration

import (
	"context"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/stakeflow/stakeflow/codec"
)

// exportHistory returns a workflow's history in the JSON form `temporal workflow show --output
// json` writes, which the SDK's replayer reads, with its payloads decrypted (decodeHistory).
func exportHistory(ctx context.Context, id string) ([]byte, error) {
	return exportRunHistory(ctx, id, "")
}

// exportRunHistory is exportHistory of one run of a workflow.
func exportRunHistory(ctx context.Context, id, runID string) ([]byte, error) {
	it := st.Client.GetWorkflowHistory(ctx, id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		h.Events = append(h.Events, ev)
	}
	if err := decodeHistory(ctx, h, keyset); err != nil {
		return nil, fmt.Errorf("history of %s: %w", id, err)
	}
	return protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
}

// decodeHistory opens every payload of h that the payload codec sealed (inputs, results, memos,
// markers, failure details, failures' encoded attributes) with keys, in place: recorded histories
// are committed decrypted, so that no key is committed with them, a review reads them, and the
// replay tests replay them with the SDK's default converter, which reads a failure's message from
// its decoded attributes. Search attributes are never sealed. A payload in clear is refused: the
// histories of the run are all written through the codec.
func decodeHistory(ctx context.Context, h *historypb.History, keys *codec.Keyset) error {
	c := codec.New(keys)
	return proxy.VisitPayloads(ctx, h, proxy.VisitPayloadsOptions{
		SkipSearchAttributes: true,
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			return c.Decode(ps)
		},
	})
}
