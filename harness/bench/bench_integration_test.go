//go:build integration

package bench

import (
	"context"
	"os"
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
