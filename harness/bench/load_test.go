package bench

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample", ms(7), 99, 7 * time.Millisecond},
		{"median of odd count", ms(5, 1, 3), 50, 3 * time.Millisecond},
		{"median of even count is the lower middle", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p95 of 1..100", ms(seq(100)...), 95, 95 * time.Millisecond},
		{"p99 of 1..100", ms(seq(100)...), 99, 99 * time.Millisecond},
		{"p100 is the maximum", ms(3, 9, 1), 100, 9 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]time.Duration(nil), tc.in...)
			assert.Equal(t, tc.want, Percentile(tc.in, tc.p))
			assert.Equal(t, before, tc.in, "input left unsorted")
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// TestRunLoadBoundsConcurrencyAndCountsErrors runs every index once, never more than c at a
// time, and counts failures apart from the latencies.
func TestRunLoadBoundsConcurrencyAndCountsErrors(t *testing.T) {
	const n, c = 40, 4
	var running, peak atomic.Int32
	seen := make([]atomic.Int32, n)
	release := make(chan struct{})
	go func() {
		// Let operations through one by one once c are running, so the bound is observed.
		for range n {
			release <- struct{}{}
		}
	}()
	s := RunLoad(context.Background(), n, c, func(_ context.Context, i int) error {
		cur := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		seen[i].Add(1)
		<-release
		if i%10 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	for i := range seen {
		assert.Equal(t, int32(1), seen[i].Load(), "index %d", i)
	}
	assert.LessOrEqual(t, peak.Load(), int32(c))
	assert.Equal(t, n, s.Ops)
	assert.Equal(t, 4, s.Errors)
	assert.Equal(t, "boom", s.FirstError)
	assert.Len(t, s.samples, n-4)
	assert.Greater(t, s.OpsPerSec, 0.0)
}

func TestMergeAddsRoundsUp(t *testing.T) {
	a := Stats{Ops: 10, Errors: 1, Concurrency: 5, Wall: Duration(2 * time.Second), Rounds: 1, good: 9,
		samples: []time.Duration{time.Millisecond, 3 * time.Millisecond}}
	b := Stats{Ops: 10, Concurrency: 5, Wall: Duration(time.Second), Rounds: 1, good: 10, FirstError: "",
		samples: []time.Duration{2 * time.Millisecond}}
	a.FirstError = "first"
	m := Merge(a, b)
	assert.Equal(t, 20, m.Ops)
	assert.Equal(t, 1, m.Errors)
	assert.Equal(t, 2, m.Rounds)
	assert.Equal(t, 5, m.Concurrency)
	assert.Equal(t, Duration(3*time.Second), m.Wall)
	assert.InDelta(t, 19.0/3, m.OpsPerSec, 1e-9)
	assert.Equal(t, Duration(2*time.Millisecond), m.P50)
	assert.Equal(t, "first", m.FirstError)
	assert.Nil(t, m.CPU, "no round measured CPU")
	assert.Nil(t, m.Slowest)

	a.Slowest = &SlowOp{WorkflowID: "a", Took: Duration(time.Second)}
	b.Slowest = &SlowOp{WorkflowID: "b", Took: Duration(2 * time.Second)}
	assert.Equal(t, "b", Merge(a, b).Slowest.WorkflowID, "the slowest of every round")
	assert.Equal(t, "b", Merge(b, a).Slowest.WorkflowID)
	a.Slowest, b.Slowest = nil, nil

	a.CPU = &CPUPerOp{Server: Duration(10 * time.Millisecond)}
	b.CPU = &CPUPerOp{Server: Duration(20 * time.Millisecond), Bench: Duration(4 * time.Millisecond)}
	m = Merge(a, b)
	require.NotNil(t, m.CPU)
	assert.Equal(t, Duration(15*time.Millisecond), m.CPU.Server, "weighted by operations")
	assert.Equal(t, Duration(2*time.Millisecond), m.CPU.Bench)
}

func TestDurationMarshalsAsMilliseconds(t *testing.T) {
	raw, err := json.Marshal(struct {
		D Duration `json:"d"`
	}{Duration(1500 * time.Microsecond)})
	require.NoError(t, err)
	assert.JSONEq(t, `{"d":1.5}`, string(raw))
}

// TestMarkdownHoldsEveryNumber renders a report and finds each side, ratio, the parking
// measurement and the phases in the table.
func TestMarkdownHoldsEveryNumber(t *testing.T) {
	rep := &Report{Settings: settingsOf(DefaultConfig()), NumCPU: 2, GoVersion: "go"}
	run := RunReport{Concurrency: 50,
		Orchestrated: Stats{Ops: 100, OpsPerSec: 24.5, P50: Duration(120 * time.Millisecond),
			CPU: &CPUPerOp{Server: Duration(40 * time.Millisecond), Bench: Duration(8 * time.Millisecond), Runtime: Duration(2 * time.Millisecond)}},
		Ceiling: Stats{Ops: 100, OpsPerSec: 30, P50: Duration(100 * time.Millisecond),
			CPU: &CPUPerOp{Server: Duration(35 * time.Millisecond), Bench: Duration(5 * time.Millisecond)}},
		Encrypted: Stats{Ops: 100, OpsPerSec: 19.6, P50: Duration(150 * time.Millisecond),
			CPU: &CPUPerOp{Server: Duration(40 * time.Millisecond), Bench: Duration(10 * time.Millisecond), Runtime: Duration(2 * time.Millisecond)}},
		Bare: Stats{Ops: 100, OpsPerSec: 200, P50: Duration(60 * time.Millisecond), Errors: 2},
	}
	run.ratios()
	serial := RunReport{Concurrency: 1, Breakdowns: []SideBreakdown{
		{Side: "orchestrated", Breakdown: Breakdown{Ops: 60, Total: Duration(50 * time.Millisecond), Phases: []PhaseTime{
			{phaseActivity + "Build", Duration(4500 * time.Microsecond)}, {phaseUnaccounted, 0}}}},
		{Side: "ceiling", Breakdown: Breakdown{Ops: 59, Total: Duration(40 * time.Millisecond), Phases: []PhaseTime{
			{phaseActivity + "Build", Duration(2500 * time.Microsecond)}, {phaseActivity + "Confirm", Duration(time.Millisecond)}}}},
	}}
	rep.Modes = []ModeReport{{Mode: ModeFile, Runs: []RunReport{serial, run}, ServerRSS: 300 << 20, LoadBefore: "1.00 2.00 3.00"}}
	rep.Park = &ParkReport{Workflows: 10000, Mode: ModeMemory, StickyCache: 2000,
		After: ProcSample{WorkerRSS: 250 << 20, Goroutines: 2100, ServerRSS: 900 << 20}}
	rep.Park.judge()
	ph := rep.phase("file: start stack")
	ph.end()
	md := rep.Markdown()
	for _, want := range []string{
		"| file | 50 | orchestrated | 24.5 | 120 ms |",
		"| file | 50 | ceiling | 30.0 | 100 ms |",
		"| file | 50 | orchestrated, payloads encrypted | 19.6 | 150 ms |",
		"| file | 50 | bare client | 200.0 | 60 ms |",
		"| 2 |",
		// orch/ceiling, CPU ceiling/orch, p50 orch/ceiling, p50 (orch-bare)/ceiling, orch/bare,
		// p50 orch/bare; codec: enc/orch, p50 enc/orch, CPU orch/enc (50 ms over 52 ms).
		"| file | 50 | 0.82 | 0.80 | 1.20 | 0.60 | 0.12 | 2.00 | 0.80 | 1.25 | 0.96 |",
		"Parked 10000 UnstakeWorkflows",
		"| parked, settled (0s later) | 250 MiB |",
		"| 2100 | 900 MiB |",
		"goal MISSED: worker RSS 262 MB, not under 120 MB.",
		"load average 1.00 2.00 3.00",
		"| file: start stack |",
		"Where the time goes at C=1, file server: medians over the histories of 60 orchestrated operations, 59 ceiling operations",
		"| phase | orchestrated | ceiling | orchestrated − ceiling |",
		"| activity Build | 4.5 ms | 2.5 ms | 2.0 ms |",
		"| activity Confirm | - | 1.0 ms | -1.0 ms |\n| unaccounted | 0.0 ms | - | 0.0 ms |",
		"| total (median) | 50.0 ms | 40.0 ms | 10.0 ms |",
	} {
		assert.Contains(t, md, want)
	}
	assert.NotContains(t, md, "| file | 1 | bare client |", "a side that ran nothing has no row")
}

// TestRatiosByRoundPairRoundsOfTheSameTime checks that round-by-round ratios pair each round of
// the orchestrated side with the same round of the ceiling, and that the table shows their spread.
func TestRatiosByRoundPairRoundsOfTheSameTime(t *testing.T) {
	sides := []side{{name: "ceiling"}, {name: "bare"}, {name: "orchestrated"}}
	rounds := [][]Stats{
		{{OpsPerSec: 40, P50: Duration(100 * time.Millisecond)}, {OpsPerSec: 30, P50: Duration(100 * time.Millisecond)}},
		{{OpsPerSec: 500}, {OpsPerSec: 500}},
		{{OpsPerSec: 32, P50: Duration(130 * time.Millisecond)}, {OpsPerSec: 27, P50: Duration(120 * time.Millisecond)}},
	}
	var run RunReport
	run.byRound(sides, rounds)
	assert.InDeltaSlice(t, []float64{0.8, 0.9}, run.ThroughputVsCeilingRounds, 1e-9)
	assert.InDeltaSlice(t, []float64{1.3, 1.2}, run.P50VsCeilingRounds, 1e-9)
	assert.Equal(t, " (rounds 0.80–0.90)", spread(run.ThroughputVsCeilingRounds))
	assert.Empty(t, spread([]float64{0.8}))
}

// TestSteadyRateLeavesOutRampAndStragglers checks that the steady-state rate is taken over the
// middle of the completions: one straggler that stretches the wall time 50-fold leaves it alone.
func TestSteadyRateLeavesOutRampAndStragglers(t *testing.T) {
	var ends []time.Duration
	for i := 1; i <= 100; i++ {
		ends = append(ends, time.Duration(i)*time.Millisecond)
	}
	ends = append(ends, 5*time.Second)
	n, d := steady(ends)
	assert.Equal(t, 80, n)
	assert.Equal(t, 80*time.Millisecond, d)
	n, d = steady(ends[:9])
	assert.Zero(t, n)
	assert.Zero(t, d)
}

// TestSidesSelectsAndRefuses checks that Config.Sides keeps only the sides named, in the order
// they run, and that an unknown side is refused by name before anything starts.
func TestSidesSelectsAndRefuses(t *testing.T) {
	e := env{cfg: Config{Sides: []string{"orchestrated", "ceiling"}}}
	var names []string
	for _, s := range e.sides() {
		names = append(names, s.name)
	}
	assert.Equal(t, []string{"ceiling", "orchestrated"}, names)
	assert.Len(t, (&env{}).sides(), len(SideNames()))

	_, err := Config{TemporalCLI: "t", Dir: "d", Sides: []string{"ceiling", "ceilng"}}.withDefaults()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown side "ceilng"`)
}

// TestCelestiaAmountRefusedWhenNotUtia checks that a Celestia amount that is not a positive
// number of utia is refused, naming it, before anything starts; the default amount passes.
func TestCelestiaAmountRefusedWhenNotUtia(t *testing.T) {
	for _, bad := range []string{"0.1", "-5", "0", "1TIA"} {
		_, err := Config{TemporalCLI: "t", Dir: "d", CelestiaOps: 1, CelestiaUtia: bad}.withDefaults()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), `CelestiaUtia "`+bad+`" is not a positive number of utia`)
	}
	c, err := Config{TemporalCLI: "t", Dir: "d", CelestiaOps: 1}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultConfig().CelestiaUtia, c.CelestiaUtia)
}

// TestInterleavedRunsEverySideOncePerCycle checks the C=1 schedule: one operation at a time,
// each cycle one operation of every side with the cycle's index, the order changing between
// cycles, and the rounds grouping the cycles with every operation counted once.
func TestInterleavedRunsEverySideOncePerCycle(t *testing.T) {
	const n, rounds = 20, 3
	var running atomic.Int32
	type call struct{ side, i int }
	var calls []call
	op := func(side int) func(context.Context, int) error {
		return func(_ context.Context, i int) error {
			if running.Add(1) != 1 {
				t.Error("two operations ran at once")
			}
			defer running.Add(-1)
			calls = append(calls, call{side, i})
			if side == 2 && i == 7 {
				return errors.New("refused")
			}
			return nil
		}
	}
	sides := []side{{name: "a", op: op(0)}, {name: "b", op: op(1)}, {name: "c", op: op(2)}}
	e := &env{cfg: Config{Rounds: rounds, TemporalCLI: "no-such-server"}}
	got, ran := e.interleaved(context.Background(), sides, n)
	require.Len(t, ran, len(sides))
	for j := range ran {
		assert.Empty(t, ran[j], "side %d ran no workflow", j)
	}

	require.Len(t, calls, n*len(sides))
	orders := map[[3]int]bool{}
	for cycle := range n {
		var order [3]int
		seen := map[int]bool{}
		for k, c := range calls[cycle*3 : cycle*3+3] {
			assert.Equal(t, cycle, c.i, "cycle %d runs operation %d of every side", cycle, cycle)
			seen[c.side] = true
			order[k] = c.side
		}
		assert.Len(t, seen, 3, "cycle %d runs every side once", cycle)
		orders[order] = true
	}
	assert.Greater(t, len(orders), 1, "the order is shuffled between cycles")

	require.Len(t, got, len(sides))
	for j, rs := range got {
		require.Len(t, rs, rounds, "side %d", j)
		assert.Equal(t, []int{6, 6, 8}, []int{rs[0].Ops, rs[1].Ops, rs[2].Ops}, "side %d: the last round takes the remainder", j)
		m := Merge(rs...)
		assert.Equal(t, n, m.Ops)
		assert.Equal(t, rounds, m.Rounds)
		if j == 2 {
			assert.Equal(t, 1, m.Errors)
			assert.Equal(t, "refused", m.FirstError)
		} else {
			assert.Zero(t, m.Errors)
		}
		assert.Greater(t, m.OpsPerSec, 0.0)
	}
}

// TestBalancedOrderIsAWilliamsDesign checks, for side counts even and odd, that every round is
// an order of all the sides and that over a full design every side takes every position equally
// often and follows every other side equally often.
func TestBalancedOrderIsAWilliamsDesign(t *testing.T) {
	for n := 2; n <= 7; n++ {
		rows := n
		if n%2 == 1 {
			rows = 2 * n
		}
		position := map[[2]int]int{}
		follows := map[[2]int]int{}
		for r := range rows {
			order := balancedOrder(n, r)
			require.ElementsMatch(t, seq(n), plus1(order), "n=%d round %d is an order of every side", n, r)
			for k, j := range order {
				position[[2]int{j, k}]++
				if k > 0 {
					follows[[2]int{order[k-1], j}]++
				}
			}
		}
		for a := range n {
			for b := range n {
				assert.Equal(t, rows/n, position[[2]int{a, b}], "n=%d: side %d in position %d", n, a, b)
				if a != b {
					assert.Equal(t, rows/n, follows[[2]int{a, b}], "n=%d: side %d right after side %d", n, b, a)
				}
			}
		}
		assert.Equal(t, balancedOrder(n, 0), balancedOrder(n, rows), "n=%d: the design repeats", n)
	}
}

func plus1(xs []int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = x + 1
	}
	return out
}

// TestDefaultRoundsBalanceTheSides checks that the default rounds cover whole Williams designs of
// the sides there are, so that each side runs in every position and after every other side as
// often as any other.
func TestDefaultRoundsBalanceTheSides(t *testing.T) {
	n := len(SideNames())
	rows := n
	if n%2 == 1 {
		rows = 2 * n
	}
	assert.Zero(t, DefaultConfig().Rounds%rows, "%d rounds for %d sides (a design has %d rows)", DefaultConfig().Rounds, n, rows)
}

// The parked-memory goal (issue: 10,000 unstakes under 120 MB of worker RSS) is judged on a
// run of at least 10,000, strictly under 120,000,000 bytes.
func TestParkGoalJudgedOnTenThousandUnder120MB(t *testing.T) {
	for _, tc := range []struct {
		workflows int
		rss       uint64
		meets     bool
		says      string
	}{
		{10_000, 119_999_999, true, "goal met: worker RSS 120 MB, under 120 MB"},
		{10_000, 120_000_000, false, "goal MISSED: worker RSS 120 MB, not under 120 MB"},
		{12_000, 90_000_000, true, "goal met: worker RSS 90 MB"},
		{9_999, 90_000_000, false, "goal not measured: 9999 parked, the goal is for 10000"},
	} {
		p := ParkReport{Workflows: tc.workflows, After: ProcSample{WorkerRSS: tc.rss}}
		p.judge()
		assert.Equal(t, tc.meets, p.MeetsGoal, "%d at %d bytes", tc.workflows, tc.rss)
		assert.Contains(t, p.verdict(), tc.says)
	}
}

// The parked worker's RSS counts as settled once it has stopped falling (by more than 1 MiB)
// over the window, not while the runtime is still returning memory.
func TestSettledRSSWaitsUntilRSSStopsFalling(t *testing.T) {
	rss := func(mib ...uint64) []ProcSample {
		s := make([]ProcSample, len(mib))
		for i, m := range mib {
			s[i] = ProcSample{WorkerRSS: m << 20}
		}
		return s
	}
	assert.False(t, settledRSS(rss(120, 119, 118), 3), "fewer samples than the window")
	assert.False(t, settledRSS(rss(120, 115, 110, 105), 3), "still falling")
	assert.True(t, settledRSS(rss(120, 100, 100, 100, 99), 3), "fell 1 MiB over the window")
	assert.True(t, settledRSS(rss(100, 101, 103, 102), 3), "rising is settled too")
	assert.False(t, settledRSS(rss(100, 100, 98, 98), 3), "fell 2 MiB over the window")
}
