package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/cluster"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// ClusterConfig configures the cluster mode: stakes through 1, 2, 4... worker processes on the
// real Temporal server on PostgreSQL (harness/cluster), and the same on the dev server, in one run.
type ClusterConfig struct {
	// TemporalCLI is the pinned CLI (the dev server, and the cluster's namespace script);
	// ServerDir the real server's directory (scripts/tools.sh temporal-server).
	TemporalCLI, ServerDir string
	// WorkerBin and StarterBin are the cmd/worker and cmd/starter binaries.
	WorkerBin, StarterBin string
	// Workers are the worker-process counts measured, each on both servers.
	Workers []int
	// Ops stakes are measured at Concurrency at each count, after Warmup.
	Ops, Concurrency, Warmup int
	// HistoryShards is the cluster's number of history shards.
	HistoryShards int
	// Stakers share the stakes; each stakes Lamports.
	Stakers  int
	Lamports uint64
	// SlotDuration, FinalizationDepth, BlockhashValidity and ConfirmPoll are the chain clock and
	// the confirmation poll, as in Config.
	SlotDuration      time.Duration
	FinalizationDepth uint64
	BlockhashValidity uint64
	ConfirmPoll       time.Duration
	// Dir holds the clusters' files.
	Dir    string
	Logger *zap.Logger `json:"-"`
}

// DefaultClusterConfig is the cluster mode's default: a small run (a few minutes on 2 cores).
func DefaultClusterConfig() ClusterConfig {
	d := DefaultConfig()
	return ClusterConfig{
		Workers: []int{1, 2, 4}, Ops: 200, Concurrency: 16, Warmup: 10, HistoryShards: 4,
		Stakers: d.Stakers, Lamports: d.Lamports, SlotDuration: d.SlotDuration,
		FinalizationDepth: d.FinalizationDepth, BlockhashValidity: d.BlockhashValidity, ConfirmPoll: d.ConfirmPoll,
	}
}

// Server kinds of the cluster mode.
const (
	ServerDev     = "dev server (memory)"
	ServerCluster = "Temporal server on PostgreSQL"
)

// ClusterRow is one measurement: stakes through Workers worker processes on Server.
type ClusterRow struct {
	Server  string `json:"server"`
	Workers int    `json:"workers"`
	Stats   Stats  `json:"stats"`
	// CPU is the CPU time per stake of each part (nil when /proc could not be read).
	CPU *ClusterCPU `json:"cpuPerOp,omitempty"`
}

// ClusterCPU is CPU time per operation by part.
type ClusterCPU struct {
	// Server is the Temporal server (or the dev server); Postgres every PostgreSQL process.
	Server   Duration `json:"server"`
	Postgres Duration `json:"postgres"`
	// Workers is all worker processes together.
	Workers Duration `json:"workers"`
	// Bench is this process (the sandbox's HTTP service and the load generator); Runtime the
	// Solana runtime.
	Bench   Duration `json:"bench"`
	Runtime Duration `json:"runtime"`
}

// ClusterReport is the cluster mode's result.
type ClusterReport struct {
	StartedAt time.Time     `json:"startedAt"`
	NumCPU    int           `json:"numCpu"`
	Settings  ClusterConfig `json:"settings"`
	Rows      []ClusterRow  `json:"rows"`
	Total     Duration      `json:"total"`
}

// RunCluster measures stakes on the dev server and on the cluster with each worker count.
func RunCluster(ctx context.Context, cfg ClusterConfig) (*ClusterReport, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if len(cfg.Workers) == 0 || cfg.Ops < 1 || cfg.Concurrency < 1 || cfg.Stakers < 1 {
		return nil, fmt.Errorf("bench: cluster mode needs worker counts, operations, a concurrency and stakers")
	}
	slices.Sort(cfg.Workers)
	rep := &ClusterReport{StartedAt: time.Now().UTC(), NumCPU: runtime.NumCPU(), Settings: cfg}
	for _, server := range []string{ServerDev, ServerCluster} {
		rows, err := runClusterServer(ctx, cfg, server)
		rep.Rows = append(rep.Rows, rows...)
		if err != nil {
			rep.Total = Duration(time.Since(rep.StartedAt))
			return rep, err
		}
	}
	rep.Total = Duration(time.Since(rep.StartedAt))
	return rep, nil
}

func runClusterServer(ctx context.Context, cfg ClusterConfig, server string) ([]ClusterRow, error) {
	log := cfg.Logger.With(zap.String("server", server))
	most := cfg.Workers[len(cfg.Workers)-1]
	ceil := func(n int) int { return (n + cfg.Stakers - 1) / cfg.Stakers }
	perStaker := len(cfg.Workers) * (ceil(cfg.Ops) + ceil(cfg.Warmup))
	dir := filepath.Join(cfg.Dir, strings.Fields(server)[0])
	c, err := cluster.Start(ctx, cluster.Options{
		Dir: dir, DevServer: server == ServerDev, ServerDir: cfg.ServerDir, TemporalCLI: cfg.TemporalCLI,
		WorkerBin: cfg.WorkerBin, StarterBin: cfg.StarterBin, Workers: most, HistoryShards: cfg.HistoryShards,
		Runtime: solanart.Options{
			SlotDuration: cfg.SlotDuration, FinalizationDepth: cfg.FinalizationDepth, BlockhashValidity: cfg.BlockhashValidity,
			SlotsPerEpoch: 100_000_000, // stakes need no epoch turn
		},
		Stakers: cfg.Stakers, StakerLamports: uint64(perStaker)*(cfg.Lamports+10_000) + 1_000_000_000,
		WorkerLogLevel: "warn", Logger: log.Named("cluster"),
	})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	serverPID, err := serverPID(c, cfg, server)
	if err != nil {
		return nil, err
	}
	var rows []ClusterRow
	stake := func(phase string) func(ctx context.Context, i int) error {
		return func(ctx context.Context, i int) error {
			in := wfsolana.StakeInput{
				Network: "testnet", Staker: c.Stack.Stakers[i%len(c.Stack.Stakers)].String(), Lamports: cfg.Lamports,
				Options: workflows.Options{ConfirmPollInterval: cfg.ConfirmPoll},
			}
			opts := starter.StartOptions(fmt.Sprintf("bench-cluster-%s-%d", phase, i), wfsolana.StakeSummary(in), benchQueue(wfsolana.Module), wfsolana.StakeAttributes(in)...)
			run, err := c.Stack.Client.ExecuteWorkflow(ctx, opts, wfsolana.StakeWorkflow, in)
			if err != nil {
				return err
			}
			var res wfsolana.Result
			return run.Get(ctx, &res)
		}
	}
	for _, n := range cfg.Workers {
		for i, w := range c.Workers {
			switch {
			case i >= n && w.Running():
				w.Stop(10 * time.Second)
			case i < n && !w.Running():
				if err := w.Start(ctx); err != nil {
					return rows, err
				}
			}
		}
		warm := RunLoad(ctx, cfg.Warmup, min(cfg.Concurrency, max(cfg.Warmup, 1)), stake(fmt.Sprintf("warm%d", n)))
		if warm.Errors > 0 {
			return rows, fmt.Errorf("bench: %s, %d workers: warm-up failed: %s", server, n, warm.FirstError)
		}
		before := sampleCluster(c, serverPID)
		s := RunLoad(ctx, cfg.Ops, cfg.Concurrency, stake(fmt.Sprintf("w%d", n)))
		after := sampleCluster(c, serverPID)
		row := ClusterRow{Server: server, Workers: n, Stats: s, CPU: after.perOp(before, s.Ops-s.Errors)}
		rows = append(rows, row)
		log.Info("Measured", zap.Int("workers", n), zap.Float64("opsPerSec", s.OpsPerSec), zap.Duration("p50", s.P50.Std()),
			zap.Int("errors", s.Errors))
		if ctx.Err() != nil {
			return rows, ctx.Err()
		}
	}
	return rows, nil
}

// serverPID is the Temporal server's process: the cluster's, or the stack's dev server (a child
// of this process named as the CLI).
func serverPID(c *cluster.Cluster, cfg ClusterConfig, server string) (int, error) {
	if server == ServerCluster {
		return c.Server.PID(), nil
	}
	return ChildByName(os.Getpid(), filepath.Base(cfg.TemporalCLI))
}

type clusterSample struct {
	server, postgres, workers, bench, runtime time.Duration
	ok                                        bool
}

// sampleCluster reads the CPU time of every part of the cluster from /proc.
func sampleCluster(c *cluster.Cluster, serverPID int) clusterSample {
	var s clusterSample
	s.ok = true
	read := func(pid int) time.Duration {
		d, e := CPUTime(pid)
		if e != nil {
			s.ok = false
		}
		return d
	}
	s.server = read(serverPID)
	s.bench = read(os.Getpid())
	node, err := ChildByName(os.Getpid(), "node")
	if err != nil {
		s.ok = false
	} else {
		s.runtime = read(node)
	}
	for _, w := range c.Workers {
		if pid := w.PID(); pid != 0 {
			s.workers += read(pid)
		}
	}
	if pg := c.PostgresPID(); pg != 0 {
		s.postgres = read(pg)
		for _, child := range childrenOf(pg) {
			if d, err := CPUTime(child); err == nil {
				s.postgres += d
			}
		}
	}
	return s
}

// perOp divides the CPU used since before over ops; nil when either sample failed. PostgreSQL's
// backends come and go with connections: one that ended between the samples is not counted.
func (s clusterSample) perOp(before clusterSample, ops int) *ClusterCPU {
	if !s.ok || !before.ok || ops == 0 {
		return nil
	}
	n := time.Duration(ops)
	return &ClusterCPU{
		Server: Duration((s.server - before.server) / n), Postgres: Duration(max(s.postgres-before.postgres, 0) / n),
		Workers: Duration((s.workers - before.workers) / n), Bench: Duration((s.bench - before.bench) / n),
		Runtime: Duration((s.runtime - before.runtime) / n),
	}
}

// childrenOf lists the direct children of parent.
func childrenOf(parent int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if _, ppid, ok := parseStat(stat); ok && ppid == parent {
			out = append(out, pid)
		}
	}
	return out
}

// Markdown renders the report as a table.
func (r *ClusterReport) Markdown() string {
	var b strings.Builder
	s := r.Settings
	fmt.Fprintf(&b, "## Cluster benchmark (%s, %d CPUs)\n\n", r.StartedAt.Format(time.RFC3339), r.NumCPU)
	fmt.Fprintf(&b, "%d stakes at concurrency %d per row after %d warm-up, from %d stakers; worker processes with 8 pollers each; "+
		"chain clock: slot %s, finalization depth %d; %d history shards on the cluster. The dev server runs with the local stack's "+
		"dynamic config, the cluster with deploy/temporal/dynamicconfig.yaml. Took %s.\n\n",
		s.Ops, s.Concurrency, s.Warmup, s.Stakers, s.SlotDuration, s.FinalizationDepth, s.HistoryShards, r.Total.Std().Round(time.Second))
	b.WriteString("| server | workers | stakes/s | p50 | p95 | errors | CPU ms/op: server | PostgreSQL | workers | bench process | runtime |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range r.Rows {
		cells := "– | – | – | – | –"
		if c := row.CPU; c != nil {
			cells = fmt.Sprintf("%s | %s | %s | %s | %s", ms(c.Server), ms(c.Postgres), ms(c.Workers), ms(c.Bench), ms(c.Runtime))
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %s | %s | %d | %s |\n", row.Server, row.Workers, row.Stats.OpsPerSec,
			ms(row.Stats.P50), ms(row.Stats.P95), row.Stats.Errors, cells)
	}
	return b.String()
}

// Write stores the report as cluster.json and cluster.md in dir.
func (r *ClusterReport) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cluster.md"), []byte(r.Markdown()), 0o644)
}
