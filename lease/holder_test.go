package lease

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
)

// fakeDescriber answers DescribeWorkflowExecution with status, or err.
type fakeDescriber struct {
	status  enums.WorkflowExecutionStatus
	err     error
	id, run string
}

func (f *fakeDescriber) DescribeWorkflowExecution(_ context.Context, id, run string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	f.id, f.run = id, run
	if f.err != nil {
		return nil, f.err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflow.WorkflowExecutionInfo{Status: f.status}}, nil
}

func leaseHolder(t *testing.T, a *Activities, in HolderInput) (HolderState, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.LeaseHolder, in)
	if err != nil {
		return HolderState{}, err
	}
	var hs HolderState
	require.NoError(t, v.Get(&hs))
	return hs, nil
}

// TestLeaseHolderTellsWhetherTheHolderRuns: the holder's own run is described; any status but
// running is closed; a holder Temporal no longer knows is closed too.
func TestLeaseHolderTellsWhetherTheHolderRuns(t *testing.T) {
	for _, c := range []struct {
		status  enums.WorkflowExecutionStatus
		running bool
		name    string
	}{
		{enums.WORKFLOW_EXECUTION_STATUS_RUNNING, true, "Running"},
		{enums.WORKFLOW_EXECUTION_STATUS_TERMINATED, false, "Terminated"},
		{enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, false, "TimedOut"},
		{enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, false, "ContinuedAsNew"},
		{enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, false, "Completed"},
		{enums.WORKFLOW_EXECUTION_STATUS_FAILED, false, "Failed"},
		{enums.WORKFLOW_EXECUTION_STATUS_CANCELED, false, "Canceled"},
	} {
		d := &fakeDescriber{status: c.status}
		hs, err := leaseHolder(t, &Activities{Temporal: d}, HolderInput{WorkflowID: "op-1", RunID: "run-1"})
		require.NoError(t, err)
		assert.Equal(t, HolderState{Running: c.running, Status: c.name}, hs)
		assert.Equal(t, "op-1", d.id)
		assert.Equal(t, "run-1", d.run)
	}
	hs, err := leaseHolder(t, &Activities{Temporal: &fakeDescriber{err: serviceerror.NewNotFound("workflow not found")}}, HolderInput{WorkflowID: "op-1"})
	require.NoError(t, err)
	assert.Equal(t, HolderState{Status: "NotFound"}, hs)
}

// TestLeaseHolderErrors: an unavailable Temporal retries; no holder is refused.
func TestLeaseHolderErrors(t *testing.T) {
	_, err := leaseHolder(t, &Activities{Temporal: &fakeDescriber{err: errors.New("connection refused")}}, HolderInput{WorkflowID: "op-1"})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr))
	assert.Equal(t, activities.ErrServiceUnavailable, appErr.Type())
	assert.Contains(t, appErr.Error(), "describing lease holder op-1")

	_, err = leaseHolder(t, &Activities{Temporal: &fakeDescriber{}}, HolderInput{})
	require.True(t, errors.As(err, &appErr))
	assert.Equal(t, activities.ErrInvalidInput, appErr.Type())
	assert.True(t, appErr.NonRetryable())
}
