//go:build integration

package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/chaos"
)

// TestFailover runs stakes and stake -> unstake -> withdraw chains across three worker processes
// on the real Temporal server on PostgreSQL while: worker 1 is killed (SIGKILL) with operations in
// flight and started again; worker 2 is killed for good once stakes have completed; the Temporal
// server is killed (SIGKILL) while unstakes wait, during which the live workers' /readyz answers
// not ready, and started again on the same database, after which it answers ready; worker 3 is killed and started again. On the
// runtime's ledger every operation completed exactly once (chaos.Check: each transaction landed
// once and was reported, stake accounts and balances exact to the lamport) and none is left open;
// the visibility store lists each workflow done by stakeflow's search attribute, and none open.
func TestFailover(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, 12)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	baseline := ledgerLen(t, c)
	ops := plan(c, "failover")
	var p progress
	results := make(chan []chaos.OpOutcome, 1)
	go func() { results <- runOps(ctx, c, ops, &p) }()
	w1, w2, w3 := c.Workers[0], c.Workers[1], c.Workers[2]

	waitUntil(t, ctx, time.Minute, "operations in flight", func() bool { return p.started.Load() >= 6 && p.inFlight() > 0 })
	w1.Kill()
	t.Logf("worker 1 killed with %d operations in flight", p.inFlight())
	require.NoError(t, w1.Start(ctx), "worker 1 comes back")

	waitUntil(t, ctx, 2*time.Minute, "a stake completed", func() bool { return p.stakesDone.Load() >= 2 && p.inFlight() > 0 })
	w2.Kill()
	t.Logf("worker 2 killed for good with %d operations in flight", p.inFlight())

	waitUntil(t, ctx, 2*time.Minute, "an unstake in flight", func() bool { return p.unstakesStarted.Load() >= 1 && p.inFlight() > 0 })
	c.Server.Kill()
	t.Logf("Temporal server killed with %d operations in flight", p.inFlight())
	for _, w := range []*Worker{w1, w3} {
		waitUntil(t, ctx, time.Minute, "/readyz not ready while Temporal is down", func() bool { return !w.Ready(ctx) })
		assert.True(t, w.Running(), "worker %d stays up while Temporal is down", w.Index)
	}
	require.NoError(t, c.Server.Start(ctx), "the Temporal server comes back")
	for _, w := range []*Worker{w1, w3} {
		waitUntil(t, ctx, time.Minute, "/readyz ready once Temporal is back", func() bool { return w.Ready(ctx) })
	}
	assert.False(t, w2.Ready(ctx), "the worker killed for good is not ready")

	waitUntil(t, ctx, 2*time.Minute, "operations still in flight after the restart", func() bool { return p.inFlight() > 0 })
	w3.Kill()
	t.Logf("worker 3 killed with %d operations in flight", p.inFlight())
	require.NoError(t, w3.Start(ctx), "worker 3 comes back")

	var outcomes []chaos.OpOutcome
	select {
	case outcomes = <-results:
	case <-ctx.Done():
		t.Fatal("the operations did not finish in time")
	}
	requireExactlyOnce(t, c, outcomes, baseline)
	requireListedDone(t, c, "failover-", int64(len(ops)+len(ops)/2))
}
