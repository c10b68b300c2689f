package lease

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// otherChainReads stands for a second chain's reader: Register must make the lease read through
// the reader it is given, not any other.
func otherChainReads(context.Context, ReadInput) (Nonces, error) { return Nonces{}, nil }

// TestRegisterReadsThroughTheChainsReader: the lease registered with a chain's reader runs under
// NonceLeaseWorkflow and reads the address's nonces through that reader alone, with the network
// and address of its state.
func TestRegisterReadsThroughTheChainsReader(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env, otherChainReads)
	env.RegisterActivity(readNonces)
	var reads []ReadInput
	env.OnActivity(otherChainReads, mock.Anything, mock.Anything).Return(func(_ context.Context, in ReadInput) (Nonces, error) {
		reads = append(reads, in)
		return settled(12), nil
	})
	env.OnActivity(readNonces, mock.Anything, mock.Anything).Return(Nonces{}, nil).Times(0)
	var grants []Grant
	env.OnSignalExternalWorkflow(mock.Anything, "op-a", "run-a", "nonce-grant", mock.Anything).Return(func(_, _, _, _ string, arg any) error {
		grants = append(grants, arg.(Grant))
		return nil
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow("acquire", Request{Chain: Celestia, Network: "mocha", Address: "celestia1abc", WorkflowID: "op-a", RunID: "run-a"})
	}, time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow("NonceLeaseWorkflow", State{Chain: Celestia, Network: "mocha", Address: "celestia1abc"})
	assert.Equal(t, []Grant{{Nonce: 12}}, grants)
	require.NotEmpty(t, reads)
	assert.Equal(t, ReadInput{Network: "mocha", Address: "celestia1abc"}, reads[0])
}

// recorder records what is registered on it.
type recorder struct {
	workflows  []string
	activities []any
}

func (r *recorder) RegisterWorkflow(any) {}
func (r *recorder) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.workflows = append(r.workflows, o.Name)
}
func (r *recorder) RegisterDynamicWorkflow(any, workflow.DynamicRegisterOptions) {}
func (r *recorder) RegisterActivity(a any)                                       { r.activities = append(r.activities, a) }
func (r *recorder) RegisterActivityWithOptions(a any, _ activity.RegisterOptions) {
	r.activities = append(r.activities, a)
}
func (r *recorder) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {}

// workflowsOnly is a registry of workflows alone, as a replayer is.
type workflowsOnly struct{ names []string }

func (r *workflowsOnly) RegisterWorkflow(any) {}
func (r *workflowsOnly) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.names = append(r.names, o.Name)
}
func (r *workflowsOnly) RegisterDynamicWorkflow(any, workflow.DynamicRegisterOptions) {}

// TestRegisterAddsTheHolderCheckOnAWorker: a worker gets the workflow and the LeaseHolder activity
// (described through the worker's own client); a replayer, which registers no activity, the
// workflow alone.
func TestRegisterAddsTheHolderCheckOnAWorker(t *testing.T) {
	w := &recorder{}
	Register(w, otherChainReads)
	assert.Equal(t, []string{"NonceLeaseWorkflow"}, w.workflows)
	assert.Equal(t, []any{&Activities{}}, w.activities)

	var _ worker.WorkflowRegistry = (*workflowsOnly)(nil)
	r := &workflowsOnly{}
	Register(r, otherChainReads)
	assert.Equal(t, []string{"NonceLeaseWorkflow"}, r.names)
}
