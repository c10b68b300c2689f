package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/bench"
	"github.com/stakeflow/stakeflow/internal/cli"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Config is the command's configuration: the benchmark's own plus where results go.
type Config struct {
	Bench       bench.Config
	Out         string
	Modes       cli.StringList
	Concurrency string
	Sides       cli.StringList
	// DynamicConfig are extra dev-server dynamic config values.
	DynamicConfig cli.StringList
	KeepDir       bool
	LogLevel      string
	// Cluster runs the cluster mode instead (ClusterBench).
	Cluster        bool
	ClusterBench   bench.ClusterConfig
	ClusterWorkers string
	// CPUProfile, when set, receives a CPU profile of the benchmark's own process (worker,
	// sandbox service, bare client) over the whole run.
	CPUProfile string
}

func (c *Config) register(fs *flag.FlagSet) {
	d := bench.DefaultConfig()
	b := &c.Bench
	fs.StringVar(&b.TemporalCLI, "temporal-cli", os.Getenv("TEMPORAL_CLI"), "Temporal CLI binary (default $TEMPORAL_CLI)")
	fs.StringVar(&c.Out, "out", ".artifacts/bench", "directory for bench.json and bench.md")
	fs.Var(&c.Modes, "server", "server modes to measure, comma-separated: memory, file (default memory)")
	fs.StringVar(&c.Concurrency, "concurrency", joinInts(d.Concurrency), "concurrencies, comma-separated")
	fs.Var(&c.Sides, "sides", "measure only these sides, comma-separated: "+strings.Join(bench.SideNames(), ", ")+" (default all)")
	fs.IntVar(&b.Ops, "n", d.Ops, "operations per side at each concurrency above 1")
	fs.IntVar(&b.SerialOps, "n-serial", d.SerialOps, "operations per side at concurrency 1")
	fs.IntVar(&b.Warmup, "warmup", d.Warmup, "warm-up operations per side on each stack")
	fs.IntVar(&b.Rounds, "rounds", d.Rounds, "rounds each side's operations are split into, alternating between sides (at C=1 operations interleave one by one; rounds group them)")
	fs.IntVar(&b.Park, "park", d.Park, "UnstakeWorkflows to park at the deactivation wait (0: skip)")
	fs.StringVar(&b.ParkMode, "park-server", d.ParkMode, "server mode the workflows are parked on")
	fs.IntVar(&b.ParkConcurrency, "park-concurrency", d.ParkConcurrency, "concurrent calls while preparing and starting parked workflows")
	fs.StringVar(&b.ParkWorkerBin, "park-worker-bin", d.ParkWorkerBin, "the cmd/worker binary the workflows are parked on, in a process of its own")
	fs.IntVar(&b.ParkStickyCache, "park-sticky-cache", 0, "--sticky-cache of the worker the workflows are parked on (0: the worker's default)")
	fs.IntVar(&b.Pollers, "pollers", d.Pollers, "workflow and activity task pollers of the worker (each)")
	fs.IntVar(&b.StickyCache, "sticky-cache", d.StickyCache, "worker sticky workflow cache size")
	fs.IntVar(&b.MaxConcurrentActivities, "max-activities", 0, "worker activity execution slots (0: SDK default)")
	fs.IntVar(&b.MaxConcurrentWorkflowTasks, "max-workflow-tasks", 0, "worker workflow task execution slots (0: SDK default)")
	fs.DurationVar(&b.SlotDuration, "slot", d.SlotDuration, "Solana runtime slot duration")
	fs.Uint64Var(&b.FinalizationDepth, "finalization-depth", d.FinalizationDepth, "slots until a transaction is finalized")
	fs.Uint64Var(&b.BlockhashValidity, "blockhash-validity", d.BlockhashValidity, "slots a blockhash stays valid")
	fs.DurationVar(&b.ConfirmPoll, "confirm-poll", d.ConfirmPoll, "signature status poll interval (workflow and bare client)")
	fs.IntVar(&b.Stakers, "stakers", d.Stakers, "staker keys the operations share")
	fs.Uint64Var(&b.Lamports, "lamports", d.Lamports, "lamports per stake")
	fs.IntVar(&b.PolygonOps, "polygon-ops", d.PolygonOps, "Polygon delegates per side (orchestrated, bare) on a geth --dev chain, on the first server mode (0: no Polygon sides)")
	fs.IntVar(&b.PolygonConcurrency, "polygon-concurrency", d.PolygonConcurrency, "Polygon delegates at once, each from its own address")
	fs.IntVar(&b.CelestiaOps, "celestia-ops", d.CelestiaOps, "Celestia delegates per side (orchestrated, bare) on the sandbox's Celestia ledger, on the first server mode (0: no Celestia sides)")
	fs.IntVar(&b.CelestiaConcurrency, "celestia-concurrency", d.CelestiaConcurrency, "Celestia delegates at once, each from its own delegator")
	fs.IntVar(&b.HyperliquidOps, "hyperliquid-ops", d.HyperliquidOps, "Hyperliquid withdrawals per side (orchestrated, bare) on the sandbox's exchange, each until the delegator's history shows it, on the first server mode (0: no Hyperliquid sides)")
	fs.IntVar(&b.HyperliquidConcurrency, "hyperliquid-concurrency", d.HyperliquidConcurrency, "Hyperliquid withdrawals at once, each from its own delegator")
	fs.IntVar(&b.EigenLayerOps, "eigenlayer-ops", d.EigenLayerOps, "EigenLayer checkpoints per side (orchestrated, bare), one at a time on a pod of each side's own on the geth --dev chain, on the first server mode (0: no EigenLayer sides)")
	fs.IntVar(&b.EigenLayerValidators, "eigenlayer-validators", d.EigenLayerValidators, "validators of each EigenLayer side's pod (80 proofs a batch)")
	fs.Var(&c.DynamicConfig, "dynamic-config", "extra dev-server dynamic config values key=value, comma-separated")
	fs.BoolVar(&b.EagerStart, "eager-start", false, "start workflows eagerly on the starting worker (every side)")
	fs.StringVar(&b.GRPCCompression, "grpc-compression", "none", "gRPC compression to Temporal of the worker and the client: none or gzip (every side)")
	fs.BoolVar(&b.ServerMetrics, "server-metrics", false, "record the dev server's work per operation of each side from its counters (exact counts; the server's metrics slow it, about 10 ms per stake at C=1, so compare timings only between runs that both set it)")
	fs.DurationVar(&b.Drain, "drain", d.Drain, "wait this long after each side's last operation, so the timers its workflow and activity tasks set (up to the activities' 30 s timeouts) fire before the next side (0: no wait)")
	fs.BoolVar(&c.KeepDir, "keep", false, "keep the stacks' working directory (printed)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "progress log level")
	cd := bench.DefaultClusterConfig()
	cb := &c.ClusterBench
	fs.BoolVar(&c.Cluster, "cluster", false, "cluster mode: stakes through 1, 2, 4 worker processes on the real Temporal server on PostgreSQL and on the dev server (the -cluster-* flags; -slot, -finalization-depth, -blockhash-validity, -confirm-poll, -stakers and -lamports apply too)")
	fs.StringVar(&c.ClusterWorkers, "cluster-workers", joinInts(cd.Workers), "cluster mode: worker-process counts, comma-separated")
	fs.IntVar(&cb.Ops, "cluster-n", cd.Ops, "cluster mode: stakes per row")
	fs.IntVar(&cb.Concurrency, "cluster-concurrency", cd.Concurrency, "cluster mode: stakes at once")
	fs.IntVar(&cb.Warmup, "cluster-warmup", cd.Warmup, "cluster mode: warm-up stakes before each row")
	fs.IntVar(&cb.HistoryShards, "cluster-history-shards", cd.HistoryShards, "cluster mode: the server's history shards")
	fs.StringVar(&cb.ServerDir, "temporal-server-dir", os.Getenv("TEMPORAL_SERVER_DIR"), "cluster mode: directory of temporal-server, temporal-sql-tool and schema/ (default $TEMPORAL_SERVER_DIR; scripts/tools.sh temporal-server)")
	fs.StringVar(&cb.WorkerBin, "worker-bin", "bin/worker", "cluster mode: the worker binary")
	fs.StringVar(&cb.StarterBin, "starter-bin", "bin/starter", "cluster mode: the starter binary")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of this process (worker, sandbox service, bare client) to this file")
}

func run() error {
	var cfg Config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	cfg.register(fs)
	if err := cli.Parse(fs, os.Args[1:], ""); err != nil {
		return err
	}
	if cfg.Bench.TemporalCLI == "" {
		return fmt.Errorf("no Temporal CLI: set --temporal-cli or TEMPORAL_CLI (scripts/tools.sh temporal prints its path)")
	}
	if cfg.Cluster {
		return runCluster(cfg)
	}
	conc, err := parseInts(cfg.Concurrency)
	if err != nil {
		return fmt.Errorf("--concurrency: %w", err)
	}
	cfg.Bench.Concurrency = conc
	cfg.Bench.Modes = cfg.Modes
	cfg.Bench.Sides = cfg.Sides
	cfg.Bench.ServerDynamicConfig = cfg.DynamicConfig
	logger, err := cli.NewLogger("console", cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	cfg.Bench.Logger = logger

	dir, err := os.MkdirTemp("", "stakeflow-bench-")
	if err != nil {
		return err
	}
	if cfg.KeepDir {
		logger.Info("Working directory kept", zap.String("dir", dir))
	} else {
		defer os.RemoveAll(dir)
	}
	cfg.Bench.Dir = dir

	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, runErr := bench.Run(ctx, cfg.Bench)
	if rep != nil {
		if err := rep.Write(cfg.Out); err != nil {
			return fmt.Errorf("writing results to %s: %w", cfg.Out, err)
		}
		fmt.Println(rep.Markdown())
		logger.Info("Results written", zap.String("dir", cfg.Out), zap.Duration("took", time.Since(start).Round(time.Second)))
	}
	return runErr
}

// runCluster runs the cluster mode and writes cluster.json and cluster.md into --out.
func runCluster(cfg Config) error {
	cb := cfg.ClusterBench
	workers, err := parseInts(cfg.ClusterWorkers)
	if err != nil {
		return fmt.Errorf("--cluster-workers: %w", err)
	}
	b := cfg.Bench
	cb.Workers, cb.TemporalCLI = workers, b.TemporalCLI
	cb.Stakers, cb.Lamports = b.Stakers, b.Lamports
	cb.SlotDuration, cb.FinalizationDepth, cb.BlockhashValidity, cb.ConfirmPoll = b.SlotDuration, b.FinalizationDepth, b.BlockhashValidity, b.ConfirmPoll
	if cb.ServerDir == "" {
		return fmt.Errorf("no Temporal server: set --temporal-server-dir or TEMPORAL_SERVER_DIR (scripts/tools.sh temporal-server prints it)")
	}
	logger, err := cli.NewLogger("console", cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	cb.Logger = logger
	dir, err := os.MkdirTemp("", "stakeflow-bench-cluster-")
	if err != nil {
		return err
	}
	if cfg.KeepDir {
		logger.Info("Working directory kept", zap.String("dir", dir))
	} else {
		defer os.RemoveAll(dir)
	}
	cb.Dir = dir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, runErr := bench.RunCluster(ctx, cb)
	if rep != nil {
		if err := rep.Write(cfg.Out); err != nil {
			return fmt.Errorf("writing results to %s: %w", cfg.Out, err)
		}
		fmt.Println(rep.Markdown())
	}
	return runErr
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", part)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no concurrency given")
	}
	return out, nil
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
