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
