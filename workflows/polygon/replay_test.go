package polygon

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

// TestReplayRecordedHistories replays every Polygon history recorded from an integration run
// (`make record-histories`) against the current workflow code; every Polygon workflow type that
// the integration tests run needs one. A change that breaks them fails here: guard it with
// workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	want := map[string]bool{DelegateWorkflowType: false, UnstakeWorkflowType: false}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			Register(r)
			require.NoError(t, replaytest.Replay(r, f))
		})
		typ, _, _ := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
		want[typ] = true
	}
	for wf, found := range want {
		require.True(t, found, "no recorded history for %s", wf)
	}
}
