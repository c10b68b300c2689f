//go:build integration

package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
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

// TestRollingUpgrade is the weekly deploy: a worker built from before the newest change to the
// worker's code (previousWorker) and one built from this tree serve the same task queue while
// stakes and stake -> unstake -> withdraw chains run; both take work (each calls the staking
// service). Then the old worker is stopped as a rollout stops it (SIGTERM) while operations are in
// flight, and a second new one takes its place. Every operation completes exactly once on the
// runtime's ledger.
func TestRollingUpgrade(t *testing.T) {
	t.Parallel()
	base, changed, err := previousWorker("../..")
	require.NoError(t, err)
	if base == changed {
		t.Logf("the old worker is built at %.12s, the newest commit that changed the worker's code, which says %s: %s (both workers run the same code)",
			base, upgradeTrailer, upgradeNone)
	} else {
		t.Logf("the old worker is built at %.12s, the parent of %.12s, the newest commit that changed the worker's code", base, changed)
	}
	prevBuilt := make(chan string, 1)
	prevErr := make(chan error, 1)
	go func() {
		bin, err := buildPrevious(t.TempDir(), base)
		prevBuilt <- bin
		prevErr <- err
	}()
	c := startCluster(t, 0, 10)
	prev := <-prevBuilt
	require.NoError(t, <-prevErr, "building the old worker")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	old, err := c.AddWorker(ctx, prev)
	require.NoError(t, err, "the old worker starts")
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

// upgradeTrailer is the commit-message trailer by which a commit says no rolling upgrade crosses it
// (upgradeNone): a workflow change that histories of the code before it cannot replay, made
// without a version guard while nothing is deployed (its histories re-recorded).
const (
	upgradeTrailer = "Rolling-Upgrade"
	upgradeNone    = "none"
)

// previousWorker is the commit the old worker is built from: the parent of changed, the newest
// commit that changed a file the worker is built from (a non-test file of a package of this module
// that cmd/worker imports, go.mod or go.sum). The upgrade so crosses the newest change to what a
// worker runs, however many commits since touched only tests, tools or docs (the commit before
// HEAD would then build the same worker twice). When changed says no upgrade crosses it
// (upgradeTrailer), base is changed itself. repo is the repository's root; its history is needed.
func previousWorker(repo string) (base, changed string, err error) {
	list := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd/worker")
	list.Dir = repo
	out, err := list.Output()
	if err != nil {
		return "", "", errExited("go list -deps ./cmd/worker", err, out)
	}
	root, err := filepath.Abs(repo)
	if err != nil {
		return "", "", err
	}
	spec := workerPathspec(root, strings.Fields(string(out)))
	if len(spec) < 4 {
		return "", "", fmt.Errorf("cluster: go list found no package of the module under cmd/worker: %q", out)
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", errExited("git "+strings.Join(args, " ")+" (the tests need the repository's history)", err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	changed, err = git(append([]string{"log", "-1", "--format=%H", "HEAD", "--"}, spec...)...)
	if err != nil {
		return "", "", err
	}
	if changed == "" {
		return "", "", errors.New("cluster: no commit changed the worker's code (a shallow clone?)")
	}
	trailer, err := git("log", "-1", "--format=%(trailers:key="+upgradeTrailer+",valueonly)", changed)
	if err != nil {
		return "", "", err
	}
	if strings.EqualFold(strings.TrimSpace(trailer), upgradeNone) {
		return changed, changed, nil
	}
	if base, err = git("rev-parse", "--verify", changed+"^"); err != nil {
		return "", "", err
	}
	// The two builds differ, or the upgrade would prove nothing.
	diff := exec.Command("git", append([]string{"diff", "--quiet", base, "HEAD", "--"}, spec...)...)
	diff.Dir = repo
	var ee *exec.ExitError
	if err := diff.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		return "", "", fmt.Errorf("cluster: the worker's code at %s is the same as at HEAD (git diff: %v)", base, err)
	}
	return base, changed, nil
}

// workerPathspec is git's pathspec of the worker's code: go.mod, go.sum and every file directly in
// dirs (the packages' directories, under root), but tests.
func workerPathspec(root string, dirs []string) []string {
	spec := []string{"go.mod", "go.sum"}
	for _, d := range dirs {
		rel, err := filepath.Rel(root, d)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if rel == "." {
			spec = append(spec, ":(glob)*")
		} else {
			spec = append(spec, ":(glob)"+filepath.ToSlash(rel)+"/*")
		}
	}
	return append(spec, ":(exclude,glob)**/*_test.go")
}

// buildPrevious builds cmd/worker of commit (from `git archive`, so the repository is left as it
// is) into dir, and returns the binary's path.
func buildPrevious(dir, commit string) (string, error) {
	src := filepath.Join(dir, "src")
	archive := exec.Command("sh", "-c", `mkdir -p "$1" && git archive --format=tar "$2" | tar -x -C "$1"`, "archive", src, commit)
	archive.Dir = "../.."
	if out, err := archive.CombinedOutput(); err != nil {
		return "", errExited("git archive "+commit+" (the tests need the repository's history)", err, out)
	}
	bin := filepath.Join(dir, "worker-previous")
	build := exec.Command("go", "build", "-o", bin, "./cmd/worker")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", errExited("building the old worker at "+commit, err, out)
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
