package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCheckpointReportComparesTheSides(t *testing.T) {
	r := &CheckpointReport{Operation: "EigenLayer checkpoint", Validators: 200, ProofsPerBatch: 80, Ops: 2,
		Orchestrated: CheckpointStats{Stats: Stats{Ops: 2, P50: Duration(12 * time.Second), P95: Duration(13 * time.Second),
			CPU: &CPUPerOp{Server: Duration(200 * time.Millisecond), Bench: Duration(600 * time.Millisecond), Runtime: Duration(200 * time.Millisecond)}},
			Batches: 6, PerBatch: Duration(4 * time.Second)},
		Bare: CheckpointStats{Stats: Stats{Ops: 2, P50: Duration(10 * time.Second), P95: Duration(11 * time.Second),
			CPU: &CPUPerOp{Bench: Duration(400 * time.Millisecond), Runtime: Duration(100 * time.Millisecond)}},
			Batches: 6, PerBatch: Duration(3200 * time.Millisecond)},
	}
	r.ratios()
	assert.InDelta(t, 1.2, r.WallVsBare, 1e-9)
	assert.InDelta(t, 1.25, r.PerBatchVsBare, 1e-9)
	assert.InDelta(t, 0.5, r.CPUVsBare, 1e-9, "bare CPU (0.5 s) over orchestrated (1 s)")

	md := r.markdown()
	assert.Contains(t, md, "## EigenLayer checkpoint\n")
	assert.Contains(t, md, "2 checkpoints per side")
	assert.Contains(t, md, "a pod of its own of 200 validators (the sandbox proves 80 a batch)")
	assert.Contains(t, md, "| orchestrated | 2 | 12000 ms | 13000 ms | 6 | 4000 ms | 0 | 200.0 | 600.0 | 200.0 |")
	assert.Contains(t, md, "| bare | 2 | 10000 ms | 11000 ms | 6 | 3200 ms | 0 |")
	assert.Contains(t, md, "wall p50 1.20, time per batch 1.25, CPU per checkpoint (bare/orchestrated) 0.50")
	assert.False(t, strings.Contains(md, "NaN"))
	assert.Empty(t, (*CheckpointReport)(nil).markdown())
}

// Each side of each chain signs from EVM keys of its own, and no Hyperliquid delegator is given
// more withdrawals in a round than Hyperliquid lets be pending.
func TestEVMKeysAreEachSidesOwn(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		polygon, hl, hlConc, el int
		delegators              int
		want                    evmKeys
	}{
		{"all", 8, 20, 4, 2, 4, evmKeys{hyperliquid: 8, eigenlayer: 16, total: 18}},
		{"no Polygon", 0, 20, 4, 2, 4, evmKeys{hyperliquid: 0, eigenlayer: 8, total: 10}},
		{"many withdrawals", 0, 100, 4, 0, 10, evmKeys{hyperliquid: 0, eigenlayer: 20, total: 20}},
		{"EigenLayer only", 0, 0, 4, 2, 4, evmKeys{total: 2}},
		{"none", 0, 0, 4, 0, 4, evmKeys{}},
	} {
		cfg := Config{PolygonOps: tc.polygon, PolygonConcurrency: 4, HyperliquidOps: tc.hl, HyperliquidConcurrency: tc.hlConc, EigenLayerOps: tc.el}
		assert.Equal(t, tc.want, evmKeysOf(cfg), tc.name)
		n := hyperliquidDelegators(cfg)
		assert.Equal(t, tc.delegators, n, tc.name)
		for r := range chainRounds {
			per := perRound(tc.hl, chainRounds, r)
			assert.LessOrEqual(t, (per+n-1)/n, 5, "%s: withdrawals of one delegator in round %d", tc.name, r)
		}
	}
}
