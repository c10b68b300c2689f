package polygon

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/workflows"
	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

type hashTagger struct{}

func (hashTagger) Tag(v string) (string, bool) {
	sum := sha256.Sum256([]byte(v))
	return "h:" + hex.EncodeToString(sum[:8]), true
}

// TestClearHistoriesReplayUnderATagger: operations recorded clear replay on a worker that has since
// been given a keyset (a tagger): they keep naming their nonce lease by the address, as they did,
// rather than by its tag, which would be another workflow and a nondeterministic replay.
func TestClearHistoriesReplayUnderATagger(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{
				workflows.TaggerInterceptor(hashTagger{}).(interceptor.WorkerInterceptor)}})
			require.NoError(t, err)
			Register(r)
			require.NoError(t, replaytest.Replay(r, f))
		})
	}
}
