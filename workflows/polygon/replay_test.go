package polygon

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

// TestReplayRecordedHistories replays every Polygon history recorded from an integration run
// (`make record-histories`) against the current workflow code; every Polygon workflow type that the
// integration tests run needs one. A change that breaks them fails here: nothing is deployed yet,
// so re-record them rather than guard the change.
func TestReplayRecordedHistories(t *testing.T) {
	replaytest.ReplayAll(t, func(r worker.WorkflowReplayer) { Register(r) }, DelegateWorkflowType, UnstakeWorkflowType)
}
