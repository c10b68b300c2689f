package solana

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

// TestReplayRecordedHistories replays every history recorded from an integration run (see
// `make record-histories`) against the current workflow code. Files are named <WorkflowType>.json
// or <WorkflowType>-<scenario>.json. A change that breaks them fails here: nothing is deployed yet,
// so re-record them rather than guard the change.
func TestReplayRecordedHistories(t *testing.T) {
	replaytest.ReplayAll(t, func(r worker.WorkflowReplayer) {
		r.RegisterWorkflow(StakeWorkflow)
		r.RegisterWorkflow(UnstakeWorkflow)
		r.RegisterWorkflow(WithdrawWorkflow)
	}, "StakeWorkflow", "UnstakeWorkflow", "WithdrawWorkflow")
}
