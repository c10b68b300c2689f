package evm

import (
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

// TestReplayRecordedHistories replays the nonce sequencer's recorded histories (an idle sequencer
// between leases, as a deploy finds it) against the current code.
func TestReplayRecordedHistories(t *testing.T) {
	replaytest.ReplayAll(t, func(r worker.WorkflowReplayer) {
		r.RegisterWorkflowWithOptions(NonceSequencerWorkflow, workflow.RegisterOptions{Name: actevm.SequencerWorkflowType})
	}, actevm.SequencerWorkflowType)
}
