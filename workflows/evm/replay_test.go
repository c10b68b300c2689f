package evm

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/workflows/replaytest"
	"go.temporal.io/sdk/workflow"

	actevm "github.com/stakeflow/stakeflow/activities/evm"
)

// TestReplayRecordedHistories replays the nonce sequencer's recorded histories (an idle sequencer
// between leases, as a deploy finds it) against the current code.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded history of the nonce sequencer")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(NonceSequencerWorkflow, workflow.RegisterOptions{Name: actevm.SequencerWorkflowType})
			require.NoError(t, replaytest.Replay(r, f))
		})
	}
}
