package examplechain_test

import (
	"bytes"
	"context"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/modules/all"
	"github.com/stakeflow/stakeflow/modules/examplechain"
)

// TestTheWorkerServesTheExampleChain: with the two lines in modules/all, the worker's flags hold
// the module's, a worker configured with it alone is valid, and its transfer runs through the
// core to the ledger.
func TestTheWorkerServesTheExampleChain(t *testing.T) {
	cfg := worker.Config{Modules: all.Modules()}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	cfg.Register(fs)
	require.NoError(t, fs.Parse([]string{"--service-url", "http://127.0.0.1:1", "--service-token-file", "token",
		"--example-network", "dev", "--ton=false", "--jobs=false"}))
	require.NoError(t, cfg.Validate(), "a worker of the example chain alone")

	c, ok := module.Find[*examplechain.Chain](cfg.Modules)
	require.True(t, ok, "modules/all lists the example chain")
	built, err := c.Build(context.Background(), module.Env{})
	require.NoError(t, err)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	worker.RegisterCommon(env, &notify.Notifier{})
	c.Workflows(env)
	for _, a := range built.Activities {
		env.RegisterActivity(a)
	}
	env.ExecuteWorkflow(examplechain.TransferWorkflowType, examplechain.TransferInput{Network: "dev", To: "bob", Amount: 7})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res examplechain.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Len(t, c.Ledger.Txs, 1, "one transfer on the ledger")
	require.Equal(t, "transfer 7 to bob on dev", string(c.Ledger.Txs[res.Transaction.TxID].Unsigned))

	// The admin tool takes its command group, and starts the transfer on the chain's own queue.
	rec := &starts{}
	var out bytes.Buffer
	require.NoError(t, starter.Run(context.Background(), []string{"example", "transfer", "--network", "dev", "--to", "bob", "--amount", "7",
		"--id", "t-1", "--task-queue-prefix", "desk"}, &out, func(cli.Temporal) (client.Client, error) { return rec, nil }, all.StarterGroups()...), out.String())
	require.Len(t, rec.opts, 1)
	require.Equal(t, "desk-example", rec.opts[0].TaskQueue)
	require.Equal(t, examplechain.TransferWorkflowType, rec.wf[0])
}

// starts is a Temporal client recording the workflows started through it.
type starts struct {
	client.Client
	opts []client.StartWorkflowOptions
	wf   []any
}

func (s *starts) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, wf any, _ ...any) (client.WorkflowRun, error) {
	s.opts, s.wf = append(s.opts, o), append(s.wf, wf)
	return run{id: o.ID}, nil
}

func (s *starts) DescribeTaskQueue(context.Context, string, enums.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	return &workflowservice.DescribeTaskQueueResponse{}, nil
}

func (s *starts) Close() {}

type run struct {
	client.WorkflowRun
	id string
}

func (r run) GetID() string    { return r.id }
func (r run) GetRunID() string { return "r" }
