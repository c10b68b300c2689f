//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
)

// Each pod's validators hold 32 ETH; the sandbox's beacon state then pays each this reward
// (gwei) before the checkpoint, which must credit it exactly once.
const (
	eigenBalanceGwei = 32_000_000_000
	eigenRewardGwei  = 1_000_000
)

// TestEigenLayer runs checkpoints through the starter on the real chain, at once: their waits for
// finality overlap, with the service's endpoint 4 dropping every transaction. The restart scenario stops and starts the stack's worker while the others run
// (top-level tests run one at a time, so no other test's operations see it): they ride it out.
func TestEigenLayer(t *testing.T) {
	// Checkpoint transactions go through the worker's own RPC, never through the service's
	// endpoint 4 (Polygon's): while these run, endpoint 4 answers every transaction without
	// forwarding it, which no checkpoint would survive.
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{PolygonSendDropped: sandbox.LostResponse{Next: 1_000_000}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	for name, run := range map[string]func(*testing.T){
		"CheckpointResumesAfterWorkerRestart": testEigenCheckpointResumesAfterWorkerRestart,
		"AnotherPartyProvesFirst":             testEigenAnotherPartyProvesFirst,
		"HostileRefusedThenResumed":           testEigenHostileRefusedThenResumed,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run(t)
		})
	}
}

// eigenPod creates owner's pod of n validators and pays them the reward in the beacon state; it
// returns the pod and its shares before the checkpoint.
func eigenPod(t *testing.T, owner common.Address, n int) (common.Address, *big.Int) {
	t.Helper()
	ctx := context.Background()
	el := st.EVM.EigenLayer
	pod, err := el.CreatePod(ctx, owner, n, eigenBalanceGwei)
	require.NoError(t, err)
	require.NoError(t, el.Reward(ctx, pod, eigenRewardGwei))
	ps, err := el.ReadPod(ctx, pod)
	require.NoError(t, err)
	return pod, ps.Shares
}

// creditedOnce requires the pod's checkpoint to have completed and its shares to have grown by
// exactly one reward per validator.
func creditedOnce(t *testing.T, pod common.Address, before *big.Int, validators int64, ts uint64) {
	t.Helper()
	ps, err := st.EVM.EigenLayer.ReadPod(context.Background(), pod)
	require.NoError(t, err)
	assert.Zero(t, ps.CurrentTimestamp, "no checkpoint active")
	assert.Equal(t, ts, ps.LastTimestamp, "the operation's checkpoint completed")
	want := new(big.Int).Mul(big.NewInt(validators*eigenRewardGwei), big.NewInt(1_000_000_000))
	assert.Equal(t, new(big.Int).Add(before, want).String(), ps.Shares.String(), "the rewards are credited once")
}

// checkpointsStarted counts the CheckpointCreated logs of pod: each startCheckpoint that landed.
func checkpointsStarted(t *testing.T, pod common.Address) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logs, err := st.EVM.Node.Logs(ctx, ethereum.FilterQuery{
		FromBlock: big.NewInt(0), Addresses: []common.Address{pod},
		Topics: [][]common.Hash{{crypto.Keccak256Hash([]byte("CheckpointCreated(uint64,bytes32,uint256)"))}},
	})
	require.NoError(t, err)
	return len(logs)
}

func nonceOf(t *testing.T, a common.Address) uint64 {
	t.Helper()
	n, err := st.EVM.Node.Client().NonceAt(context.Background(), a, nil)
	require.NoError(t, err)
	return n
}

func checkpointWait(t *testing.T, owner common.Address) (wfeigenlayer.Result, error) {
	t.Helper()
	out, err := starterRun(t, "eigenlayer", "checkpoint", "--network", stack.EVMNetwork, "--owner", owner.Hex(), "--wait", "--json")
	if err != nil {
		return wfeigenlayer.Result{}, err
	}
	var res wfeigenlayer.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res), "starter output: %s", out)
	return res, nil
}

// testEigenCheckpointResumesAfterWorkerRestart: a pod of 200 validators checkpoints through the
// starter in 1 + 3 transactions; the worker is stopped once the first batch landed and started
// again: the operation goes on from the chain's state, with no second startCheckpoint, and the
// balance is credited once. A second start while it runs is refused.
func testEigenCheckpointResumesAfterWorkerRestart(t *testing.T) {
	ctx := context.Background()
	owner := st.EVM.Stakers[6]
	pod, before := eigenPod(t, owner, 200)
	nonce := nonceOf(t, owner)

	out, err := starterRun(t, "eigenlayer", "checkpoint", "--network", stack.EVMNetwork, "--owner", owner.Hex(), "--json")
	require.NoError(t, err, out)
	id := checkpointID(owner.Hex())
	recordAs(id, wfeigenlayer.CheckpointWorkflowType)
	out, err = starterRun(t, "eigenlayer", "checkpoint", "--network", stack.EVMNetwork, "--owner", owner.Hex())
	require.ErrorIs(t, err, workflows.ErrAlreadyStarted, out)

	var st1 workflows.Status
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st1 = queryStatus(t, id)
		require.NotEqual(c, workflows.StepFailed, st1.Step, "%s", st1.Reason)
		require.NotNil(c, st1.Checkpoint)
		require.GreaterOrEqual(c, st1.Checkpoint.BatchesSent, 1)
	}, 3*time.Minute, 200*time.Millisecond)
	require.NoError(t, st.StopWorker())
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = st.StartWorker(context.Background())
		}
	})
	ps, err := st.EVM.EigenLayer.ReadPod(ctx, pod)
	require.NoError(t, err)
	require.NotZero(t, ps.CurrentTimestamp, "stopped between batches")
	require.Less(t, ps.ProofsRemaining, uint64(200))
	require.NoError(t, st.StartWorker(ctx))
	restarted = true

	wctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	var res wfeigenlayer.Result
	require.NoError(t, st.Client.GetWorkflow(wctx, id, "").Get(wctx, &res))
	require.Len(t, res.Transactions, 4, "1 start + 3 batches")
	assert.Equal(t, wfeigenlayer.KindStart, res.Transactions[0].Kind)
	assert.Equal(t, 3, res.BatchesSent)
	assert.False(t, res.Resumed)
	assert.Equal(t, 1, checkpointsStarted(t, pod), "one startCheckpoint")
	assert.Equal(t, nonce+4, nonceOf(t, owner), "four transactions from the owner, no more")
	creditedOnce(t, pod, before, 200, res.CheckpointTimestamp)
	runsUnder(t, id, maxRunHistoryBytes)
}

// maxRunHistoryBytes bounds the history of every run of a checkpoint, whatever the pod's size.
const maxRunHistoryBytes = 2_000_000

// runsUnder requires every run of operation id to have a history under limit bytes, and returns
// the sizes.
func runsUnder(t *testing.T, id string, limit int64) []int64 {
	t.Helper()
	sizes, err := st.RunHistorySizes(context.Background(), id)
	require.NoError(t, err)
	require.NotEmpty(t, sizes)
	for i, n := range sizes {
		assert.Less(t, n, limit, "run %d of %d of %s: %d bytes of history", i+1, len(sizes), id, n)
	}
	t.Logf("%s: %d runs, history bytes %v", id, len(sizes), sizes)
	return sizes
}

// testEigenAnotherPartyProvesFirst: another party proves the batch the service answers before the
// worker can send it: the operation reads past it and proves the rest.
func testEigenAnotherPartyProvesFirst(t *testing.T) {
	owner := st.EVM.Stakers[7]
	pod, before := eigenPod(t, owner, 90)
	st.EVM.EigenLayer.FrontRun(pod, 1)
	recordAs(checkpointID(owner.Hex()), wfeigenlayer.CheckpointWorkflowType+"-another-party")
	res, err := checkpointWait(t, owner)
	require.NoError(t, err)
	assert.Equal(t, 1, res.BatchesSent, "the other party proved 80, the operation the last 10")
	require.Len(t, res.Transactions, 2)
	creditedOnce(t, pod, before, 90, res.CheckpointTimestamp)
}

// testEigenHostileRefusedThenResumed: every hostile proofs transaction is refused with nothing
// sent (only the first run's startCheckpoint landed); an honest run then finds the active
// checkpoint and proves it, never starting another.
func testEigenHostileRefusedThenResumed(t *testing.T) {
	owner := st.EVM.Stakers[8]
	el := st.EVM.EigenLayer
	// Another pod for the other-pod mode to send the proofs to.
	_, err := el.CreatePod(context.Background(), crypto.CreateAddress(owner, 1<<20), 1, eigenBalanceGwei)
	require.NoError(t, err)
	pod, before := eigenPod(t, owner, 5)
	id := checkpointID(owner.Hex())
	nonce := nonceOf(t, owner)
	want := map[evmchain.EigenHostile]string{
		evmchain.EigenOtherPod: "to:", evmchain.EigenOtherContract: "to:", evmchain.EigenWithValue: "value:",
		evmchain.EigenStaleRoot: "checkpoint root:", evmchain.EigenWouldRevert: "invalid balance proof", evmchain.EigenTooMany: "proofs:",
	}
	for _, mode := range evmchain.EigenHostileModes {
		el.SetHostile(pod, mode)
		_, err := checkpointWait(t, owner)
		require.Error(t, err, mode)
		s := queryStatus(t, id)
		assert.Equal(t, workflows.StepFailed, s.Step, mode)
		assert.Contains(t, s.Reason, want[mode], mode)
		assert.Equal(t, nonce+1, nonceOf(t, owner), "%s: only the first run's startCheckpoint was sent", mode)
	}
	el.SetHostile(pod, evmchain.EigenHonest)
	recordAs(id, wfeigenlayer.CheckpointWorkflowType+"-resumed")
	res, err := checkpointWait(t, owner)
	require.NoError(t, err)
	assert.True(t, res.Resumed)
	assert.NotEmpty(t, res.StartTx, "the start found in the pod's logs")
	assert.Equal(t, 1, res.BatchesSent)
	assert.Equal(t, 1, checkpointsStarted(t, pod))
	assert.Equal(t, nonce+2, nonceOf(t, owner))
	creditedOnce(t, pod, before, 5, res.CheckpointTimestamp)
}

// checkpointID is the ID the admin tool gives the checkpoint of owner's pod: under the suite's
// payload keyset the ID names the owner's search tag, never the address.
func checkpointID(owner string) string {
	return wfeigenlayer.CheckpointWorkflowIDOf(stack.EVMNetwork, searchTag(common.HexToAddress(owner).Hex()))
}

// leaseID is the ID of the nonce lease of address on chain's network as the suite's operations name
// it: under its payload keyset, by the address's search tag (workflows.NameInID).
func leaseID(chain lease.Chain, network, address string) string {
	return lease.IDOf(chain, network, searchTag(address))
}

// searchTag is the tag of address (in lower case) under the suite's search key.
func searchTag(address string) string {
	tag, ok := keyset.Tagger().Tag(strings.ToLower(address))
	if !ok {
		panic("the suite's payload keyset has no search key")
	}
	return tag
}
