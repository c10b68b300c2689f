//go:build integration

package largepod

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

const (
	validators = 10_000
	// balanceGwei is each validator's balance; rewardGwei what each earns before the checkpoint.
	balanceGwei = 32_000_000_000
	rewardGwei  = 1_000_000
	// maxRunHistoryBytes is the bound on each run's history (the server's HistorySizeBytes).
	maxRunHistoryBytes = 2_000_000
	// confirmPoll keeps the 126 transactions' waits for finality short: each confirm looks every
	// 200 ms instead of every second. (A shorter block period than the stack's 100 ms would
	// shorten them more, but a node sealing every 20 ms takes most of a core, which the suites
	// running beside this one need.)
	confirmPoll = 200 * time.Millisecond
)

var (
	st     *stack.Stack
	keyset *codec.Keyset
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	cliPath := os.Getenv("TEMPORAL_CLI")
	if cliPath == "" {
		fmt.Fprintln(os.Stderr, "TEMPORAL_CLI is not set: run through `make test-integration` (scripts/tools.sh temporal installs it)")
		return 1
	}
	dir, err := os.MkdirTemp("", "stakeflow-largepod-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ks := dir + "/payload-keyset.json"
	if _, err = stack.NewKeysetFile(ks, "largepod"); err != nil {
		fmt.Fprintln(os.Stderr, "writing the payload keyset:", err)
		return 1
	}
	if keyset, err = codec.LoadKeyset(ks); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The stack's and the worker's warnings and errors go to the test's output.
	logger := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.Lock(os.Stderr), zapcore.WarnLevel))
	st, err = stack.Start(ctx, stack.Options{TemporalCLI: cliPath, Dir: dir, PayloadKeyset: ks, EVM: &stack.EVMOptions{Stakers: 1},
		Runtime: solanart.Options{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 100_000},
		// The worker serves every chain the stack has: Solana needs a key of its own.
		Stakers: 1, StakerLamports: 1_000_000_000,
		Logger: logger, WorkerLogger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the local stack:", err)
		return 1
	}
	defer st.Close()
	rctx, rcancel := context.WithTimeout(ctx, time.Minute)
	defer rcancel()
	if err := workerReady(rctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// workerReady waits until the stack's worker answers /readyz with 200, or stops.
func workerReady(ctx context.Context) error {
	var last string
	// The health socket accepts before the worker serves it: each request has a deadline.
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		if err := st.WorkerErr(); err != nil {
			return fmt.Errorf("the worker stopped: %w", err)
		}
		resp, err := hc.Get(st.HealthURL() + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, body)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the worker is not ready (last /readyz: %s): %w", last, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestEigenLayerLargePodHistoryBounded: a checkpoint of a 10,000-validator pod (125 batches of
// 80 proofs) started as the admin tool starts it completes, continuing as new on its budget,
// every run's history under 2 MB (the server's count), each validator's reward credited once.
func TestEigenLayerLargePodHistoryBounded(t *testing.T) {
	ctx := context.Background()
	owner := st.EVM.Stakers[0]
	el := st.EVM.EigenLayer
	pod, err := el.CreatePod(ctx, owner, validators, balanceGwei)
	require.NoError(t, err)
	require.NoError(t, el.Reward(ctx, pod, rewardGwei))
	before, err := el.ReadPod(ctx, pod)
	require.NoError(t, err)

	// The operation ID and search attributes name the owner's search tag, as under the admin
	// tool with this keyset.
	tag, ok := keyset.Tagger().Tag(strings.ToLower(owner.Hex()))
	require.True(t, ok, "the keyset has a search key")
	id := wfeigenlayer.CheckpointWorkflowIDOf(stack.EVMNetwork, tag)
	queue := workflows.TaskQueueOf(workflows.DefaultTaskQueuePrefix, wfevm.Module)
	attrs := workflows.Conceal(keyset.Tagger(), wfeigenlayer.Attributes(stack.EVMNetwork, owner.Hex())...)
	began := time.Now()
	run, err := st.Client.ExecuteWorkflow(ctx, starter.StartOptions(id, "checkpoint of "+owner.Hex()+"'s pod", queue, attrs...),
		wfeigenlayer.CheckpointWorkflowType, wfeigenlayer.CheckpointInput{Network: stack.EVMNetwork, Owner: owner.Hex(), Options: workflows.Options{ConfirmPollInterval: confirmPoll}})
	require.NoError(t, err)

	wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	var res wfeigenlayer.Result
	require.NoError(t, st.Client.GetWorkflow(wctx, id, "").Get(wctx, &res))
	t.Logf("checkpoint of %d validators completed in %s", validators, time.Since(began).Round(time.Second))
	assert.Equal(t, (validators+79)/80, res.BatchesSent)
	require.Len(t, res.Transactions, 1+res.BatchesSent, "one startCheckpoint and one transaction a batch")
	assert.Equal(t, wfeigenlayer.KindStart, res.Transactions[0].Kind)

	after, err := el.ReadPod(ctx, pod)
	require.NoError(t, err)
	assert.Zero(t, after.CurrentTimestamp, "no checkpoint active")
	assert.Equal(t, res.CheckpointTimestamp, after.LastTimestamp, "the operation's checkpoint completed")
	want := new(big.Int).Mul(big.NewInt(validators*rewardGwei), big.NewInt(1_000_000_000))
	assert.Equal(t, new(big.Int).Add(before.Shares, want).String(), after.Shares.String(), "every validator's reward credited once")

	sizes, err := st.RunHistorySizes(ctx, run.GetID())
	require.NoError(t, err)
	t.Logf("%s: %d runs, history bytes %v", id, len(sizes), sizes)
	assert.Greater(t, len(sizes), 1, "continued as new on its budget")
	for i, n := range sizes {
		assert.Less(t, n, int64(maxRunHistoryBytes), "run %d of %d: %d bytes of history", i+1, len(sizes), n)
	}
}
