package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/cli"
)

// Report is the outcome of one benchmark run.
type Report struct {
	// StartedAt is when the run began; GoVersion and NumCPU describe the benchmark's process.
	StartedAt time.Time `json:"startedAt"`
	GoVersion string    `json:"goVersion"`
	NumCPU    int       `json:"numCpu"`
	// Settings are the knobs the run used.
	Settings Settings `json:"settings"`
	// Modes holds one entry per server mode measured.
	Modes []ModeReport `json:"modes"`
	// Park is the parking measurement (nil when not run).
	Park *ParkReport `json:"park,omitempty"`
	// Polygon is the Polygon delegate measured orchestrated and bare, Celestia the Celestia
	// delegate, Hyperliquid the Hyperliquid withdrawal and EigenLayer the EigenLayer checkpoint
	// (each nil when not run).
	Polygon     *ChainReport      `json:"polygon,omitempty"`
	Celestia    *ChainReport      `json:"celestia,omitempty"`
	Hyperliquid *ChainReport      `json:"hyperliquid,omitempty"`
	EigenLayer  *CheckpointReport `json:"eigenlayer,omitempty"`
	// Phases lists how long each phase took, in order.
	Phases []Phase  `json:"phases"`
	Total  Duration `json:"total"`
	mu     sync.Mutex
}

// Settings are the knobs the run used; each field is the Config field of the same name.
type Settings struct {
	Concurrency                []int    `json:"concurrency"`
	Sides                      []string `json:"sides,omitempty"`
	Ops                        int      `json:"ops"`
	SerialOps                  int      `json:"serialOps"`
	Warmup                     int      `json:"warmup"`
	Rounds                     int      `json:"rounds"`
	Drain                      Duration `json:"drain"`
	ServerMetrics              bool     `json:"serverMetrics"`
	Pollers                    int      `json:"pollers"`
	StickyCache                int      `json:"stickyCache"`
	MaxConcurrentActivities    int      `json:"maxConcurrentActivities"`
	MaxConcurrentWorkflowTasks int      `json:"maxConcurrentWorkflowTasks"`
	SlotDuration               Duration `json:"slotDuration"`
	FinalizationDepth          uint64   `json:"finalizationDepth"`
	BlockhashValidity          uint64   `json:"blockhashValidity"`
	ConfirmPoll                Duration `json:"confirmPoll"`
	Stakers                    int      `json:"stakers"`
	Lamports                   uint64   `json:"lamports"`
	// DynamicConfig are the dev server's dynamic config values; file mode adds
	// stack.SQLitePragmas.
	DynamicConfig []string `json:"dynamicConfig"`
	EagerStart    bool     `json:"eagerStart"`
	// GRPCCompression is the compression of the worker's and the client's gRPC to Temporal.
	GRPCCompression string `json:"grpcCompression"`
}

func settingsOf(c Config) Settings {
	return Settings{
		Concurrency: c.Concurrency, Sides: c.Sides, Ops: c.Ops, SerialOps: c.SerialOps, Warmup: c.Warmup, Rounds: c.Rounds, Drain: Duration(c.Drain), ServerMetrics: c.ServerMetrics,
		Pollers: c.Pollers, StickyCache: c.StickyCache,
		MaxConcurrentActivities: c.MaxConcurrentActivities, MaxConcurrentWorkflowTasks: c.MaxConcurrentWorkflowTasks,
		SlotDuration: Duration(c.SlotDuration), FinalizationDepth: c.FinalizationDepth, BlockhashValidity: c.BlockhashValidity,
		ConfirmPoll: Duration(c.ConfirmPoll), Stakers: c.Stakers, Lamports: c.Lamports,
		DynamicConfig:   append(append([]string{}, stack.BaseServerDynamicConfig...), c.ServerDynamicConfig...),
		EagerStart:      c.EagerStart,
		GRPCCompression: cmp.Or(c.GRPCCompression, cli.CompressionNone),
	}
}

// ModeReport holds the runs on one server mode.
type ModeReport struct {
	// Mode is ModeMemory or ModeFile; Runs holds one entry per concurrency.
	Mode string      `json:"mode"`
	Runs []RunReport `json:"runs"`
	// ServerRSS is the dev server's resident set size after the runs.
	ServerRSS uint64 `json:"serverRssBytes"`
	// LoadBefore and LoadAfter are the machine's load averages (1, 5, 15 minutes) around the
	// runs: the benchmark shares the machine with whatever else runs on it.
	LoadBefore string `json:"loadBefore"`
	LoadAfter  string `json:"loadAfter"`
}

// RunReport is every side at one concurrency, with the ratios the targets are stated in.
type RunReport struct {
	// Concurrency is how many operations each side ran at once.
	Concurrency int `json:"concurrency"`
	// Orchestrated ran StakeWorkflow; Bare the same work without Temporal.
	Orchestrated Stats `json:"orchestrated"`
	// Ceiling is StakeWorkflow's own code with activities that do nothing (RegisterCeiling): the
	// stake's shape, and what it writes for the Web UI, at no cost of the service or the chain.
	Ceiling Stats `json:"ceiling"`
	// Encrypted is the orchestrated stake with the payload codec on (its worker and its client).
	Encrypted Stats `json:"encrypted"`
	Bare      Stats `json:"bare"`
	// Throughput ratios (orchestrated ops/s over the other side's) and p50 latency ratios
	// (orchestrated p50 over the other side's).
	ThroughputVsCeiling float64 `json:"throughputVsCeiling"`
	// ThroughputVsCeilingRounds and P50VsCeilingRounds are the same ratios round by round: each
	// pairs two runs close in time, so their spread shows how much the machine moved.
	ThroughputVsCeilingRounds []float64 `json:"throughputVsCeilingRounds,omitempty"`
	P50VsCeilingRounds        []float64 `json:"p50VsCeilingRounds,omitempty"`
	// CPUVsCeiling is the ceiling's CPU per operation (server, benchmark process and runtime)
	// over the orchestrated side's: the throughput ratio when CPU is the limit, steadier than
	// the measured rates.
	CPUVsCeiling     float64 `json:"cpuVsCeiling"`
	ThroughputVsBare float64 `json:"throughputVsBare"`
	P50VsCeiling     float64 `json:"p50VsCeiling"`
	// P50OverheadVsCeiling is the orchestrated p50 less the bare client's (the service calls and
	// the chain's time, which no orchestration removes) over the ceiling's p50.
	P50OverheadVsCeiling float64 `json:"p50OverheadVsCeiling"`
	P50VsBare            float64 `json:"p50VsBare"`
	// What the payload codec costs: the encrypted side's throughput over the orchestrated side's,
	// its p50 over theirs, and the orchestrated side's CPU per operation over its own.
	EncryptedThroughput float64 `json:"encryptedThroughput"`
	EncryptedP50        float64 `json:"encryptedP50"`
	EncryptedCPU        float64 `json:"encryptedCpu"`
	// Breakdowns say where the orchestrated side's and the ceiling's operations spent their time
	// (concurrency 1 only).
	Breakdowns []SideBreakdown `json:"breakdowns,omitempty"`
}

// SideBreakdown is one side's Breakdown.
type SideBreakdown struct {
	Side string `json:"side"`
	Breakdown
}

func (r *RunReport) ratios() {
	r.ThroughputVsCeiling = ratio(r.Orchestrated.OpsPerSec, r.Ceiling.OpsPerSec)
	r.CPUVsCeiling = cpuRatio(r.Ceiling.CPU, r.Orchestrated.CPU)
	r.ThroughputVsBare = ratio(r.Orchestrated.OpsPerSec, r.Bare.OpsPerSec)
	r.P50VsCeiling = ratio(float64(r.Orchestrated.P50), float64(r.Ceiling.P50))
	r.P50VsBare = ratio(float64(r.Orchestrated.P50), float64(r.Bare.P50))
	r.P50OverheadVsCeiling = ratio(float64(r.Orchestrated.P50-r.Bare.P50), float64(r.Ceiling.P50))
	r.EncryptedThroughput = ratio(r.Encrypted.OpsPerSec, r.Orchestrated.OpsPerSec)
	r.EncryptedP50 = ratio(float64(r.Encrypted.P50), float64(r.Orchestrated.P50))
	r.EncryptedCPU = cpuRatio(r.Orchestrated.CPU, r.Encrypted.CPU)
}

// cpuRatio is a's CPU per operation over b's, 0 when either is unknown.
func cpuRatio(a, b *CPUPerOp) float64 {
	if a == nil || b == nil {
		return 0
	}
	return ratio(a.total().Std().Seconds(), b.total().Std().Seconds())
}

// byRound sets the round-by-round ratios from each side's rounds (rounds[j] are sides[j]'s).
func (r *RunReport) byRound(sides []side, rounds [][]Stats) {
	orch, ceil := slices.IndexFunc(sides, func(s side) bool { return s.name == "orchestrated" }),
		slices.IndexFunc(sides, func(s side) bool { return s.name == "ceiling" })
	if orch < 0 || ceil < 0 {
		return
	}
	for k := range min(len(rounds[orch]), len(rounds[ceil])) {
		o, c := rounds[orch][k], rounds[ceil][k]
		r.ThroughputVsCeilingRounds = append(r.ThroughputVsCeilingRounds, ratio(o.OpsPerSec, c.OpsPerSec))
		r.P50VsCeilingRounds = append(r.P50VsCeilingRounds, ratio(float64(o.P50), float64(c.P50)))
	}
}

// spread renders the lowest and highest of ratios, or nothing when there are none.
func spread(ratios []float64) string {
	if len(ratios) < 2 {
		return ""
	}
	return fmt.Sprintf(" (rounds %.2f–%.2f)", slices.Min(ratios), slices.Max(ratios))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Phase is one timed part of the run.
type Phase struct {
	// Name says what ran; Took how long it took.
	Name string   `json:"name"`
	Took Duration `json:"took"`
}

type phaseHandle struct {
	rep *Report
	idx int
	t0  time.Time
}

func (r *Report) phase(name string) *phaseHandle {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Phases = append(r.Phases, Phase{Name: name})
	return &phaseHandle{rep: r, idx: len(r.Phases) - 1, t0: time.Now()}
}

func (p *phaseHandle) end() {
	p.rep.mu.Lock()
	defer p.rep.mu.Unlock()
	p.rep.Phases[p.idx].Took = Duration(time.Since(p.t0))
}

func (p *phaseHandle) took() time.Duration {
	p.rep.mu.Lock()
	defer p.rep.mu.Unlock()
	return p.rep.Phases[p.idx].Took.Std()
}

// Markdown renders the report as markdown tables.
func (r *Report) Markdown() string {
	var b strings.Builder
	s := r.Settings
	fmt.Fprintf(&b, "## Benchmark (%s, %d CPUs, %s)\n\n", r.StartedAt.Format(time.RFC3339), r.NumCPU, r.GoVersion)
	fmt.Fprintf(&b, "Chain clock: slot %s, finalization depth %d slots, blockhash validity %d slots (mainnet: 400ms, 32, 150); "+
		"confirmation poll %s. Worker: %d pollers, sticky cache %d, execution slots %s/%s (activities/workflow tasks). "+
		"Ops per side: %d in %d alternating rounds, %s drain after each Temporal side's round; at C=1, %d interleaved one by one in a shuffled order, grouped in as many rounds; after %d warm-up. Server dynamic config: %s; eager start: %t; gRPC compression: %s.\n\n",
		s.SlotDuration.Std(), s.FinalizationDepth, s.BlockhashValidity, s.ConfirmPoll.Std(), s.Pollers, s.StickyCache,
		orDefault(s.MaxConcurrentActivities), orDefault(s.MaxConcurrentWorkflowTasks), s.Ops, s.Rounds, s.Drain.Std(), s.SerialOps, s.Warmup,
		strings.Join(s.DynamicConfig, ", "), s.EagerStart, s.GRPCCompression)
	if len(s.Sides) > 0 {
		fmt.Fprintf(&b, "Only these sides were measured: %s.\n\n", strings.Join(s.Sides, ", "))
	}
	b.WriteString("| server | C | side | ops/s | p50 | p95 | p99 | errors | CPU ms/op: server | bench process | runtime |\n" +
		"|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range r.Modes {
		for _, run := range m.Runs {
			for _, row := range run.rows() {
				if row.s.Ops == 0 {
					continue // a side left out (Config.Sides)
				}
				fmt.Fprintf(&b, "| %s | %d | %s | %.1f | %s | %s | %s | %d | %s |\n", m.Mode, run.Concurrency, row.name,
					row.s.OpsPerSec, ms(row.s.P50), ms(row.s.P95), ms(row.s.P99), row.s.Errors, cpuCells(row.s.CPU))
			}
		}
	}
	for _, m := range r.Modes {
		fmt.Fprintf(&b, "\n%s server: load average %s before the runs, %s after; server RSS after the runs %s.\n",
			m.Mode, m.LoadBefore, m.LoadAfter, mib(m.ServerRSS))
	}
	b.WriteString("\nThe ceiling is the stake workflow's own code with activities that do nothing, registered under the stake's names: " +
		"the stake's shape and what it writes for the Web UI. The encrypted side is the stake with the payload codec on (worker and client).\n\n" +
		"| server | C | throughput orch/ceiling | CPU per op ceiling/orch | p50 orch/ceiling | p50 (orch - bare)/ceiling | throughput orch/bare | p50 orch/bare | codec: throughput enc/orch | p50 enc/orch | CPU per op orch/enc |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range r.Modes {
		for _, run := range m.Runs {
			fmt.Fprintf(&b, "| %s | %d | %.2f%s | %.2f | %.2f%s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", m.Mode, run.Concurrency,
				run.ThroughputVsCeiling, spread(run.ThroughputVsCeilingRounds), run.CPUVsCeiling,
				run.P50VsCeiling, spread(run.P50VsCeilingRounds), run.P50OverheadVsCeiling,
				run.ThroughputVsBare, run.P50VsBare,
				run.EncryptedThroughput, run.EncryptedP50, run.EncryptedCPU)
		}
	}
	for _, m := range r.Modes {
		for _, run := range m.Runs {
			writeBreakdowns(&b, m.Mode, run)
		}
	}
	if r.Settings.ServerMetrics {
		b.WriteString("\nServer work per operation, from the dev server's counters (through the drain after each round):\n\n" +
			"| server | C | side | workflow tasks | activity tasks | history writes | visibility writes | timer tasks | persistence requests |\n" +
			"|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
		for _, m := range r.Modes {
			for _, run := range m.Runs {
				for _, row := range run.rows() {
					if row.s.ServerCounters == nil {
						continue
					}
					w := row.s.ServerCounters.Work()
					fmt.Fprintf(&b, "| %s | %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", m.Mode, run.Concurrency, row.name,
						w.WorkflowTasks, w.ActivityTasks, w.HistoryWrites, w.VisibilityWrites, w.TimerTasks, w.PersistenceRequests)
				}
			}
		}
	}
	b.WriteString(r.Polygon.markdown())
	b.WriteString(r.Celestia.markdown())
	b.WriteString(r.Hyperliquid.markdown())
	b.WriteString(r.EigenLayer.markdown())
	if p := r.Park; p != nil {
		fmt.Fprintf(&b, "\nParked %d UnstakeWorkflows at the deactivation wait (%s server, the worker binary in a process of its own, sticky cache %d, %.1f parked/s):\n\n",
			p.Workflows, p.Mode, p.StickyCache, p.StartRate)
		b.WriteString("| | worker RSS | worker heap in use | goroutines | server RSS |\n|---|---:|---:|---:|---:|\n")
		for _, row := range []struct {
			name string
			s    ProcSample
		}{{"before", p.Before}, {"as the last parked", p.Parked}, {fmt.Sprintf("parked, settled (%s later)", p.SettleTook.Std().Round(time.Second)), p.After}} {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s |\n", row.name, mib(row.s.WorkerRSS), mib(row.s.WorkerHeap), row.s.Goroutines, mib(row.s.ServerRSS))
		}
		fmt.Fprintf(&b, "\n%s.\n", p.verdict())
	}
	b.WriteString("\n| phase | took |\n|---|---:|\n")
	for _, ph := range r.Phases {
		fmt.Fprintf(&b, "| %s | %s |\n", ph.Name, ph.Took.Std().Round(100*time.Millisecond))
	}
	fmt.Fprintf(&b, "| total | %s |\n", r.Total.Std().Round(100*time.Millisecond))
	return b.String()
}

// writeBreakdowns renders the run's breakdowns side by side, one column per side, phases in the
// order the first side has them (a phase a side lacks reads "-"), and with two sides the first
// less the second.
func writeBreakdowns(b *strings.Builder, mode string, run RunReport) {
	if len(run.Breakdowns) == 0 {
		return
	}
	fmt.Fprintf(b, "\nWhere the time goes at C=%d, %s server: medians over the histories of", run.Concurrency, mode)
	for i, sb := range run.Breakdowns {
		fmt.Fprintf(b, "%s %d %s operations", map[bool]string{true: ",", false: ""}[i > 0], sb.Ops, sb.Side)
	}
	b.WriteString(", by the server's event times; the phases add up to about the total, the time from start event to completion event.\n\n| phase |")
	for _, sb := range run.Breakdowns {
		fmt.Fprintf(b, " %s |", sb.Side)
	}
	two := len(run.Breakdowns) == 2
	cols := len(run.Breakdowns)
	if two {
		fmt.Fprintf(b, " %s − %s |", run.Breakdowns[0].Side, run.Breakdowns[1].Side)
		cols++
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", cols) + "\n")
	var names []string
	for _, sb := range run.Breakdowns {
		for _, p := range sb.Phases {
			if !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
			}
		}
	}
	names = unaccountedLast(names) // whichever side named it first
	ms := func(d Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	for _, name := range names {
		fmt.Fprintf(b, "| %s |", name)
		var got []Duration
		for _, sb := range run.Breakdowns {
			i := slices.IndexFunc(sb.Phases, func(p PhaseTime) bool { return p.Name == name })
			if i < 0 {
				b.WriteString(" - |")
				got = append(got, 0)
				continue
			}
			fmt.Fprintf(b, " %s |", ms(sb.Phases[i].Median))
			got = append(got, sb.Phases[i].Median)
		}
		if two {
			fmt.Fprintf(b, " %s |", ms(got[0]-got[1]))
		}
		b.WriteString("\n")
	}
	b.WriteString("| total (median) |")
	for _, sb := range run.Breakdowns {
		fmt.Fprintf(b, " %s |", ms(sb.Total))
	}
	if two {
		fmt.Fprintf(b, " %s |", ms(run.Breakdowns[0].Total-run.Breakdowns[1].Total))
	}
	b.WriteString("\n")
}

// sideRow is one side's results, named as the tables name it.
type sideRow struct {
	name string
	s    Stats
}

func (r RunReport) rows() []sideRow {
	return []sideRow{
		{"orchestrated", r.Orchestrated}, {"ceiling", r.Ceiling},
		{"orchestrated, payloads encrypted", r.Encrypted}, {"bare client", r.Bare},
	}
}

// total is the CPU of every process per operation.
func (c *CPUPerOp) total() Duration { return c.Server + c.Bench + c.Runtime }

func cpuCells(c *CPUPerOp) string {
	if c == nil {
		return "- | - | -"
	}
	f := func(d Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }
	return f(c.Server) + " | " + f(c.Bench) + " | " + f(c.Runtime)
}

func orDefault(n int) string {
	if n == 0 {
		return "default"
	}
	return fmt.Sprint(n)
}

func ms(d Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func mib(n uint64) string {
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// Write writes the report as bench.json and bench.md into dir, creating it.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "bench.md"), []byte(r.Markdown()), 0o644)
}
