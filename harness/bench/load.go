package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Stats summarise one load run: N operations at concurrency C.
type Stats struct {
	// Ops is how many operations were started; Errors how many of them failed.
	Ops    int `json:"ops"`
	Errors int `json:"errors"`
	// Concurrency is how many operations ran at once.
	Concurrency int `json:"concurrency"`
	// Wall is the time from the first start to the last end.
	Wall Duration `json:"wall"`
	// OpsPerSec is successful operations per second in steady state: over the middle of the run,
	// from the 10th to the 90th percentile of completion times, leaving out the ramp-up and the
	// tail a few stragglers can stretch. WallOpsPerSec is over the whole wall time.
	OpsPerSec     float64 `json:"opsPerSec"`
	WallOpsPerSec float64 `json:"wallOpsPerSec"`
	// P50, P95 and P99 are end-to-end latency percentiles of the successful operations.
	P50 Duration `json:"p50"`
	P95 Duration `json:"p95"`
	P99 Duration `json:"p99"`
	// FirstError is the first failure seen, for the record.
	FirstError string `json:"firstError,omitempty"`
	// Rounds is how many rounds the operations ran in (see Merge).
	Rounds int `json:"rounds"`
	// CPU is the CPU time each process spent per operation (see CPUPerOp).
	CPU *CPUPerOp `json:"cpuPerOp,omitempty"`
	// ServerCounters is how much each of the dev server's counters grew per operation
	// (Config.ServerMetrics).
	ServerCounters Counters `json:"serverCountersPerOp,omitempty"`
	// Slowest is the slowest successful workflow and where its time went (orchestrated and
	// ceiling sides only).
	Slowest *SlowOp `json:"slowest,omitempty"`

	samples []time.Duration
	good    int
	// steadyOps completed within steadyWall, the middle of the run (see OpsPerSec).
	steadyOps  int
	steadyWall time.Duration
}

// SlowOp names a workflow and the longest pause between two consecutive events of its history.
type SlowOp struct {
	WorkflowID string   `json:"workflowId"`
	Took       Duration `json:"took"`
	LongestGap Duration `json:"longestGap"`
	Between    string   `json:"between"`

	runID string
}

// CPUPerOp is CPU time per operation, by process: it does not depend on how busy the machine
// is otherwise, unlike throughput and latency.
type CPUPerOp struct {
	// Server is the Temporal dev server.
	Server Duration `json:"server"`
	// Bench is the benchmark's own process: the worker, the sandbox's HTTP service, the bare
	// client and the load generator.
	Bench Duration `json:"bench"`
	// Runtime is the Solana runtime (node).
	Runtime Duration `json:"runtime"`
}

// Merge combines the stats of several rounds of the same side: operations and errors add up,
// throughput is successes over the summed wall time, percentiles are over every sample, and
// the slowest operation is the slowest of all.
func Merge(rounds ...Stats) Stats {
	var out Stats
	var wall time.Duration
	for _, r := range rounds {
		out.Ops += r.Ops
		out.Errors += r.Errors
		out.Concurrency = r.Concurrency
		out.good += r.good
		out.steadyOps += r.steadyOps
		out.steadyWall += r.steadyWall
		out.samples = append(out.samples, r.samples...)
		wall += r.Wall.Std()
		if out.FirstError == "" {
			out.FirstError = r.FirstError
		}
		out.Rounds += max(r.Rounds, 1)
		if r.Slowest != nil && (out.Slowest == nil || r.Slowest.Took > out.Slowest.Took) {
			out.Slowest = r.Slowest
		}
	}
	out.Wall = Duration(wall)
	var cpu CPUPerOp
	var withCPU, withCounters int
	for _, r := range rounds {
		if r.CPU != nil {
			cpu.Server += r.CPU.Server * Duration(r.Ops)
			cpu.Bench += r.CPU.Bench * Duration(r.Ops)
			cpu.Runtime += r.CPU.Runtime * Duration(r.Ops)
			withCPU += r.Ops
		}
		if r.ServerCounters != nil {
			if out.ServerCounters == nil {
				out.ServerCounters = Counters{}
			}
			for k, v := range r.ServerCounters {
				out.ServerCounters[k] += v * float64(r.Ops)
			}
			withCounters += r.Ops
		}
	}
	for k := range out.ServerCounters {
		out.ServerCounters[k] /= float64(withCounters)
	}
	if withCPU > 0 {
		cpu.Server /= Duration(withCPU)
		cpu.Bench /= Duration(withCPU)
		cpu.Runtime /= Duration(withCPU)
		out.CPU = &cpu
	}
	if wall > 0 {
		out.WallOpsPerSec = float64(out.good) / wall.Seconds()
	}
	out.OpsPerSec = out.WallOpsPerSec
	if out.steadyWall > 0 {
		out.OpsPerSec = float64(out.steadyOps) / out.steadyWall.Seconds()
	}
	out.P50 = Duration(Percentile(out.samples, 50))
	out.P95 = Duration(Percentile(out.samples, 95))
	out.P99 = Duration(Percentile(out.samples, 99))
	return out
}

// Duration is a time.Duration that marshals to JSON as milliseconds (a number).
type Duration time.Duration

// MarshalJSON renders the duration in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%.3f", float64(d)/float64(time.Millisecond)), nil
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// RunLoad runs op n times with at most c running at once and measures each. op receives the
// operation's index, 0 to n-1.
func RunLoad(ctx context.Context, n, c int, op func(ctx context.Context, i int) error) Stats {
	if c < 1 {
		c = 1
	}
	lat := make([]time.Duration, n)
	ended := make([]time.Duration, n)
	ok := make([]bool, n)
	var next atomic.Int64
	var mu sync.Mutex
	var errs int
	var first string
	var wg sync.WaitGroup
	start := time.Now()
	for range min(c, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				err := op(ctx, i)
				lat[i] = time.Since(t0)
				ended[i] = time.Since(start)
				if err != nil {
					mu.Lock()
					errs++
					if first == "" {
						first = err.Error()
					}
					mu.Unlock()
					continue
				}
				ok[i] = true
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	var good, ends []time.Duration
	for i, d := range lat {
		if ok[i] {
			good = append(good, d)
			ends = append(ends, ended[i])
		}
	}
	s := Stats{Ops: n, Errors: errs, Concurrency: c, Wall: Duration(wall), FirstError: first, Rounds: 1, good: len(good), samples: good}
	if ctx.Err() != nil {
		s.Errors = n - len(good)
	}
	if wall > 0 {
		s.WallOpsPerSec = float64(len(good)) / wall.Seconds()
	}
	s.OpsPerSec = s.WallOpsPerSec
	s.steadyOps, s.steadyWall = steady(ends)
	if s.steadyWall > 0 {
		s.OpsPerSec = float64(s.steadyOps) / s.steadyWall.Seconds()
	}
	s.P50, s.P95, s.P99 = Duration(Percentile(good, 50)), Duration(Percentile(good, 95)), Duration(Percentile(good, 99))
	return s
}

// steady returns how many operations completed between the 10th and the 90th percentile of the
// completion times ends, and that interval; none for fewer than ten operations.
func steady(ends []time.Duration) (int, time.Duration) {
	if len(ends) < 10 {
		return 0, 0
	}
	s := slices.Clone(ends)
	slices.Sort(s)
	lo, hi := len(s)/10, len(s)-1-len(s)/10
	return hi - lo, s[hi] - s[lo]
}

// Percentile returns the p-th percentile (nearest rank) of ds; zero for no samples. ds is not
// modified.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}
