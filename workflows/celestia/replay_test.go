package celestia

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

// TestReplayRecordedHistories replays every Celestia history recorded from an integration run
// (`make record-histories`) against the current workflow code. A change that breaks them fails
// here: nothing is deployed yet, so re-record them rather than guard the change.
func TestReplayRecordedHistories(t *testing.T) {
	replaytest.ReplayAll(t, func(r worker.WorkflowReplayer) { Register(r) },
		DelegateWorkflowType, UndelegateWorkflowType, RedelegateWorkflowType, WithdrawRewardsWorkflowType)
}
