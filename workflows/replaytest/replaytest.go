// Package replaytest replays recorded workflow histories as the workflows they were recorded from.
//
// A recorded history does not hold its own workflow ID, and the SDK's replayer runs it under a
// made-up one. An operation derives the IDs of its event deliveries (StakeflowNotify children)
// from its own ID, so its history replays only under the ID it ran with: Replay reads it back from
// those children's IDs.
package replaytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/workflows"
)

// ReplayAll replays every history recorded under testdata/histories (`make record-histories`;
// <WorkflowType>.json, or <WorkflowType>-<scenario>.json for an operation recorded where it rests
// or as it ended otherwise) on a replayer register fills, each as a subtest under the recording's
// search key and under another, and requires at least one history, and one of each of types.
func ReplayAll(t *testing.T, register func(worker.WorkflowReplayer), types ...string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded history")
	found := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		typ, _, _ := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
		// Under the recording's search key, and under another: an operation replays the same on a
		// worker given another search key (it records the tags its control flow depends on).
		for _, key := range []struct{ name, key string }{{"recorded-key", SearchKey}, {"another-key", AnotherSearchKey}} {
			t.Run(name+"/"+key.name, func(t *testing.T) {
				r, err := NewReplayer(key.key)
				require.NoError(t, err)
				register(r)
				require.NoError(t, Replay(r, f), "the workflow code no longer replays %s: until a first deployment, "+
					"re-record the histories (make record-histories) and end the commit message with the trailer "+
					"Rolling-Upgrade: none (docs/testing.md)", f)
			})
		}
		t.Run(name+"/history-ceiling", func(t *testing.T) {
			ceiling, ok := Ceilings[typ]
			require.True(t, ok, "no history ceiling for %s in replaytest.Ceilings", typ)
			h, err := readHistory(f)
			require.NoError(t, err)
			require.LessOrEqual(t, HistorySize(h), ceiling, "%s: the history of %s passes its ceiling", name, typ)
		})
		found[typ] = true
	}
	for _, typ := range types {
		require.True(t, found[typ], "no recorded history for %s: every shipped workflow needs one", typ)
	}
}

// SearchKey is the search key of the keyset the integration suite runs under (integration's
// TestMain), so the histories it records were tagged under it. It is a test key: it tags test
// addresses and guards nothing.
const SearchKey = "MdwdOfzU5igw716Vu8wnGfays3E06Y7WWtK746eGvzc="

// AnotherSearchKey is a search key other than SearchKey, for replaying as a worker given another
// key would.
const AnotherSearchKey = "64bhQw8YMBZsHGJaFPKbN7UT07wegQ2txcpItPiaGfs="

// NewReplayer is a replayer as a worker with payload encryption runs: under a Tagger with
// searchKey (workflows.TaggerInterceptor). Operations started under a tagger write their
// confidential search attributes as tags; operations started clear replay the same under it
// (workflows' versionConcealed).
func NewReplayer(searchKey string) (worker.WorkflowReplayer, error) {
	f, err := codec.NewKeyFile("replay")
	if err != nil {
		return nil, err
	}
	f.SearchKey = searchKey
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	ks, err := codec.ParseKeyset(b)
	if err != nil {
		return nil, err
	}
	return worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{
		workflows.TaggerInterceptor(ks.Tagger()).(interceptor.WorkerInterceptor)}})
}

// Replay replays the JSON history at path (as `temporal workflow show --output json` and `make
// record-histories` write it) on r, under the workflow ID it ran with when its events tell it.
func Replay(r worker.WorkflowReplayer, path string) error {
	h, err := readHistory(path)
	if err != nil {
		return err
	}
	var opts worker.ReplayWorkflowHistoryOptions
	for _, ev := range h.GetEvents() {
		if ev.GetEventType() != enums.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED {
			continue
		}
		a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes()
		if a.GetWorkflowType().GetName() != workflows.NotifyWorkflowType {
			continue
		}
		if id, ok := OperationOfEvent(a.GetWorkflowId()); ok {
			opts.OriginalExecution = workflow.Execution{ID: id}
			break
		}
	}
	return r.ReplayWorkflowHistoryWithOptions(nil, h, opts)
}

// OperationOfEvent is the operation ID an event ID (<operation ID>/<type>[/<n>]) belongs to.
func OperationOfEvent(eventID string) (string, bool) {
	for _, typ := range []string{notify.EventAwaitingApproval, notify.EventStalled, notify.EventFailed, notify.EventCancelled, notify.EventCompleted} {
		if i := strings.LastIndex(eventID, "/"+typ); i > 0 {
			rest := eventID[i+1+len(typ):]
			if rest == "" || (strings.HasPrefix(rest, "/") && strings.Trim(rest[1:], "0123456789") == "") {
				return eventID[:i], true
			}
		}
	}
	return "", false
}

// readHistory reads the JSON history at path.
func readHistory(path string) (*historypb.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return client.HistoryFromJSON(f, client.HistoryJSONOptions{})
}
