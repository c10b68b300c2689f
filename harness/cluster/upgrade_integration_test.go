//go:build integration

package cluster

import (
	"bufio"
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/chaos"
	"github.com/stakeflow/stakeflow/internal/metrics"
)

// TestRollingUpgrade is the weekly deploy: a worker built from the previous commit and one built
// from this commit serve the same task queue while stakes and stake -> unstake -> withdraw chains
// run; both take work (each calls the staking service). Then the old worker is stopped as a
// rollout stops it (SIGTERM) while operations are in flight, and a second new one takes its
// place. Every operation completes exactly once on the runtime's ledger.
func TestRollingUpgrade(t *testing.T) {
	t.Parallel()
	prevBuilt := make(chan string, 1)
	prevErr := make(chan error, 1)
	go func() {
		bin, err := buildPrevious(t.TempDir())
		prevBuilt <- bin
		prevErr <- err
	}()
	c := startCluster(t, 0, 10)
	prev := <-prevBuilt
	require.NoError(t, <-prevErr, "building the previous commit's worker")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	old, err := c.AddWorker(ctx, prev)
	require.NoError(t, err, "the previous commit's worker starts")
	cur, err := c.AddWorker(ctx, bins.worker)
	require.NoError(t, err, "this commit's worker starts")

	baseline := ledgerLen(t, c)
	var p progress
	results := make(chan []chaos.OpOutcome, 1)
	go func() { results <- runOps(ctx, c, plan(c, "upgrade"), &p) }()

	waitUntil(t, ctx, 2*time.Minute, "both builds serving operations", func() bool {
		return serviceRequests(ctx, old) > 0 && serviceRequests(ctx, cur) > 0 && p.inFlight() > 0
	})
	t.Logf("both builds served operations; stopping the old one with %d operations in flight", p.inFlight())
	old.Stop(30 * time.Second)
	_, err = c.AddWorker(ctx, bins.worker)
	require.NoError(t, err, "a second worker of this commit starts")

	var outcomes []chaos.OpOutcome
	select {
	case outcomes = <-results:
	case <-ctx.Done():
		t.Fatal("the operations did not finish in time")
	}
	requireExactlyOnce(t, c, outcomes, baseline)
}

// buildPrevious builds cmd/worker of the commit before HEAD (from `git archive`, so the repository
// is left as it is) into dir, and returns the binary's path.
func buildPrevious(dir string) (string, error) {
	src := filepath.Join(dir, "src")
	archive := exec.Command("sh", "-c", `mkdir -p "$1" && git archive --format=tar HEAD~1 | tar -x -C "$1"`, "archive", src)
	archive.Dir = "../.."
	if out, err := archive.CombinedOutput(); err != nil {
		return "", errExited("git archive HEAD~1 (the tests need the repository's history)", err, out)
	}
	bin := filepath.Join(dir, "worker-previous")
	build := exec.Command("go", "build", "-o", bin, "./cmd/worker")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", errExited("building the previous commit's worker", err, out)
	}
	return bin, nil
}

// serviceRequests is the worker's count of staking-service requests (its /metrics), 0 when it
// cannot be read.
func serviceRequests(ctx context.Context, w *Worker) float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.HealthURL+"/metrics", nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var total float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metrics.ServiceRequests) {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			total += v
		}
	}
	return total
}
