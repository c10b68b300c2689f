package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPolygonReportComparesTheSides(t *testing.T) {
	r := &ChainReport{Operation: "Polygon delegate", Concurrency: 4, Ops: 8, chain: "geth",
		Orchestrated: Stats{OpsPerSec: 0.06, P50: Duration(66 * time.Second), Errors: 0,
			CPU: &CPUPerOp{Server: Duration(300 * time.Millisecond), Bench: Duration(500 * time.Millisecond), Runtime: Duration(200 * time.Millisecond)}},
		Bare: Stats{OpsPerSec: 0.0625, P50: Duration(64 * time.Second),
			CPU: &CPUPerOp{Server: 0, Bench: Duration(400 * time.Millisecond), Runtime: Duration(100 * time.Millisecond)}},
	}
	r.ratios()
	assert.InDelta(t, 0.96, r.ThroughputVsBare, 1e-9)
	assert.InDelta(t, 66.0/64.0, r.P50VsBare, 1e-9)
	assert.InDelta(t, 0.5, r.CPUVsBare, 1e-9, "bare CPU (0.5 s) over orchestrated (1 s)")

	md := r.markdown()
	assert.Contains(t, md, "## Polygon delegate\n")
	assert.Contains(t, md, "8 operations per side")
	assert.Contains(t, md, "| bench process | geth |")
	assert.Contains(t, md, "| orchestrated | 0.06 | 66000 ms |")
	assert.Contains(t, md, "| bare | 0.06 | 64000 ms |")
	assert.Contains(t, md, "throughput 0.96, p50 1.03, CPU per op (bare/orchestrated) 0.50")

	r.Bare.CPU = nil
	r.ratios()
	assert.Zero(t, r.CPUVsBare, "no CPU figure without both samples")
	assert.Empty(t, (*ChainReport)(nil).markdown())
	assert.False(t, strings.Contains(md, "NaN"))
}
