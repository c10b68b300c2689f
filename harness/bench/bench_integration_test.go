//go:build integration

package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchRunsEverySide runs the benchmark small, on one in-memory stack: it checks the sides
// first (the ceiling asks the server for the stake's activities in the stake's order, the
// encrypted side's payloads are sealed and the others' are not), then every side completes
// every operation at each concurrency, the breakdown at C=1 finds the same activities in the
// stake's histories and the ceiling's, and both Celestia sides complete their delegates.
func TestBenchRunsEverySide(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.TemporalCLI, cfg.Dir = cliPath, t.TempDir()
	cfg.Concurrency = []int{1, 3}
	cfg.Ops, cfg.SerialOps, cfg.Warmup, cfg.Rounds = 6, 4, 1, 2
	cfg.Drain, cfg.Park, cfg.PolygonOps, cfg.Stakers = 0, 0, 0, 2
	cfg.CelestiaOps, cfg.CelestiaConcurrency = 4, 2
	cfg.HyperliquidOps, cfg.EigenLayerOps = 0, 0 // TestBenchRunsHyperliquidAndEigenLayer's
	rep, err := Run(ctx, cfg)
	require.NoError(t, err)
	require.Len(t, rep.Modes, 1)
	require.Len(t, rep.Modes[0].Runs, 2)
	for _, run := range rep.Modes[0].Runs {
		want := cfg.Ops
		if run.Concurrency == 1 {
			want = cfg.SerialOps
		}
		for _, row := range run.rows() {
			assert.Equal(t, want, row.s.Ops, "%s at C=%d: operations", row.name, run.Concurrency)
			assert.Zero(t, row.s.Errors, "%s at C=%d: %s", row.name, run.Concurrency, row.s.FirstError)
			assert.Positive(t, row.s.OpsPerSec, "%s at C=%d", row.name, run.Concurrency)
		}
		assert.Positive(t, run.ThroughputVsCeiling)
		assert.Positive(t, run.EncryptedThroughput)
	}
	serial := rep.Modes[0].Runs[0]
	require.Len(t, serial.Breakdowns, 2)
	activitiesOf := func(b SideBreakdown) []string {
		var out []string
		for _, p := range b.Phases {
			if strings.HasPrefix(p.Name, phaseActivity) {
				out = append(out, p.Name)
			}
		}
		return out
	}
	orch, ceil := activitiesOf(serial.Breakdowns[0]), activitiesOf(serial.Breakdowns[1])
	assert.True(t, slices.ContainsFunc(orch, func(p string) bool { return strings.HasPrefix(p, phaseActivity+"Preflight") }),
		"the stake's own activities: %v", orch)
	assert.Equal(t, orch, ceil, "the ceiling's activities are the stake's")
	assert.Contains(t, rep.Markdown(), "| memory | 3 | orchestrated, payloads encrypted |")

	require.NotNil(t, rep.Celestia)
	for name, s := range map[string]Stats{"orchestrated": rep.Celestia.Orchestrated, "bare": rep.Celestia.Bare} {
		assert.Equal(t, cfg.CelestiaOps, s.Ops, "Celestia %s: operations", name)
		assert.Zero(t, s.Errors, "Celestia %s: %s", name, s.FirstError)
	}
	assert.Contains(t, rep.Markdown(), "## Celestia delegate")
}

// TestBenchRunsHyperliquidAndEigenLayer runs the Hyperliquid and EigenLayer sides small, beside
// the least of the Solana sides (the check of the sides and one bare stake): both sides of each
// complete every operation with no error, every checkpoint proves its pod in two batches (80 and
// 10 of 90 validators), and the report's markdown names both.
func TestBenchRunsHyperliquidAndEigenLayer(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.TemporalCLI, cfg.Dir = cliPath, t.TempDir()
	cfg.Sides, cfg.Concurrency = []string{"bare"}, []int{1}
	cfg.SerialOps, cfg.Warmup, cfg.Rounds, cfg.Stakers = 1, 0, 1, 1
	cfg.Drain, cfg.Park, cfg.PolygonOps, cfg.CelestiaOps = 0, 0, 0, 0
	cfg.HyperliquidOps, cfg.HyperliquidConcurrency = 2, 1
	cfg.EigenLayerOps, cfg.EigenLayerValidators = 2, 90
	rep, err := Run(ctx, cfg)
	require.NoError(t, err)

	require.NotNil(t, rep.Hyperliquid)
	for name, s := range map[string]Stats{"orchestrated": rep.Hyperliquid.Orchestrated, "bare": rep.Hyperliquid.Bare} {
		assert.Equal(t, cfg.HyperliquidOps, s.Ops, "Hyperliquid %s: withdrawals", name)
		assert.Zero(t, s.Errors, "Hyperliquid %s: %s", name, s.FirstError)
		assert.Positive(t, s.P50, "Hyperliquid %s: p50", name)
		assert.Positive(t, s.OpsPerSec, "Hyperliquid %s: ops/s", name)
	}
	require.NotNil(t, rep.EigenLayer)
	assert.Equal(t, 90, rep.EigenLayer.Validators)
	for name, s := range map[string]CheckpointStats{"orchestrated": rep.EigenLayer.Orchestrated, "bare": rep.EigenLayer.Bare} {
		assert.Equal(t, cfg.EigenLayerOps, s.Ops, "EigenLayer %s: checkpoints", name)
		assert.Zero(t, s.Errors, "EigenLayer %s: %s", name, s.FirstError)
		assert.Equal(t, 2*cfg.EigenLayerOps, s.Batches, "EigenLayer %s: two batches a checkpoint", name)
		assert.Positive(t, s.P50, "EigenLayer %s: wall time", name)
		assert.Equal(t, s.Wall/Duration(s.Batches), s.PerBatch, "EigenLayer %s: time per batch", name)
	}
	assert.Positive(t, rep.EigenLayer.WallVsBare)
	t.Log(rep.Hyperliquid.markdown() + rep.EigenLayer.markdown())
	md := rep.Markdown()
	assert.Contains(t, md, "## Hyperliquid withdrawal")
	assert.Contains(t, md, "## EigenLayer checkpoint")
	assert.Contains(t, md, "2 checkpoints per side")
}

// TestBenchParksOnTheWorkerBinary parks a few unstakes on the shipped worker binary, run as a
// deployment runs it in a process of its own with a sticky cache smaller than the workflows: all
// of them reach the deactivation wait there (the benchmark's own workers serve other queues), and
// the report reads that process (its RSS, its heap and goroutines from its /metrics).
func TestBenchParksOnTheWorkerBinary(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	bin := filepath.Join(t.TempDir(), "worker")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/stakeflow/stakeflow/cmd/worker").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.TemporalCLI, cfg.Dir = cliPath, t.TempDir()
	cfg.Sides, cfg.Concurrency = []string{"bare"}, []int{1}
	cfg.SerialOps, cfg.Warmup, cfg.Rounds, cfg.Stakers = 1, 0, 1, 2
	cfg.Drain, cfg.PolygonOps, cfg.CelestiaOps, cfg.HyperliquidOps, cfg.EigenLayerOps = 0, 0, 0, 0, 0
	cfg.Park, cfg.ParkWorkerBin, cfg.ParkStickyCache = 12, bin, 5
	rep, err := Run(ctx, cfg)
	require.NoError(t, err)
	p := rep.Park
	require.NotNil(t, p)
	assert.Equal(t, 12, p.Workflows)
	assert.Equal(t, 5, p.StickyCache)
	for name, s := range map[string]ProcSample{"before": p.Before, "parked": p.Parked, "settled": p.After} {
		assert.Positive(t, s.WorkerRSS, name)
		assert.Positive(t, s.WorkerHeap, name)
		assert.Positive(t, s.Goroutines, name)
	}
	assert.False(t, p.MeetsGoal, "12 parked do not measure the goal")
	assert.Contains(t, rep.Markdown(), "goal not measured: 12 parked")
}
