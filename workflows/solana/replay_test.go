package solana

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

// TestReplayRecordedHistories replays every history recorded from an integration run (see
// `make record-histories`) against the current workflow code. Files are named
// <WorkflowType>.json (the current code) or <WorkflowType>-<what changed since>.json (histories
// kept from earlier versions, which running workflows may still have). A change that would break
// them fails here; guard it with workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	want := map[string]bool{"StakeWorkflow": false, "UnstakeWorkflow": false, "WithdrawWorkflow": false}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(StakeWorkflow)
			r.RegisterWorkflow(UnstakeWorkflow)
			r.RegisterWorkflow(WithdrawWorkflow)
			require.NoError(t, replaytest.Replay(r, f))
		})
		typ, _, _ := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
		want[typ] = true
	}
	for wf, found := range want {
		require.True(t, found, "no recorded history for %s: every shipped workflow needs one", wf)
	}
}
