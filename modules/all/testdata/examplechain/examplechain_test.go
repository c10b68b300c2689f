package examplechain_test

import (
	"context"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/internal/module"
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
}
