package starter

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/internal/cli"
)

// startRecorder is a Temporal client that records the operations started through it; pollers is
// what DescribeTaskQueue reports.
type startRecorder struct {
	client.Client
	started []client.StartWorkflowOptions
	pollers int
}

func (s *startRecorder) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	s.started = append(s.started, o)
	return fakeRun{id: o.ID}, nil
}

func (s *startRecorder) DescribeTaskQueue(context.Context, string, enums.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	resp := &workflowservice.DescribeTaskQueueResponse{}
	for range s.pollers {
		resp.Pollers = append(resp.Pollers, &taskqueuepb.PollerInfo{Identity: "worker"})
	}
	return resp, nil
}

func (s *startRecorder) Close() {}

type fakeRun struct {
	client.WorkflowRun
	id string
}

func (r fakeRun) GetID() string    { return r.id }
func (r fakeRun) GetRunID() string { return "run-1" }

// TestEachOperationStartsOnItsChainsQueue: the admin tool starts each chain's operation on that
// chain's module's task queue (the queues named here, as the worker's modules poll them), under
// the prefix given; and says so when no worker polled that queue lately.
func TestEachOperationStartsOnItsChainsQueue(t *testing.T) {
	const evm = "0x00000000219ab540356cbb839cbe05303d7705fa"
	for _, tt := range []struct {
		args  []string
		queue string
	}{
		{[]string{"stake", "--network", "testnet", "--staker", "Stake11111111111111111111111111111111111111", "--lamports", "1000000000"}, "stakeflow-solana"},
		{[]string{"polygon", "delegate", "--network", "dev", "--staker", evm, "--validator-share", "0x00000000000000000000000000000000000000c3", "--pol", "1"}, "stakeflow-evm"},
		{[]string{"eigenlayer", "checkpoint", "--network", "dev", "--owner", evm}, "stakeflow-evm"},
		{[]string{"celestia", "delegate", "--network", "celestia-mocha-testnet", "--delegator", "celestia1pkptre7fdkl6gfrzlesjjvhxhlc3r4gm2ukn2h",
			"--validator", "celestiavaloper1u3drplq4vr90nnwz0tvnrhetc82heq8halazeh", "--utia", "100"}, "stakeflow-celestia"},
		{[]string{"hyperliquid", "withdraw", "--network", "testnet", "--delegator", evm, "--amount", "1"}, "stakeflow-hyperliquid"},
		{[]string{"ton", "watch", "--network", "mainnet", "--hash", strings.Repeat("ab", 32)}, "stakeflow-ton"},
	} {
		t.Run(tt.queue+" "+tt.args[0], func(t *testing.T) {
			rec := &startRecorder{pollers: 1}
			dial := func(cli.Temporal) (client.Client, error) { return rec, nil }
			var out bytes.Buffer
			require.NoError(t, Run(context.Background(), tt.args, &out, dial), out.String())
			require.Len(t, rec.started, 1)
			assert.Equal(t, tt.queue, rec.started[0].TaskQueue)
			assert.NotContains(t, out.String(), "warning", "a worker polls the queue")

			rec = &startRecorder{}
			out.Reset()
			args := append(append([]string{}, tt.args...), "--task-queue-prefix", "desk-a", "--json")
			require.NoError(t, Run(context.Background(), args, &out, func(cli.Temporal) (client.Client, error) { return rec, nil }), out.String())
			want := strings.Replace(tt.queue, "stakeflow", "desk-a", 1)
			require.Len(t, rec.started, 1)
			assert.Equal(t, want, rec.started[0].TaskQueue, "the prefix given")
			var s started
			require.NoError(t, json.Unmarshal(out.Bytes(), &s), out.String())
			assert.Equal(t, want, s.TaskQueue)
			assert.Contains(t, s.Warning, "no worker has polled task queue "+want)
			assert.Contains(t, s.Warning, "a worker serving "+strings.TrimPrefix(want, "desk-a-"))
		})
	}
}
