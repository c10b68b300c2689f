//go:build integration

package integration

import (
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/modules/all"
	celestiamod "github.com/stakeflow/stakeflow/modules/celestia"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
)

// splitWorker runs cmd/worker's configuration parsed from args (plus the connection, the service
// and its own data directory) in this process under identity, until the test ends, and returns the
// base URL of its /readyz.
func splitWorker(t *testing.T, identity string, args ...string) string {
	t.Helper()
	base := st.WorkerConfig()
	cfg := worker.Config{Modules: all.Modules()}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	cfg.Register(fs)
	require.NoError(t, cli.Parse(fs, append([]string{
		"--temporal-address", st.TemporalAddress(), "--namespace", "default", "--identity", identity,
		"--service-url", base.ServiceURL, "--service-token-file", base.ServiceTokenFile,
		"--data-dir", t.TempDir(), "--log-level", "error", "--stop-timeout", "5s",
	}, args...), "config"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg.HealthListener = ln
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, cfg, zap.NewNop()) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return "http://" + ln.Addr().String()
}

// readyBody waits until the worker at url answers /readyz with 200 and returns the body.
func readyBody(t *testing.T, url string) string {
	t.Helper()
	var body string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(url + "/readyz")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		assert.Equal(c, http.StatusOK, resp.StatusCode, body)
	}, time.Minute, 50*time.Millisecond)
	return body
}

// TestAChainsWorkerServesOnlyItsOwnQueue: a worker started with Celestia's settings alone (no
// Solana flag, no Solana key) becomes ready and runs a Celestia delegate end to end on the Celestia
// queue, while a worker holding only Solana's keys polls the Solana queue and takes none of the
// delegate's tasks: every task of the operation's history was taken by the Celestia worker, and
// each queue's pollers are its own module's worker alone.
func TestAChainsWorkerServesOnlyItsOwnQueue(t *testing.T) {
	const prefix = "stakeflow-split"
	base := st.WorkerConfig()
	cel, ok := module.Find[*celestiamod.Module](base.Modules)
	require.True(t, ok)
	sol, ok := module.Find[*solanamod.Module](base.Modules)
	require.True(t, ok)
	only := []string{"--task-queue-prefix", prefix, "--ton=false", "--jobs=false"}
	celestiaOnly := splitWorker(t, "celestia-only", append(only,
		"--celestia-rest", cel.REST.String(), "--celestia-keys", cel.Keys, "--celestia-passphrase-file", cel.PassphraseFile,
		"--celestia-validators", cel.Validators.String(), "--celestia-replace-after", "2s")...)
	solanaOnly := splitWorker(t, "solana-only", append(only,
		"--solana-keys", sol.Keys.String(), "--solana-rpc", sol.RPC.String(), "--solana-genesis", sol.Genesis.String(),
		"--allowed-vote-accounts", sol.AllowedVoteAccounts.String())...)

	body := readyBody(t, celestiaOnly)
	assert.Contains(t, body, "module celestia (task queue stakeflow-split-celestia): ready")
	assert.NotContains(t, body, "solana", "a Celestia worker runs no Solana module")
	body = readyBody(t, solanaOnly)
	assert.Contains(t, body, "module solana (task queue stakeflow-split-solana): ready")
	assert.NotContains(t, body, "celestia")

	// A delegator no other test uses: its sequence lease is this worker's alone.
	delegator := st.Celestia.Delegators[10]
	validator := sandbox.CelestiaValidators[0]
	id := operationID(t, "celestia-split")
	out, err := starterRun(t, "celestia", "delegate", "--network", stack.CelestiaNetwork, "--delegator", delegator,
		"--validator", validator, "--utia", "1500", "--id", id, "--wait", "--json", "--task-queue-prefix", prefix)
	require.NoError(t, err, out)
	res := decodeCelestia(t, out)
	require.Len(t, res.Transactions, 1, out)
	assert.Equal(t, "1500", celestiaOf(t, delegator).delegations[validator], "the ledger holds the delegation")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := st.Client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	activitiesTaken := 0
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			assert.Equal(t, prefix+"-celestia", a.GetTaskQueue().GetName(), "the starter routes the delegate to Celestia's queue")
		}
		if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
			assert.Equal(t, "celestia-only", a.GetIdentity(), "workflow task %d", ev.GetEventId())
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			activitiesTaken++
			assert.Equal(t, "celestia-only", a.GetIdentity(), "activity task %d", ev.GetEventId())
		}
		assert.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, ev.GetEventType(), "no worker refused a task it cannot run")
	}
	require.Positive(t, activitiesTaken)

	for queue, identity := range map[string]string{prefix + "-celestia": "celestia-only", prefix + "-solana": "solana-only"} {
		for _, kind := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
			resp, err := st.Client.DescribeTaskQueue(ctx, queue, kind)
			require.NoError(t, err)
			require.NotEmpty(t, resp.GetPollers(), queue)
			for _, p := range resp.GetPollers() {
				assert.Equal(t, identity, p.GetIdentity(), "%s (%s) is polled by its module's worker alone", queue, kind)
			}
		}
	}
}
