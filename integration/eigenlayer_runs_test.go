//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
)

// startCheckpoint starts the checkpoint of owner's pod as the starter does, with batchesPerRun.
func startCheckpoint(t *testing.T, owner string, batchesPerRun int) client.WorkflowRun {
	t.Helper()
	id := checkpointID(owner)
	run, err := st.Client.ExecuteWorkflow(context.Background(),
		starter.StartOptions(id, "checkpoint of "+owner+"'s pod", queueOf(t, wfeigenlayer.CheckpointWorkflowType), wfeigenlayer.Attributes(stack.EVMNetwork, owner)...),
		wfeigenlayer.CheckpointWorkflowType, wfeigenlayer.CheckpointInput{Network: stack.EVMNetwork, Owner: owner, BatchesPerRun: batchesPerRun})
	require.NoError(t, err)
	return run
}

// TestEigenLayerCheckpointContinuesAsNew: a pod of 200 validators checkpointed one batch a run:
// three runs under the one operation ID, the status query answering the run in progress with
// the progress of the runs before, the result of the last run the whole operation's (one start,
// three batches), the rewards credited once, and every run's history under the bound.
func TestEigenLayerCheckpointContinuesAsNew(t *testing.T) {
	owner := st.EVM.Stakers[13]
	pod, before := eigenPod(t, owner, 200)
	run := startCheckpoint(t, owner.Hex(), 1)
	id := run.GetID()
	// The last run's history: a run continued from another, carrying its progress.
	recordAs(id, wfeigenlayer.CheckpointWorkflowType+"-continued")

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		d, err := st.Client.DescribeWorkflowExecution(context.Background(), id, "")
		require.NoError(c, err)
		require.NotEqual(c, run.GetRunID(), d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "a later run")
		s := queryStatus(t, id)
		require.NotNil(c, s.Checkpoint)
		assert.GreaterOrEqual(c, s.Checkpoint.BatchesSent, 1, "the earlier runs' batches")
		assert.NotEmpty(c, s.Checkpoint.StartTx)
		assert.GreaterOrEqual(c, len(s.Transactions), 2, "the earlier runs' transactions")
	}, 4*time.Minute, 200*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var res wfeigenlayer.Result
	require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	assert.Equal(t, 3, res.BatchesSent)
	require.Len(t, res.Transactions, 4, "1 start + 3 batches, across the runs")
	assert.Equal(t, wfeigenlayer.KindStart, res.Transactions[0].Kind)
	assert.Equal(t, 1, checkpointsStarted(t, pod), "one startCheckpoint")
	creditedOnce(t, pod, before, 200, res.CheckpointTimestamp)
	assert.Len(t, runsUnder(t, id, maxRunHistoryBytes), 3, "one run a batch")
	s := queryStatus(t, id)
	assert.Equal(t, workflows.StepDone, s.Step)
}

// TestEigenLayerLargePodHistoryBounded: a checkpoint of a 10,000-validator pod (125 batches)
// completes, continuing as new on its budget, every run's history under 2 MB (the server's
// count), the rewards credited once. The checkpoint (about 7 minutes on the local chain) is
// started before t.Parallel, so it runs while the suite's other tests do; the test resumes,
// waits for it and checks it once they have finished.
func TestEigenLayerLargePodHistoryBounded(t *testing.T) {
	const validators = 10_000
	owner := st.EVM.Stakers[14]
	began := time.Now()
	pod, before := eigenPod(t, owner, validators)
	t.Logf("pod of %d validators made in %s", validators, time.Since(began).Round(time.Second))
	run := startCheckpoint(t, owner.Hex(), 0)
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var res wfeigenlayer.Result
	require.NoError(t, st.Client.GetWorkflow(ctx, run.GetID(), "").Get(ctx, &res))
	t.Logf("checkpoint of %d validators completed %s after it started", validators, time.Since(began).Round(time.Second))
	assert.Equal(t, (validators+79)/80, res.BatchesSent)
	assert.Len(t, res.Transactions, 1+res.BatchesSent)
	creditedOnce(t, pod, before, validators, res.CheckpointTimestamp)
	sizes := runsUnder(t, run.GetID(), maxRunHistoryBytes)
	assert.Greater(t, len(sizes), 1, "continued as new on its budget")
}
