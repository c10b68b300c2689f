//go:build integration

package evm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

// stubLease stands in for the address's sequencer: it holds the lease's ID until the operation
// gives the lease back.
func stubLease(ctx workflow.Context) error {
	workflow.GetSignalChannel(ctx, lease.SignalRelease).Receive(ctx, nil)
	return nil
}

// An operation started on a worker without a keyset (clear), then replayed by a worker that has
// since been given one (a tagger): it replays unchanged, naming its nonce lease by the address as
// it did. The history is made here, by this code on a real Temporal dev server, so it is the
// current code's whatever changes; the recorded histories (make record-histories) are all made
// under the integration suite's keyset.
func TestOperationStartedClearReplaysUnderATagger(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI names the Temporal CLI (make test-integration sets it)")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var args []string
	for _, kv := range workflows.SearchAttributeTypes() {
		args = append(args, "--search-attribute", kv[0]+"="+kv[1])
	}
	dev, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{ExistingPath: cliPath, LogLevel: "error",
		DBFilename: filepath.Join(t.TempDir(), "temporal.db"), ExtraArgs: args})
	require.NoError(t, err)
	t.Cleanup(func() { dev.Client().Close(); _ = dev.Stop() })
	c := dev.Client()

	const queue = "lease-clear"
	chain := &evmChain{}
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(leaseWorkflow)
	w.RegisterWorkflow(stubLease)
	// The operation's activities under their names (ea's methods): the lease's request grants at
	// once, as an idle sequencer does.
	w.RegisterActivityWithOptions(func(ctx context.Context, r lease.Request) error {
		chain.mu.Lock()
		chain.requests = append(chain.requests, r)
		chain.mu.Unlock()
		return c.SignalWorkflow(ctx, r.WorkflowID, r.RunID, lease.SignalGrant, lease.Grant{Nonce: 7})
	}, activity.RegisterOptions{Name: "EVMRequestLease"})
	for name, fn := range map[string]any{"EVMBuild": chain.build, "EVMSign": chain.sign, "EVMCheckFresh": chain.checkFresh,
		"EVMBroadcast": chain.broadcast, "EVMConfirm": chain.confirm} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	w.RegisterActivityWithOptions(func(context.Context) (notify.Config, error) { return notify.Config{}, nil },
		activity.RegisterOptions{Name: "NotifyConfig"})
	require.NoError(t, w.Start())
	defer w.Stop()

	clearID := lease.ID(lease.EVM, "dev", addr)
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: clearID, TaskQueue: queue}, stubLease)
	require.NoError(t, err)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "lease-clear-op", TaskQueue: queue}, leaseWorkflow,
		leaseInput{Steps: []string{"approve"}, Options: workflows.Options{ConfirmPollInterval: 100 * time.Millisecond}})
	require.NoError(t, err)
	var res leaseResult
	require.NoError(t, run.Get(ctx, &res))
	require.Len(t, res.Records, 1)
	require.Len(t, chain.requests, 1)
	assert.Equal(t, clearID, chain.requests[0].Lease, "started clear: the lease is named by the address")
	require.NoError(t, c.GetWorkflow(ctx, clearID, "").Get(ctx, nil), "the lease was given back to the address's ID")

	h := &historypb.History{}
	events := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, 0)
	for events.HasNext() {
		ev, err := events.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	for name, opts := range map[string]worker.WorkflowReplayerOptions{
		"clear": {},
		"under a tagger": {Interceptors: []interceptor.WorkerInterceptor{
			workflows.TaggerInterceptor(hashTagger{}).(interceptor.WorkerInterceptor)}},
	} {
		r, err := worker.NewWorkflowReplayerWithOptions(opts)
		require.NoError(t, err)
		r.RegisterWorkflow(leaseWorkflow)
		assert.NoError(t, r.ReplayWorkflowHistory(nil, h), "replayed %s", name)
	}
}
