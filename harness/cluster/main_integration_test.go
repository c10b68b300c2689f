//go:build integration

package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap/zaptest"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/harness/chaos"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// bins holds this build's worker and starter, built once for the package's tests.
var bins struct{ worker, starter string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stakeflow-cluster-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		out, err := exec.Command("go", "build", "-o", dir+"/", "../../cmd/worker", "../../cmd/starter").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building the worker and the starter: %v\n%s", err, out)
			return 1
		}
		bins.worker, bins.starter = filepath.Join(dir, "worker"), filepath.Join(dir, "starter")
		return m.Run()
	}()
	os.Exit(code)
}

// stakerSOL is what each staker is funded with.
const stakerLamports = 10_000_000_000

// startCluster starts a cluster with workers worker processes (this build's) and stakers funded
// stakers; it is closed when t ends. TEMPORAL_SERVER_DIR and TEMPORAL_CLI name the tools
// (scripts/tools.sh temporal-server, temporal).
func startCluster(t *testing.T, workers, stakers int) *Cluster {
	t.Helper()
	serverDir, cliPath := os.Getenv("TEMPORAL_SERVER_DIR"), os.Getenv("TEMPORAL_CLI")
	if serverDir == "" || cliPath == "" {
		t.Skip("TEMPORAL_SERVER_DIR and TEMPORAL_CLI are not set (scripts/tools.sh temporal-server temporal)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{
		Dir: t.TempDir(), ServerDir: serverDir, TemporalCLI: cliPath,
		WorkerBin: bins.worker, StarterBin: bins.starter, Workers: workers,
		// An epoch every 6.4 s: chains wait for activation and deactivation without warps.
		Runtime: solanart.Options{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 64},
		Stakers: stakers, StakerLamports: stakerLamports, EpochRecheck: time.Second,
		Logger: zaptest.NewLogger(t),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster logs kept in %s", c.LogPath(""))
			for _, name := range []string{"temporal.log", "worker-1.log", "worker-2.log", "worker-3.log"} {
				if raw, err := os.ReadFile(c.LogPath(name)); err == nil && len(raw) > 0 {
					if len(raw) > 3000 {
						raw = raw[len(raw)-3000:]
					}
					t.Logf("tail of %s:\n%s", name, raw)
				}
			}
		}
		c.Close()
	})
	return c
}

// plan is a mix of stakes alone and stake -> unstake -> withdraw chains, one staker each:
// every other operation is a chain.
func plan(c *Cluster, prefix string) []chaos.OpSpec {
	var ops []chaos.OpSpec
	for i, staker := range c.Stack.Stakers {
		op := chaos.OpSpec{
			Index: i, Kind: chaos.KindStake, Staker: staker,
			StakeID:  fmt.Sprintf("%s-%02d-stake", prefix, i),
			Lamports: uint64(2+i%4) * 1_000_000_000, Funding: stakerLamports,
		}
		if i%2 == 1 {
			op.Kind = chaos.KindChain
			op.UnstakeID = fmt.Sprintf("%s-%02d-unstake", prefix, i)
		}
		ops = append(ops, op)
	}
	return ops
}

// progress counts the run's operations as they go.
type progress struct {
	started, stakesDone, unstakesStarted, done atomic.Int32
}

// inFlight is how many operations have started and not finished.
func (p *progress) inFlight() int32 { return p.started.Load() - p.done.Load() }

// runOps runs the operations at once; each outcome is what happened by the time ctx ends.
func runOps(ctx context.Context, c *Cluster, ops []chaos.OpSpec, p *progress) []chaos.OpOutcome {
	chain := solchain.New(c.Stack.Sandbox.Runtime().URL())
	out := make([]chaos.OpOutcome, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Go(func() {
			out[i] = runOp(ctx, c.Stack.Client, chain, op, p)
			p.done.Add(1)
		})
	}
	wg.Wait()
	return out
}

func runOp(ctx context.Context, tc client.Client, chain *solchain.Client, op chaos.OpSpec, p *progress) chaos.OpOutcome {
	out := chaos.OpOutcome{Spec: op}
	in := wfsolana.StakeInput{Network: "testnet", Staker: op.Staker.String(), Lamports: op.Lamports}
	if !start(ctx, tc, op.StakeID, wfsolana.StakeSummary(in), wfsolana.StakeWorkflow, in) {
		out.State = chaos.StateNotStarted
		return out
	}
	p.started.Add(1)
	var res wfsolana.Result
	if !await(ctx, tc, op.StakeID, &res, &out) {
		return out
	}
	out.Stake = &res
	p.stakesDone.Add(1)
	if op.Kind != chaos.KindChain {
		out.State = chaos.StateCompleted
		return out
	}
	// Deactivating in the activation epoch would end the stake at once: wait for the next epoch.
	if !awaitNextEpoch(ctx, chain) {
		out.State = chaos.StateRunning
		return out
	}
	un := wfsolana.UnstakeInput{Network: "testnet", Staker: op.Staker.String(), StakeAccount: res.StakeAccount, Lamports: op.Lamports}
	if !start(ctx, tc, op.UnstakeID, wfsolana.UnstakeSummary(un), wfsolana.UnstakeWorkflow, un) {
		out.State = chaos.StateNotStarted
		return out
	}
	p.unstakesStarted.Add(1)
	var ures wfsolana.Result
	if !await(ctx, tc, op.UnstakeID, &ures, &out) {
		return out
	}
	out.Unstake = &ures
	out.State = chaos.StateCompleted
	return out
}

// start starts a workflow, retrying while Temporal cannot be reached; a start refused because
// the ID is taken means an earlier attempt went through (the IDs are the test's own).
func start(ctx context.Context, tc client.Client, id, summary string, wf, in any) bool {
	for {
		_, err := tc.ExecuteWorkflow(ctx, starter.StartOptions(id, summary, workflows.TaskQueueOf(workflows.DefaultTaskQueuePrefix, wfsolana.Module)), wf, in)
		var already *serviceerror.WorkflowExecutionAlreadyStarted
		if err == nil || errors.As(err, &already) {
			return true
		}
		if !sleep(ctx, 500*time.Millisecond) {
			return false
		}
	}
}

// await waits for a workflow's result, retrying while Temporal cannot be reached.
func await(ctx context.Context, tc client.Client, id string, res *wfsolana.Result, out *chaos.OpOutcome) bool {
	for {
		err := tc.GetWorkflow(ctx, id, "").Get(ctx, res)
		if err == nil {
			return true
		}
		var wfErr *temporal.WorkflowExecutionError
		if errors.As(err, &wfErr) {
			out.State, out.FailedType, out.Failure = chaos.StateFailed, "workflow", fmt.Sprintf("%s: %v", id, err)
			return false
		}
		if !sleep(ctx, 500*time.Millisecond) {
			out.State = chaos.StateRunning
			return false
		}
	}
}

// awaitNextEpoch waits until the chain's epoch is past the current one.
func awaitNextEpoch(ctx context.Context, chain *solchain.Client) bool {
	var now uint64
	first := true
	for {
		if ei, err := chain.EpochInfo(ctx); err == nil {
			if first {
				now, first = ei.Epoch, false
			} else if ei.Epoch > now {
				return true
			}
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return false
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// observe reads what the chain and the sandbox say of the operations, for chaos.Check.
// Transactions of the runtime's ledger before baseline are not the operations'.
func observe(t *testing.T, c *Cluster, outcomes []chaos.OpOutcome, baseline int) chaos.Observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt := c.Stack.Sandbox.Runtime()
	chain := solchain.New(rt.URL())
	obs := chaos.Observation{Ops: outcomes, Balances: map[string]uint64{}, Accounts: map[string]chaos.AccountView{}}
	entries, err := rt.Ledger(ctx)
	require.NoError(t, err)
	obs.Landed = entries[baseline:]
	sbl, err := c.Stack.Sandbox.Ledger(ctx)
	require.NoError(t, err)
	obs.Built = sbl.StakeAccounts
	for _, o := range outcomes {
		bal, err := chain.Balance(ctx, o.Spec.Staker.String())
		require.NoError(t, err)
		obs.Balances[o.Spec.Staker.String()] = bal
		if o.Stake == nil || o.Stake.StakeAccount == "" {
			continue
		}
		acct, err := chain.StakeAccount(ctx, o.Stake.StakeAccount)
		switch {
		case errors.Is(err, solchain.ErrAccountNotFound):
			obs.Accounts[o.Stake.StakeAccount] = chaos.AccountView{}
		case err != nil:
			require.NoError(t, err)
		default:
			v := chaos.AccountView{Exists: true, Lamports: acct.Lamports, Staker: acct.Meta.Staker, Withdrawer: acct.Meta.Withdrawer}
			if acct.Stake != nil {
				v.Voter = acct.Stake.Delegation.Voter
			}
			obs.Accounts[o.Stake.StakeAccount] = v
		}
	}
	return obs
}

// requireExactlyOnce fails t with every violation chaos.Check finds: an operation not completed,
// a transaction landed twice or unaccounted for, a balance or stake account off by a lamport.
func requireExactlyOnce(t *testing.T, c *Cluster, outcomes []chaos.OpOutcome, baseline int) {
	t.Helper()
	violations := chaos.Check(observe(t, c, outcomes, baseline))
	for _, v := range violations {
		t.Errorf("violation: %s", v)
	}
	require.Empty(t, violations)
}

// requireListedDone waits until the cluster's visibility store (advanced visibility on
// PostgreSQL) lists every operation whose ID starts with prefix as done by stakeflow's own search
// attribute, want of them, and none of them open.
func requireListedDone(t *testing.T, c *Cluster, prefix string, want int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	count := func(query string) int64 {
		resp, err := c.Stack.Client.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		if err != nil {
			return -1
		}
		return resp.GetCount()
	}
	done := fmt.Sprintf("WorkflowId STARTS_WITH '%s' AND %s = '%s'", prefix, workflows.SAStep.GetName(), workflows.StepDone)
	open := fmt.Sprintf("WorkflowId STARTS_WITH '%s' AND ExecutionStatus = 'Running'", prefix)
	waitUntil(t, ctx, time.Minute, fmt.Sprintf("%d operations listed done (%s)", want, done), func() bool {
		return count(done) == want
	})
	require.Zero(t, count(open), "operations still open: %s", open)
}

// ledgerLen is how many transactions the runtime's ledger holds now.
func ledgerLen(t *testing.T, c *Cluster) int {
	t.Helper()
	entries, err := c.Stack.Sandbox.Runtime().Ledger(context.Background())
	require.NoError(t, err)
	return len(entries)
}

// waitUntil polls cond every 100 ms until it holds; it fails t after limit.
func waitUntil(t *testing.T, ctx context.Context, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting for %s: not after %s", what, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
