package solana

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

// TestReplayRecordedHistories replays every history recorded from an integration run (see
// `make record-histories`) against the current workflow code. Files are named
// <WorkflowType>.json (the current code) or <WorkflowType>-<what changed since>.json (histories
// kept from earlier versions, which running workflows may still have). A change that would break
// them fails here; guard it with workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	replaytest.ReplayAll(t, func(r worker.WorkflowReplayer) {
		r.RegisterWorkflow(StakeWorkflow)
		r.RegisterWorkflow(UnstakeWorkflow)
		r.RegisterWorkflow(WithdrawWorkflow)
	}, "StakeWorkflow", "UnstakeWorkflow", "WithdrawWorkflow")
}
