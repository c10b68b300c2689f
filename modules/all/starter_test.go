package all_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/modules/all"
)

// run runs the admin tool with every module's command group, as cmd/starter does.
func run(args []string, out *bytes.Buffer, dial func(cli.Temporal) (client.Client, error)) error {
	return starter.Run(context.Background(), args, out, dial, all.StarterGroups()...)
}

func noDial(t *testing.T) func(cli.Temporal) (client.Client, error) {
	return func(cli.Temporal) (client.Client, error) {
		t.Fatalf("Temporal was dialled for input that should have been refused")
		return nil, errors.New("unreachable")
	}
}

const (
	evmStaker    = "0x1111111111111111111111111111111111111111"
	evmShare     = "0x2222222222222222222222222222222222222222"
	celDelegator = "celestia1pkptre7fdkl6gfrzlesjjvhxhlc3r4gm2ukn2h"
	celValidator = "celestiavaloper1u3drplq4vr90nnwz0tvnrhetc82heq8halazeh"
)

// TestChainCommandsRefuseBadInputBeforeAnyStart: each chain's command group, as its module
// contributes it, refuses bad input with a usage error naming what is wrong, before Temporal is
// dialled.
func TestChainCommandsRefuseBadInputBeforeAnyStart(t *testing.T) {
	base := func(extra ...string) []string {
		return append([]string{"celestia", "delegate", "--network", "celestia-mocha-testnet", "--delegator", celDelegator, "--validator", celValidator}, extra...)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"polygon without verb", []string{"polygon"}, "polygon: give a command"},
		{"eigenlayer without verb", []string{"eigenlayer"}, "eigenlayer: give a command: checkpoint"},
		{"eigenlayer unknown verb", []string{"eigenlayer", "restake"}, `unknown command "restake"`},
		{"eigenlayer checkpoint bad owner", []string{"eigenlayer", "checkpoint", "--network", "dev", "--owner", "0x12"}, "invalid owner"},
		{"eigenlayer checkpoint bad submitter", []string{"eigenlayer", "checkpoint", "--network", "dev", "--owner", evmStaker, "--submitter", "me"}, "invalid submitter"},
		{"eigenlayer checkpoint unknown network", []string{"eigenlayer", "checkpoint", "--network", "holesky", "--owner", evmStaker}, "invalid network"},
		{"eigenlayer checkpoint signed start", []string{"eigenlayer", "checkpoint", "--network", "dev", "--owner", evmStaker, "--ssh-agent"}, "--sign-key and --ssh-agent do not apply"},
		{"polygon unknown verb", []string{"polygon", "bond"}, `unknown command "bond"`},
		{"polygon delegate without amount", []string{"polygon", "delegate", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare}, "--pol or --wei"},
		{"polygon delegate both amounts", []string{"polygon", "delegate", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare, "--pol", "1", "--wei", "1"}, "not both"},
		{"polygon delegate 19 decimals", []string{"polygon", "delegate", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare, "--pol", "0.0000000000000000001"}, "more than 18 decimals"},
		{"polygon delegate zero", []string{"polygon", "delegate", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare, "--pol", "0"}, "more than zero"},
		{"polygon delegate wei with point", []string{"polygon", "delegate", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare, "--wei", "1.5"}, `--wei "1.5": want a whole number of the base unit, without a decimal point`},
		{"polygon unknown network", []string{"polygon", "delegate", "--network", "polygon", "--staker", evmStaker, "--validator-share", evmShare, "--pol", "1"}, "invalid network"},
		{"polygon short staker", []string{"polygon", "unstake", "--network", "dev", "--staker", "0x1234", "--validator-share", evmShare, "--pol", "1"}, "invalid staker"},
		{"polygon share is staker", []string{"polygon", "restake", "--network", "dev", "--staker", evmStaker, "--validator-share", evmStaker}, "not a validator share"},
		{"polygon rewards take no amount", []string{"polygon", "withdraw-rewards", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare, "--pol", "1"}, "flag provided but not defined"},
		{"no verb", []string{"celestia"}, "give a command"},
		{"unknown verb", []string{"celestia", "stake"}, "unknown command"},
		{"zero amount", base("--utia", "0"), "--utia: must be more than zero"},
		{"zero tia", base("--tia", "0.0"), "--tia: must be more than zero"},
		{"utia not a number", base("--utia", "1.5"), `--utia "1.5": want a whole number`},
		{"utia leading zero", base("--utia", "01"), `--utia "01": write it without leading zeros`},
		{"both amounts", base("--utia", "1", "--tia", "1"), "not both"},
		{"no amount", base(), "--utia or --tia"},
		{"too many decimals", base("--tia", "1.0000001"), `--tia "1.0000001": more than 6 decimals: the smallest unit is 0.000001`},
		{"bad bech32", []string{"celestia", "delegate", "--network", "celestia-mocha-testnet", "--delegator", celDelegator[:len(celDelegator)-1] + "q", "--validator", celValidator, "--tia", "1"}, "not valid bech32"},
		{"wrong prefix", []string{"celestia", "delegate", "--network", "celestia-mocha-testnet", "--delegator", "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6", "--validator", celValidator, "--tia", "1"}, "prefix"},
		{"unknown network", []string{"celestia", "delegate", "--network", "celestia", "--delegator", celDelegator, "--validator", celValidator, "--tia", "1"}, "unknown Celestia network"},
		{"redelegate to itself", []string{"celestia", "redelegate", "--network", "celestia-mocha-testnet", "--delegator", celDelegator, "--validator", celValidator, "--to-validator", celValidator, "--tia", "1"}, "redelegation to the validator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(tt.args, &out, noDial(t))
			require.ErrorContains(t, err, tt.want)
			var usage *starter.UsageError
			require.ErrorAs(t, err, &usage)
		})
	}
}

// TestHelpListsEveryChainsCommands: `starter --help` holds each module's group.
func TestHelpListsEveryChainsCommands(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"--help"}, &out, noDial(t)))
	for _, want := range []string{"polygon delegate", "eigenlayer checkpoint", "celestia redelegate", "hyperliquid withdraw", "ton watch", "stake ", "schedule create"} {
		assert.Contains(t, out.String(), want)
	}
}

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
			require.NoError(t, run(tt.args, &out, dial), out.String())
			require.Len(t, rec.started, 1)
			assert.Equal(t, tt.queue, rec.started[0].TaskQueue)
			assert.NotContains(t, out.String(), "warning", "a worker polls the queue")

			rec = &startRecorder{}
			out.Reset()
			args := append(append([]string{}, tt.args...), "--task-queue-prefix", "desk-a", "--json")
			require.NoError(t, run(args, &out, func(cli.Temporal) (client.Client, error) { return rec, nil }), out.String())
			want := strings.Replace(tt.queue, "stakeflow", "desk-a", 1)
			require.Len(t, rec.started, 1)
			assert.Equal(t, want, rec.started[0].TaskQueue, "the prefix given")
			var s struct{ TaskQueue, Warning string }
			require.NoError(t, json.Unmarshal(out.Bytes(), &s), out.String())
			assert.Equal(t, want, s.TaskQueue)
			assert.Contains(t, s.Warning, "no worker has polled task queue "+want)
			assert.Contains(t, s.Warning, "a worker serving "+strings.TrimPrefix(want, "desk-a-"))
		})
	}
}
