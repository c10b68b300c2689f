package lease_test

import (
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows/replaytest"
)

// TestReplayRecordedHistories replays the lease's recorded histories (an idle EVM lease between
// operations, as a deploy finds it, recorded by the integration suite) against the current code.
func TestReplayRecordedHistories(t *testing.T) {
	var ea *actevm.Activities
	replaytest.ReplayAll(t, func(r worker.WorkflowReplayer) {
		r.RegisterWorkflowWithOptions(lease.Workflow(ea.EVMReadNonces), workflow.RegisterOptions{Name: lease.WorkflowType})
	}, lease.WorkflowType)
}
