package bench

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/internal/worker"
	celmod "github.com/stakeflow/stakeflow/modules/celestia"
	evmmod "github.com/stakeflow/stakeflow/modules/evm"
	hlmod "github.com/stakeflow/stakeflow/modules/hyperliquid"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	"github.com/stakeflow/stakeflow/signer"
	"github.com/stakeflow/stakeflow/store"
	"github.com/stakeflow/stakeflow/workflows"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// Server modes.
const (
	// ModeMemory runs the Temporal dev server without a database file.
	ModeMemory = "memory"
	// ModeFile runs it on a SQLite file (stack.SQLitePragmas).
	ModeFile = "file"
)

// Config sets what one benchmark run does. Zero values take the defaults of DefaultConfig.
type Config struct {
	// TemporalCLI is the Temporal CLI binary; required.
	TemporalCLI string
	// Dir holds the stacks' files (keys, token, database); required.
	Dir string
	// Modes are the server modes measured, each on a fresh stack.
	Modes []string
	// Concurrency lists the concurrencies each side runs at.
	Concurrency []int
	// Ops is the number of operations per side at concurrency above 1; SerialOps at concurrency 1.
	Ops       int
	SerialOps int
	// Warmup operations per side before the first measurement of a stack.
	Warmup int
	// Rounds splits each side's operations into rounds that alternate between the sides. At
	// concurrency 1 the sides' operations interleave one by one instead, and rounds only group
	// them for the by-round ratios.
	Rounds int
	// Park is how many UnstakeWorkflows are parked waiting for deactivation (0: none); ParkMode
	// the server mode they are parked on; ParkConcurrency how many setup calls run at once.
	Park            int
	ParkMode        string
	ParkConcurrency int
	// ParkWorkerBin is the cmd/worker binary the workflows are parked on, in a process of its
	// own; ParkStickyCache its --sticky-cache (0: the worker's default).
	ParkWorkerBin   string
	ParkStickyCache int
	// Worker settings: task pollers (workflow and activity each), sticky workflow cache size,
	// and the SDK's execution slots (0: the SDK's defaults).
	Pollers                    int
	StickyCache                int
	MaxConcurrentActivities    int
	MaxConcurrentWorkflowTasks int
	// Chain clock: slot duration, finalization depth and blockhash validity of the Solana runtime,
	// and the confirmation poll interval both the workflow and the bare client use.
	SlotDuration      time.Duration
	FinalizationDepth uint64
	BlockhashValidity uint64
	ConfirmPoll       time.Duration
	// ServerDynamicConfig are extra dev-server dynamic config values ("key=value"), added to
	// stack.BaseServerDynamicConfig.
	ServerDynamicConfig []string
	// EagerStart asks the server to hand each new workflow's first task to the starting worker
	// (client.StartWorkflowOptions.EnableEagerStart), on every side.
	EagerStart bool
	// GRPCCompression is the compression of the benchmark's connections to Temporal (the
	// worker's and the starting client's): none (default, loopback) or gzip.
	GRPCCompression string
	// ServerMetrics records how much each of the dev server's counters (its persistence calls,
	// tasks and requests) grows per operation of each side. The counts are exact, but serving
	// metrics slows the server (about 10 ms per operation at C=1), so a run with them is compared
	// only with another run with them.
	ServerMetrics bool
	// Drain is how long after a side's last operation the next side waits, so that the timers
	// the server set for the side's tasks fire before the next side is measured: a workflow
	// task's 5 s sticky schedule-to-start and 10 s start-to-close, and the 30 s start-to-close
	// and heartbeat timeouts of the activities, which fire whether or not the activity has
	// finished. 0 measures the next side at once. The bare client sets no timers and is not
	// drained.
	Drain time.Duration
	// Sides, when set, measures only the sides named (SideNames); the ratios of a side left out
	// read 0. For profiling one side at a time.
	Sides []string
	// Stakers is how many staker keys share the operations; Lamports what each stake moves.
	Stakers  int
	Lamports uint64
	// PolygonOps is how many Polygon delegates each Polygon side runs on the first server mode's
	// stack (0: no Polygon sides, no EVM chain), PolygonConcurrency how many at once, each from
	// its own address; PolygonWei what each delegates.
	PolygonOps, PolygonConcurrency int
	PolygonWei                     *big.Int
	// PolygonConfirmPoll is how often both Polygon sides read the chain while confirming.
	PolygonConfirmPoll time.Duration
	// CelestiaOps is how many Celestia delegates each Celestia side runs on the first server
	// mode's stack (0: no Celestia sides, no ledger), CelestiaConcurrency how many at once, each
	// from its own delegator; CelestiaUtia what each delegates, CelestiaConfirmPoll how often both
	// sides read the ledger while confirming.
	CelestiaOps, CelestiaConcurrency int
	CelestiaUtia                     string
	CelestiaConfirmPoll              time.Duration
	// HyperliquidOps is how many Hyperliquid withdrawals each Hyperliquid side runs on the first
	// server mode's stack (0: no Hyperliquid sides), HyperliquidConcurrency how many at once, each
	// from its own delegator; HyperliquidHYPE what each withdraws.
	HyperliquidOps, HyperliquidConcurrency int
	HyperliquidHYPE                        string
	// EigenLayerOps is how many checkpoints each EigenLayer side runs on the first server mode's
	// stack, one at a time (0: no EigenLayer sides), each side on a pod of its own of
	// EigenLayerValidators validators; EigenLayerConfirmPoll is how often both sides read the
	// chain while confirming.
	EigenLayerOps, EigenLayerValidators int
	EigenLayerConfirmPoll               time.Duration
	// Logger receives progress lines; SDKLogger the Temporal SDK's and the workflows' logs (both
	// default no-op).
	Logger    *zap.Logger
	SDKLogger *zap.Logger
}

// DefaultConfig is a run that finishes in a few minutes on a 2-core machine.
func DefaultConfig() Config {
	return Config{
		Modes:       []string{ModeMemory},
		Concurrency: []int{1, 50},
		Ops:         1200,
		SerialOps:   150,
		Warmup:      20,
		// As many rounds as there are sides: the Williams order (balancedOrder) is balanced over
		// that many.
		Rounds:          4,
		Drain:           31 * time.Second,
		Park:            1000,
		ParkMode:        ModeMemory,
		ParkConcurrency: 32,
		ParkWorkerBin:   "bin/worker",
		Pollers:         8,
		StickyCache:     worker.DefaultStickyCache,
		// The chain clock runs 80 times faster than mainnet's, final one slot deep, so that the
		// chain's own time (which no orchestration can shorten) stays a few milliseconds.
		SlotDuration:      5 * time.Millisecond,
		FinalizationDepth: 1,
		BlockhashValidity: 3000,
		ConfirmPoll:       5 * time.Millisecond,
		Stakers:           16,
		Lamports:          2_000_000_000,
		// Each delegate is two transactions final on geth --dev, about a minute whatever the
		// orchestration: 8 per side, 4 at once, keep the Polygon sides near four minutes.
		PolygonOps:         8,
		PolygonConcurrency: 4,
		PolygonConfirmPoll: 500 * time.Millisecond,
		PolygonWei:         new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil),
		// A delegate is included within a block or two of the ledger (500 ms each).
		CelestiaOps:         40,
		CelestiaConcurrency: 4,
		CelestiaUtia:        "100000",
		CelestiaConfirmPoll: 100 * time.Millisecond,
		// A withdrawal is a few service and exchange calls in the benchmark's process.
		HyperliquidOps:         20,
		HyperliquidConcurrency: 4,
		HyperliquidHYPE:        "1",
		// A checkpoint of 200 validators is 1 + 3 transactions final on geth --dev, a few seconds
		// each.
		EigenLayerOps:         2,
		EigenLayerValidators:  200,
		EigenLayerConfirmPoll: 200 * time.Millisecond,
	}
}

func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.TemporalCLI == "" {
		return c, errors.New("bench: TemporalCLI is required (scripts/tools.sh temporal)")
	}
	if c.Dir == "" {
		return c, errors.New("bench: Dir is required")
	}
	if len(c.Modes) == 0 {
		c.Modes = d.Modes
	}
	for _, m := range append([]string{c.ParkMode}, c.Modes...) {
		if m != "" && m != ModeMemory && m != ModeFile {
			return c, fmt.Errorf("bench: unknown server mode %q (want %s or %s)", m, ModeMemory, ModeFile)
		}
	}
	if len(c.Concurrency) == 0 {
		c.Concurrency = d.Concurrency
	}
	for _, n := range c.Concurrency {
		if n < 1 {
			return c, fmt.Errorf("bench: concurrency %d is below 1", n)
		}
	}
	setDefault(&c.Ops, d.Ops)
	setDefault(&c.SerialOps, d.SerialOps)
	setDefault(&c.ParkConcurrency, d.ParkConcurrency)
	setDefault(&c.Rounds, d.Rounds)
	setDefault(&c.Pollers, d.Pollers)
	setDefault(&c.StickyCache, d.StickyCache)
	setDefault(&c.SlotDuration, d.SlotDuration)
	setDefault(&c.FinalizationDepth, d.FinalizationDepth)
	setDefault(&c.BlockhashValidity, d.BlockhashValidity)
	setDefault(&c.ConfirmPoll, d.ConfirmPoll)
	setDefault(&c.Stakers, d.Stakers)
	setDefault(&c.Lamports, d.Lamports)
	if c.ParkMode == "" {
		c.ParkMode = c.Modes[0]
	}
	if c.Park > 0 {
		if c.ParkWorkerBin == "" {
			c.ParkWorkerBin = d.ParkWorkerBin
		}
		if fi, err := os.Stat(c.ParkWorkerBin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return c, fmt.Errorf("bench: parking needs the worker binary, and %q is not an executable file (go build -o bin/ ./cmd/worker)", c.ParkWorkerBin)
		}
		if c.ParkStickyCache < 0 {
			return c, errors.New("bench: ParkStickyCache must not be negative")
		}
	}
	known := SideNames()
	for _, name := range c.Sides {
		if !slices.Contains(known, name) {
			return c, fmt.Errorf("bench: unknown side %q (want one of %s)", name, strings.Join(known, ", "))
		}
	}
	if c.Warmup < 0 || c.Park < 0 || c.PolygonOps < 0 || c.CelestiaOps < 0 || c.HyperliquidOps < 0 || c.EigenLayerOps < 0 {
		return c, errors.New("bench: Warmup, Park, PolygonOps, CelestiaOps, HyperliquidOps and EigenLayerOps must not be negative")
	}
	if c.HyperliquidOps > 0 {
		setDefault(&c.HyperliquidConcurrency, d.HyperliquidConcurrency)
		setDefault(&c.HyperliquidHYPE, d.HyperliquidHYPE)
		if _, err := wfhyperliquid.WeiOf(c.HyperliquidHYPE); err != nil {
			return c, fmt.Errorf("bench: HyperliquidHYPE %q: %w", c.HyperliquidHYPE, err)
		}
	}
	if c.EigenLayerOps > 0 {
		setDefault(&c.EigenLayerValidators, d.EigenLayerValidators)
		setDefault(&c.EigenLayerConfirmPoll, d.EigenLayerConfirmPoll)
		if c.EigenLayerValidators < 1 || c.EigenLayerValidators > evmchain.MaxPodValidators {
			return c, fmt.Errorf("bench: EigenLayerValidators %d is not 1 to %d", c.EigenLayerValidators, evmchain.MaxPodValidators)
		}
	}
	if c.CelestiaOps > 0 {
		setDefault(&c.CelestiaConcurrency, d.CelestiaConcurrency)
		setDefault(&c.CelestiaConfirmPoll, d.CelestiaConfirmPoll)
		setDefault(&c.CelestiaUtia, d.CelestiaUtia)
		if n, ok := new(big.Int).SetString(c.CelestiaUtia, 10); !ok || n.Sign() <= 0 {
			return c, fmt.Errorf("bench: CelestiaUtia %q is not a positive number of utia", c.CelestiaUtia)
		}
	}
	if c.PolygonOps > 0 {
		setDefault(&c.PolygonConcurrency, d.PolygonConcurrency)
		setDefault(&c.PolygonConfirmPoll, d.PolygonConfirmPoll)
		if c.PolygonWei == nil || c.PolygonWei.Sign() <= 0 {
			c.PolygonWei = d.PolygonWei
		}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.SDKLogger == nil {
		c.SDKLogger = zap.NewNop()
	}
	return c, nil
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Run runs the benchmark: for each server mode a fresh local stack, every concurrency with every
// side (orchestrated, the ceilings, bare), then the parking measurement.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// Process-wide, and read when a worker's cache generation is created: set before any worker.
	sdkworker.SetStickyWorkflowCacheSize(cfg.StickyCache)
	rep := &Report{
		StartedAt: time.Now().UTC(), GoVersion: runtime.Version(), NumCPU: runtime.NumCPU(),
		Settings: settingsOf(cfg),
	}
	parkDone := cfg.Park == 0
	modes := slices.Clone(cfg.Modes)
	if !parkDone && !contains(modes, cfg.ParkMode) {
		modes = append(modes, cfg.ParkMode)
	}
	for _, mode := range modes {
		measure := contains(cfg.Modes, mode)
		park := !parkDone && mode == cfg.ParkMode
		mr, pr, err := runMode(ctx, cfg, rep, mode, measure, park)
		if err != nil {
			return rep, fmt.Errorf("server mode %s: %w", mode, err)
		}
		if measure {
			rep.Modes = append(rep.Modes, *mr)
		}
		if park {
			rep.Park, parkDone = pr, true
		}
	}
	rep.Total = Duration(time.Since(rep.StartedAt))
	return rep, nil
}

// env is one running stack with the benchmark's worker and clients.
type env struct {
	cfg Config
	st  *stack.Stack
	c   client.Client
	// w serves the Solana queue, ceilingW the ceiling's, encW the encrypted side's (on encC, the
	// client with the payload codec), evmW the EVM queue (nil without Polygon sides).
	w, ceilingW, encW, evmW sdkworker.Worker
	encC                    client.Client
	// encTagger writes the encrypted side's start attributes as its worker's workflows write them.
	encTagger workflows.Tagger
	bare      *Bare
	// barePolygon is the Polygon bare side (nil without the EVM chain).
	barePolygon *BarePolygon
	// celW serves the Celestia queue and bareCelestia is the Celestia bare side (both nil
	// without the Celestia ledger).
	celW         sdkworker.Worker
	bareCelestia *BareCelestia
	// hlW serves the Hyperliquid queue and bareHyperliquid is the Hyperliquid bare side (both nil
	// without Hyperliquid sides); hlStore is their nonce book, the worker's store.
	hlW             sdkworker.Worker
	bareHyperliquid *BareHyperliquid
	hlStore         *store.DB
	// bareEigenLayer is the EigenLayer bare side (nil without EigenLayer sides); its workflows run
	// on evmW.
	bareEigenLayer *BareEigenLayer
	// stopNetworks stop the checks of the chains' endpoints (runNetworks).
	stopNetworks []context.CancelFunc
	vote         string
	stakers      []string
	mode         string

	slowMu  sync.Mutex
	slowest *SlowOp

	// serverPID and nodePID are the dev server's and the Solana runtime's processes (see cpu).
	serverPID, nodePID int
}

func (e *env) resetSlowest() {
	e.slowMu.Lock()
	defer e.slowMu.Unlock()
	e.slowest = nil
}

func (e *env) takeSlowest() *SlowOp {
	e.slowMu.Lock()
	defer e.slowMu.Unlock()
	s := e.slowest
	e.slowest = nil
	return s
}

func (e *env) staker(i int) string { return e.stakers[i%len(e.stakers)] }

func runMode(ctx context.Context, cfg Config, rep *Report, mode string, measure, park bool) (*ModeReport, *ParkReport, error) {
	log := cfg.Logger.With(zap.String("mode", mode))
	phase := rep.phase(mode + ": start stack")
	e, err := startEnv(ctx, cfg, mode)
	phase.end()
	if err != nil {
		return nil, nil, err
	}
	defer e.close()
	log.Info("Stack started", zap.Duration("took", phase.took()))

	mr := &ModeReport{Mode: mode}
	if measure {
		ph := rep.phase(mode + ": check the sides")
		err := e.checkSides(ctx)
		ph.end()
		if err != nil {
			return nil, nil, err
		}
		if cfg.Warmup > 0 {
			ph := rep.phase(mode + ": warm-up")
			for _, side := range e.sides() {
				if s := RunLoad(ctx, cfg.Warmup, min(cfg.Warmup, 10), side.op); s.Errors > 0 {
					ph.end()
					return nil, nil, fmt.Errorf("warm-up of %s: %d of %d failed, first: %s", side.name, s.Errors, s.Ops, s.FirstError)
				}
			}
			e.drain(ctx, time.Now())
			ph.end()
		}
		mr.LoadBefore = loadAvg()
		for _, c := range cfg.Concurrency {
			n := cfg.Ops
			if c == 1 {
				n = cfg.SerialOps
			}
			run := RunReport{Concurrency: c}
			sides := e.sides()
			var rounds [][]Stats
			if c == 1 {
				ph := rep.phase(fmt.Sprintf("%s: C=1, %d ops per side interleaved, in %d rounds", mode, n, cfg.Rounds))
				var ran [][]*SlowOp
				rounds, ran = e.interleaved(ctx, sides, n)
				ph.end()
				for _, name := range []string{"orchestrated", "ceiling"} {
					j := slices.IndexFunc(sides, func(s side) bool { return s.name == name })
					if j < 0 {
						continue
					}
					if b := e.breakdown(ctx, ran[j]); b != nil {
						run.Breakdowns = append(run.Breakdowns, SideBreakdown{Side: name, Breakdown: *b})
					}
				}
			} else {
				ph := rep.phase(fmt.Sprintf("%s: C=%d, %d ops per side in %d rounds", mode, c, n, cfg.Rounds))
				rounds = e.rotating(ctx, sides, n, c)
				ph.end()
			}
			for j, side := range sides {
				s := Merge(rounds[j]...)
				log.Info("Measured", zap.String("side", side.name), zap.Int("concurrency", c), zap.Int("ops", n),
					zap.Float64("opsPerSec", s.OpsPerSec), zap.Duration("p50", s.P50.Std()), zap.Int("errors", s.Errors))
				*side.into(&run) = s
			}
			run.ratios()
			run.byRound(sides, rounds)
			mr.Runs = append(mr.Runs, run)
		}
		if e.barePolygon != nil && rep.Polygon == nil {
			ph := rep.phase(fmt.Sprintf("%s: Polygon delegate, %d ops per side at C=%d in 2 rounds", mode, cfg.PolygonOps, cfg.PolygonConcurrency))
			pr, err := e.measurePolygon(ctx)
			ph.end()
			if err != nil {
				return nil, nil, fmt.Errorf("polygon: %w", err)
			}
			rep.Polygon = pr
			log.Info("Measured Polygon", zap.Float64("orchestratedOpsPerSec", pr.Orchestrated.OpsPerSec),
				zap.Float64("bareOpsPerSec", pr.Bare.OpsPerSec), zap.Duration("orchestratedP50", pr.Orchestrated.P50.Std()))
		}
		if e.bareCelestia != nil && rep.Celestia == nil {
			ph := rep.phase(fmt.Sprintf("%s: Celestia delegate, %d ops per side at C=%d in 2 rounds", mode, cfg.CelestiaOps, cfg.CelestiaConcurrency))
			cr, err := e.measureCelestia(ctx)
			ph.end()
			if err != nil {
				return nil, nil, fmt.Errorf("celestia: %w", err)
			}
			rep.Celestia = cr
			log.Info("Measured Celestia", zap.Float64("orchestratedOpsPerSec", cr.Orchestrated.OpsPerSec),
				zap.Float64("bareOpsPerSec", cr.Bare.OpsPerSec), zap.Duration("orchestratedP50", cr.Orchestrated.P50.Std()))
		}
		if e.bareEigenLayer != nil && rep.EigenLayer == nil {
			ph := rep.phase(fmt.Sprintf("%s: EigenLayer checkpoint, %d per side of %d validators, one at a time", mode, cfg.EigenLayerOps, cfg.EigenLayerValidators))
			er, err := e.measureEigenLayer(ctx)
			ph.end()
			if err != nil {
				return nil, nil, fmt.Errorf("eigenlayer: %w", err)
			}
			rep.EigenLayer = er
			log.Info("Measured EigenLayer", zap.Duration("orchestratedWallP50", er.Orchestrated.P50.Std()),
				zap.Duration("bareWallP50", er.Bare.P50.Std()), zap.Duration("orchestratedPerBatch", er.Orchestrated.PerBatch.Std()))
		}
		if e.bareHyperliquid != nil && rep.Hyperliquid == nil {
			ph := rep.phase(fmt.Sprintf("%s: Hyperliquid withdrawal, %d ops per side at C=%d in 2 rounds", mode, cfg.HyperliquidOps, cfg.HyperliquidConcurrency))
			hr, err := e.measureHyperliquid(ctx)
			ph.end()
			if err != nil {
				return nil, nil, fmt.Errorf("hyperliquid: %w", err)
			}
			rep.Hyperliquid = hr
			log.Info("Measured Hyperliquid", zap.Float64("orchestratedOpsPerSec", hr.Orchestrated.OpsPerSec),
				zap.Float64("bareOpsPerSec", hr.Bare.OpsPerSec), zap.Duration("orchestratedP50", hr.Orchestrated.P50.Std()))
		}
		mr.LoadAfter = loadAvg()
		if rss, err := e.serverRSS(); err == nil {
			mr.ServerRSS = rss
		}
	}
	var pr *ParkReport
	if park {
		pr, err = e.park(ctx, rep, cfg.Park)
		if err != nil {
			return mr, nil, fmt.Errorf("parking: %w", err)
		}
	}
	return mr, pr, nil
}

// rotating runs each side's n operations at concurrency c in Config.Rounds rounds. Sides take
// turns, round by round, in the orders of a Williams design (balancedOrder): over as many rounds
// as there are sides, every side runs once in every position and right after every other side
// once, so that neither a change in the machine's background load nor what a side leaves behind
// for the next (work the drain did not wait out) favours one side. In a plain rotation the stake
// always ran right after the naive ceiling, and ran at 0.84 of the ceiling's rate where it ran at
// 1.00 without that side. After each round of a side that runs workflows, the drain. It returns
// each side's rounds (rounds[j] are sides[j]'s).
func (e *env) rotating(ctx context.Context, sides []side, n, c int) [][]Stats {
	rounds := make([][]Stats, len(sides))
	for r := range e.cfg.Rounds {
		per := perRound(n, e.cfg.Rounds, r)
		for _, j := range balancedOrder(len(sides), r) {
			e.resetSlowest()
			counters0 := e.counters(ctx) // read first: the scrape is the server's work, not the side's
			cpu0 := e.cpu()
			s := RunLoad(ctx, per, c, sides[j].op)
			ended := time.Now()
			e.settle(ctx)
			s.CPU = e.cpu().perOp(cpu0, per)
			// The counters run through the drain: the timers the side left are its work.
			if sides[j].timers {
				e.drain(ctx, ended)
			}
			s.ServerCounters = e.counters(ctx).perOp(counters0, per)
			s.Slowest = e.takeSlowest()
			e.explain(ctx, s.Slowest)
			rounds[j] = append(rounds[j], s)
		}
	}
	return rounds
}

// interleaved runs each side's n operations one at a time, one operation of every side per
// cycle, in an order shuffled anew each cycle. Every side then meets the same server: the same
// database, the same work queued by the operations before, the same timers firing. At
// concurrency 1 an operation lasts tens of milliseconds and the server's state drifts over a
// round of them by more than the sides differ: in rotating rounds the stake's p50 over the
// ceiling's moved by a third from run to run on a database file. No side is drained, as
// every side pays alike for the timers of every other; work an operation leaves queued falls on
// whichever operation comes next. CPU is read around each operation. Rounds group the cycles for
// the by-round ratios. It returns each side's rounds (rounds[j] are sides[j]'s) and the
// workflows each side ran.
func (e *env) interleaved(ctx context.Context, sides []side, n int) ([][]Stats, [][]*SlowOp) {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(len(sides)))) // the same order for the same run
	rounds := make([][]Stats, len(sides))
	ran := make([][]*SlowOp, len(sides))
	done := 0
	for r := range e.cfg.Rounds {
		per := perRound(n, e.cfg.Rounds, r)
		ops := make([][]Stats, len(sides))
		for range per {
			i := done
			done++
			for _, j := range rng.Perm(len(sides)) {
				e.resetSlowest()
				cpu0 := e.cpu()
				s := RunLoad(ctx, 1, 1, func(ctx context.Context, _ int) error { return sides[j].op(ctx, i) })
				s.CPU = e.cpu().perOp(cpu0, 1)
				s.Slowest = e.takeSlowest() // this operation's workflow, if it ran one
				if s.Slowest != nil {
					ran[j] = append(ran[j], s.Slowest)
				}
				ops[j] = append(ops[j], s)
			}
			if ctx.Err() != nil {
				break
			}
		}
		for j := range sides {
			s := Merge(ops[j]...)
			s.Rounds = 1
			e.explain(ctx, s.Slowest)
			rounds[j] = append(rounds[j], s)
		}
	}
	e.drain(ctx, time.Now())
	return rounds, ran
}

// balancedOrder is the order of n sides in round r: row r of a Williams design. Its first row is
// 0, 1, n-1, 2, n-2, ...; row r adds r to each (mod n). Over n rows (for an even n) each side
// takes every position once and follows every other side exactly once; for an odd n, rows n to
// 2n-1 are the first n reversed, and the balance holds over 2n rows.
func balancedOrder(n, r int) []int {
	first := make([]int, n)
	lo, hi := 1, n-1
	for k := 1; k < n; k++ {
		if k%2 == 1 {
			first[k] = lo
			lo++
		} else {
			first[k] = hi
			hi--
		}
	}
	row := r % n
	out := make([]int, n)
	for k, v := range first {
		out[k] = (v + row) % n
	}
	if n%2 == 1 && r%(2*n) >= n {
		slices.Reverse(out)
	}
	return out
}

// perRound is how many of n operations round r of rounds runs: an even share, the last round
// taking the remainder.
func perRound(n, rounds, r int) int {
	per := n / rounds
	if r == rounds-1 {
		return n - per*(rounds-1)
	}
	return per
}

func startEnv(ctx context.Context, cfg Config, mode string) (_ *env, err error) {
	dir, err := os.MkdirTemp(cfg.Dir, "stack-"+mode+"-")
	if err != nil {
		return nil, err
	}
	// Every stake of this stack (orchestrated, encrypted and bare sides, their check, warm-up,
	// parking) with room for fees.
	stakes := 3*(cfg.Ops*len(cfg.Concurrency)+cfg.SerialOps+cfg.Warmup+1) + cfg.Park
	perStaker := uint64(stakes/cfg.Stakers+2)*(cfg.Lamports+10_000_000) + 10_000_000_000
	st, err := startLocalStack(ctx, cfg, mode, dir, perStaker)
	if err != nil {
		return nil, err
	}
	e := &env{cfg: cfg, st: st, c: st.Client, mode: mode}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	keys, err := signer.LoadSolanaKeyring(st.KeyDir)
	if err != nil {
		return nil, err
	}
	token, err := os.ReadFile(st.TokenFile)
	if err != nil {
		return nil, err
	}
	svc, err := apiclient.New(st.Sandbox.URL(), apiclient.WithToken(string(token)), apiclient.WithTimeout(30*time.Second),
		apiclient.WithUserAgent("stakeflow-bench"))
	if err != nil {
		return nil, err
	}
	// The orchestrated side runs the product's modules as the worker builds them, each on its own
	// queue, through the same seam (module.Module) cmd/worker uses.
	wsvc, err := apiclient.New(st.Sandbox.URL(), apiclient.WithTokenFile(st.TokenFile), apiclient.WithTimeout(30*time.Second),
		apiclient.WithUserAgent("stakeflow-worker"))
	if err != nil {
		return nil, err
	}
	wcfg := st.WorkerConfig()
	menv := func(name string) module.Env {
		return module.Env{TaskQueue: benchQueue(name), Logger: zap.NewNop(), Service: wsvc, Temporal: st.Client, EpochRecheck: wcfg.EpochRecheck}
	}
	wopts := sdkworker.Options{
		MaxConcurrentWorkflowTaskPollers:       cfg.Pollers,
		MaxConcurrentActivityTaskPollers:       cfg.Pollers,
		MaxConcurrentActivityExecutionSize:     cfg.MaxConcurrentActivities,
		MaxConcurrentWorkflowTaskExecutionSize: cfg.MaxConcurrentWorkflowTasks,
		WorkerStopTimeout:                      5 * time.Second,
	}
	sol, _ := module.Find[*solanamod.Module](wcfg.Modules)
	solBuilt, err := sol.Build(ctx, menv(sol.Name()))
	if err != nil {
		return nil, err
	}
	stake := func(r sdkworker.Registry) { registerSolana(r, sol, solBuilt) }
	e.w = sdkworker.New(st.Client, benchQueue(sol.Name()), wopts)
	stake(e.w)
	// The ceiling: the same workflows with no-op activities, on a queue of its own.
	e.ceilingW = sdkworker.New(st.Client, CeilingQueue, wopts)
	if err := RegisterCeiling(e.ceilingW, stake, StakeCeilingResults()); err != nil {
		return nil, err
	}
	// The encrypted side: the same worker registration on a client whose payloads go through the
	// payload codec, on a queue of its own (its payloads are unreadable to the others).
	e.encC, e.encTagger, err = encryptedClient(st.Client, dir, cfg.SDKLogger)
	if err != nil {
		return nil, err
	}
	e.encW = sdkworker.New(e.encC, EncryptedQueue, wopts)
	stake(e.encW)
	if cfg.PolygonOps > 0 || cfg.EigenLayerOps > 0 {
		evm, _ := module.Find[*evmmod.Module](wcfg.Modules)
		evmBuilt, err := evm.Build(ctx, menv(evm.Name()))
		if err != nil {
			return nil, err
		}
		e.evmW = sdkworker.New(st.Client, benchQueue(evm.Name()), wopts)
		worker.RegisterCommon(e.evmW, &notify.Notifier{})
		register(e.evmW, evm, evmBuilt)
		if err := e.evmW.Start(); err != nil {
			return nil, fmt.Errorf("starting the benchmark's EVM worker: %w", err)
		}
		// The bare sides call the same activities directly, built anew on a client of its own
		// (EigenLayer's and the EVM activities sharing their cache of large transactions).
		benv := menv(evm.Name())
		benv.Service = svc
		bareBuilt, err := evm.Build(ctx, benv)
		if err != nil {
			return nil, err
		}
		evmActs, err := activitiesOf[*actevm.Activities](bareBuilt)
		if err != nil {
			return nil, err
		}
		elActs, err := activitiesOf[*actel.Activities](bareBuilt)
		if err != nil {
			return nil, err
		}
		// As the worker does: each build's readers prove their network before anything reads it.
		if err := e.runNetworks(ctx, append(evmBuilt.Networks, bareBuilt.Networks...)); err != nil {
			return nil, fmt.Errorf("the EVM network: %w", err)
		}
		if cfg.PolygonOps > 0 {
			e.barePolygon = &BarePolygon{Acts: evmActs, Network: stack.EVMNetwork, Poll: cfg.PolygonConfirmPoll}
		}
		if cfg.EigenLayerOps > 0 {
			e.bareEigenLayer = &BareEigenLayer{EVM: evmActs, Eigen: elActs, Network: stack.EVMNetwork, Poll: cfg.EigenLayerConfirmPoll}
		}
	}
	if cfg.HyperliquidOps > 0 {
		// The worker's store holds Hyperliquid's nonce book: both sides record each nonce in it
		// before signing, as the worker does.
		if e.hlStore, err = store.Open(ctx, "sqlite:"+filepath.Join(dir, "stakeflow.db")); err != nil {
			return nil, err
		}
		hl, _ := module.Find[*hlmod.Module](wcfg.Modules)
		wenv := menv(hl.Name())
		wenv.Store = e.hlStore
		hlBuilt, err := hl.Build(ctx, wenv)
		if err != nil {
			return nil, err
		}
		e.hlW = sdkworker.New(st.Client, benchQueue(hl.Name()), wopts)
		worker.RegisterCommon(e.hlW, &notify.Notifier{})
		register(e.hlW, hl, hlBuilt)
		if err := e.hlW.Start(); err != nil {
			return nil, fmt.Errorf("starting the benchmark's Hyperliquid worker: %w", err)
		}
		// The bare side calls the same activities directly, built anew on a client of its own.
		benv := menv(hl.Name())
		benv.Service, benv.Store = svc, e.hlStore
		bareBuilt, err := hl.Build(ctx, benv)
		if err != nil {
			return nil, err
		}
		hlActs, err := activitiesOf[*acthl.Activities](bareBuilt)
		if err != nil {
			return nil, err
		}
		if err := e.runNetworks(ctx, append(hlBuilt.Networks, bareBuilt.Networks...)); err != nil {
			return nil, fmt.Errorf("the Hyperliquid network: %w", err)
		}
		e.bareHyperliquid = &BareHyperliquid{Acts: hlActs, Network: hyperliquidNetwork}
	}
	if st.Celestia != nil {
		cel, _ := module.Find[*celmod.Module](wcfg.Modules)
		celBuilt, err := cel.Build(ctx, menv(cel.Name()))
		if err != nil {
			return nil, err
		}
		e.celW = sdkworker.New(st.Client, benchQueue(cel.Name()), wopts)
		worker.RegisterCommon(e.celW, &notify.Notifier{})
		register(e.celW, cel, celBuilt)
		if err := e.celW.Start(); err != nil {
			return nil, fmt.Errorf("starting the benchmark's Celestia worker: %w", err)
		}
		// The bare side calls the same activities directly, built anew on a client of its own.
		benv := menv(cel.Name())
		benv.Service = svc
		bareBuilt, err := cel.Build(ctx, benv)
		if err != nil {
			return nil, err
		}
		celActs, err := activitiesOf[*actcelestia.Activities](bareBuilt)
		if err != nil {
			return nil, err
		}
		e.bareCelestia = &BareCelestia{Acts: celActs, Network: stack.CelestiaNetwork, Poll: cfg.CelestiaConfirmPoll}
		// The REST endpoints are read only once proven to serve their chain: prove them as the
		// worker does, until the stack closes.
		if err := e.runNetworks(ctx, append(celBuilt.Networks, bareBuilt.Networks...)); err != nil {
			return nil, err
		}
	}
	for _, w := range []struct {
		name string
		w    sdkworker.Worker
	}{{"stake", e.w}, {"ceiling", e.ceilingW}, {"encrypted stake", e.encW}} {
		if err := w.w.Start(); err != nil {
			return nil, fmt.Errorf("starting the benchmark's %s worker: %w", w.name, err)
		}
	}
	e.bare = &Bare{
		Service: svc, Signer: signer.NewSolana(keys, signer.SolanaPolicy{}), Keys: keys,
		Chain: solchain.New(st.Sandbox.Runtime().URL()), Network: "testnet", Poll: cfg.ConfirmPoll,
	}
	votes := st.Sandbox.Runtime().VoteAccounts()
	if len(votes) == 0 {
		return nil, errors.New("the runtime has no healthy vote account")
	}
	e.vote = votes[0].String()
	for _, pk := range st.Stakers {
		e.stakers = append(e.stakers, pk.String())
	}
	return e, nil
}

// runNetworks keeps checking networks until the env closes, as the worker does, and waits until
// every one is proven (at most networkProofLimit).
func (e *env) runNetworks(ctx context.Context, networks []module.Network) error {
	nctx, cancel := context.WithCancel(context.Background())
	e.stopNetworks = append(e.stopNetworks, cancel)
	for _, n := range networks {
		go n.Run(nctx)
	}
	deadline := time.Now().Add(networkProofLimit)
	for _, n := range networks {
		for n.Verified() != nil {
			if time.Now().After(deadline) {
				return fmt.Errorf("not proven within %s: %w", networkProofLimit, n.Verified())
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// networkProofLimit is how long the benchmark waits for a chain's endpoint to be proven.
const networkProofLimit = 30 * time.Second

// register registers a built module on r, as the worker does.
func register(r sdkworker.Registry, m module.Module, b module.Built) {
	m.Workflows(r)
	for _, a := range b.Activities {
		r.RegisterActivity(a)
	}
}

// registerSolana registers on r what the worker registers on the Solana queue: the common
// workflows and activities and the Solana module's. The orchestrated sides' workers take it as it
// is, the ceiling's worker with no-op activities (RegisterCeiling).
func registerSolana(r sdkworker.Registry, sol *solanamod.Module, built module.Built) {
	worker.RegisterCommon(r, &notify.Notifier{})
	register(r, sol, built)
}

// Task queues of the sides that run the stake workflow beside the orchestrated side's (the
// worker's Solana queue): the ceiling's, whose activities share the stake's names, and the
// encrypted side's, whose payloads only its own worker reads.
var (
	CeilingQueue   = benchQueue(wfsolana.Module) + "-ceiling"
	EncryptedQueue = benchQueue(wfsolana.Module) + "-encrypted"
)

// encryptedClient is a client on c's connection whose payloads and failures go through the
// payload codec (cli.Temporal.Encrypt), under a keyset made for the run in dir.
func encryptedClient(c client.Client, dir string, logger *zap.Logger) (client.Client, workflows.Tagger, error) {
	path := filepath.Join(dir, "payload-keyset.json")
	if _, err := stack.NewKeysetFile(path, "bench-1"); err != nil {
		return nil, nil, err
	}
	t := cli.Temporal{PayloadKeyset: path}
	opts := client.Options{Namespace: "default", Logger: cli.TemporalLogger(logger.Named("temporal"))}
	if err := t.Encrypt(&opts); err != nil {
		return nil, nil, err
	}
	tagger, err := t.Tagger()
	if err != nil {
		return nil, nil, err
	}
	ec, err := client.NewClientFromExisting(c, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("the encrypted side's client: %w", err)
	}
	return ec, tagger, nil
}

// benchQueue is a module's task queue under the default prefix: the queue the worker serves it on.
// activitiesOf finds the activities of type T among those a module built, for a bare side that
// calls them in-process.
func activitiesOf[T any](b module.Built) (T, error) {
	for _, a := range b.Activities {
		if t, ok := a.(T); ok {
			return t, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("bench: the module built no %T", zero)
}

func benchQueue(module string) string {
	return workflows.TaskQueueOf(workflows.DefaultTaskQueuePrefix, module)
}

func (e *env) close() {
	for _, w := range []sdkworker.Worker{e.w, e.ceilingW, e.encW, e.celW, e.hlW} {
		if w != nil {
			w.Stop()
		}
	}
	if e.encC != nil {
		e.encC.Close()
	}
	for _, stop := range e.stopNetworks {
		stop()
	}
	if e.evmW != nil {
		e.evmW.Stop()
	}
	if e.hlStore != nil {
		_ = e.hlStore.Close()
	}
	if e.st != nil {
		e.st.Close()
	}
}

// side is one way of running the stake sequence.
type side struct {
	name string
	op   func(ctx context.Context, i int) error
	into func(*RunReport) *Stats
	// timers tells that the side's operations set timers on the server (it runs workflows).
	timers bool
}

// SideNames lists the sides by name, in the order they run.
func SideNames() []string {
	var e env
	var names []string
	for _, s := range e.allSides() {
		names = append(names, s.name)
	}
	return names
}

// sides lists the sides measured, in the order they run.
func (e *env) sides() []side {
	all := e.allSides()
	if len(e.cfg.Sides) == 0 {
		return all
	}
	return slices.DeleteFunc(all, func(s side) bool { return !slices.Contains(e.cfg.Sides, s.name) })
}

func (e *env) allSides() []side {
	return []side{
		{"ceiling", e.stakeOn(e.c, CeilingQueue), func(r *RunReport) *Stats { return &r.Ceiling }, true},
		{"orchestrated", e.stakeOn(e.c, benchQueue(wfsolana.Module)), func(r *RunReport) *Stats { return &r.Orchestrated }, true},
		{"orchestrated-encrypted", e.stakeOn(e.encC, EncryptedQueue), func(r *RunReport) *Stats { return &r.Encrypted }, true},
		{"bare", e.bareOp, func(r *RunReport) *Stats { return &r.Bare }, false},
	}
}

// stakeInput is the i-th operation's stake.
func (e *env) stakeInput(i int) wfsolana.StakeInput {
	return wfsolana.StakeInput{
		Network: "testnet", Staker: e.staker(i), Lamports: e.cfg.Lamports, VoteAccount: e.vote,
		Options: workflows.Options{ConfirmPollInterval: e.cfg.ConfirmPoll},
	}
}

// stakeOn starts stakes through c on queue, as the starter does (summary, search attributes),
// and waits for each result.
func (e *env) stakeOn(c client.Client, queue string) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		run, err := e.startStake(ctx, c, queue, i)
		if err != nil {
			return err
		}
		var res wfsolana.Result
		return e.wait(ctx, run, &res)
	}
}

// startStake starts the i-th stake through c on queue, as the starter does.
func (e *env) startStake(ctx context.Context, c client.Client, queue string, i int) (client.WorkflowRun, error) {
	in := e.stakeInput(i)
	attrs := wfsolana.StakeAttributes(in)
	if queue == EncryptedQueue {
		attrs = workflows.Conceal(e.encTagger, attrs...)
	}
	opts := starter.StartOptions(e.idFor("stake", i), wfsolana.StakeSummary(in), queue, attrs...)
	opts.EnableEagerStart = e.cfg.EagerStart
	return c.ExecuteWorkflow(ctx, opts, wfsolana.StakeWorkflow, in)
}

// checkSides runs one stake on each side that runs the stake workflow, unmeasured, and checks
// in the server's histories that the sides are what they claim: the ceiling asks the server for
// the orchestrated stake's activities in the same order, and the encrypted side's payloads are
// sealed (the others' are not).
func (e *env) checkSides(ctx context.Context) error {
	type ran struct {
		name, queue string
		c           client.Client
		activities  []string
		sealed      []bool
	}
	sides := []*ran{
		{name: "orchestrated", queue: benchQueue(wfsolana.Module), c: e.c},
		{name: "ceiling", queue: CeilingQueue, c: e.c},
		{name: "orchestrated-encrypted", queue: EncryptedQueue, c: e.encC},
	}
	for i, s := range sides {
		run, err := e.startStake(ctx, s.c, s.queue, i)
		if err != nil {
			return fmt.Errorf("check of the %s side: %w", s.name, err)
		}
		var res wfsolana.Result
		if err := run.Get(ctx, &res); err != nil {
			return fmt.Errorf("check of the %s side: %w", s.name, err)
		}
		events, err := e.history(ctx, run.GetID(), run.GetRunID())
		if err != nil {
			return fmt.Errorf("check of the %s side: history: %w", s.name, err)
		}
		for _, ev := range events {
			var payloads []*commonpb.Payload
			switch ev.GetEventType() {
			case enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
				payloads = ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
			case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				a := ev.GetActivityTaskScheduledEventAttributes()
				s.activities = append(s.activities, a.GetActivityType().GetName())
				payloads = a.GetInput().GetPayloads()
			case enums.EVENT_TYPE_MARKER_RECORDED:
				s.activities = append(s.activities, "marker "+ev.GetMarkerRecordedEventAttributes().GetMarkerName())
			}
			for _, p := range payloads {
				s.sealed = append(s.sealed, string(p.GetMetadata()["encoding"]) == codec.Encoding)
			}
		}
	}
	orch, ceil, enc := sides[0], sides[1], sides[2]
	if !slices.Equal(orch.activities, ceil.activities) {
		return fmt.Errorf("the ceiling's stake ran %v, the orchestrated stake %v: not the same shape", ceil.activities, orch.activities)
	}
	// Under a keyset the workflow records one version marker more (the choice to write its search
	// attributes as tags, workflows.Conceal): the encrypted side's shape is the stake's otherwise.
	noVersion := func(a []string) []string {
		return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return s == "marker Version" })
	}
	if !slices.Equal(noVersion(orch.activities), noVersion(enc.activities)) {
		return fmt.Errorf("the encrypted stake ran %v, the orchestrated stake %v: not the same shape", enc.activities, orch.activities)
	}
	if len(enc.sealed) == 0 || slices.Contains(enc.sealed, false) {
		return fmt.Errorf("the encrypted side wrote payloads in clear (sealed: %v)", enc.sealed)
	}
	if slices.Contains(orch.sealed, true) || slices.Contains(ceil.sealed, true) {
		return errors.New("the orchestrated side or the ceiling wrote encrypted payloads")
	}
	return nil
}

func (e *env) bareOp(ctx context.Context, i int) error {
	_, err := e.bare.Stake(ctx, e.staker(i), e.vote, e.cfg.Lamports)
	return err
}

// idFor returns a fresh workflow ID; IDs are never reused within a server.
func (e *env) idFor(kind string, i int) string {
	return "bench-" + kind + "-" + strconv.FormatInt(idSeq.Add(1), 36) + "-" + strconv.Itoa(i)
}

// idSeq numbers workflow IDs; it starts from the clock so that runs on a kept database differ.
var idSeq = func() *atomic.Int64 {
	var v atomic.Int64
	v.Store(time.Now().UnixNano())
	return &v
}()

// serverRSS reads the Temporal dev server's resident set size.
func (e *env) serverRSS() (uint64, error) {
	server, _, err := e.pids()
	if err != nil {
		return 0, err
	}
	return VmRSS(server)
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// wait waits for a workflow's result and keeps the slowest successful one of the round. Where its
// time went is read later (explain), outside the operation's measured time.
func (e *env) wait(ctx context.Context, run client.WorkflowRun, out any) error {
	t0 := time.Now()
	err := run.Get(ctx, out)
	took := time.Since(t0)
	if err != nil {
		return err
	}
	e.slowMu.Lock()
	defer e.slowMu.Unlock()
	if e.slowest == nil || took > e.slowest.Took.Std() {
		e.slowest = &SlowOp{WorkflowID: run.GetID(), runID: run.GetRunID(), Took: Duration(took)}
	}
	return nil
}

// explain reads the history of a slowest operation and records its longest pause.
func (e *env) explain(ctx context.Context, s *SlowOp) {
	if s == nil || s.Between != "" {
		return
	}
	gap, between := e.longestGap(ctx, s.WorkflowID, s.runID)
	s.LongestGap, s.Between = Duration(gap), between
}

// longestGap finds the longest pause between two consecutive events of a workflow's history.
func (e *env) longestGap(ctx context.Context, id, runID string) (time.Duration, string) {
	events, err := e.history(ctx, id, runID)
	var gap time.Duration
	var between string
	for k := 1; k < len(events); k++ {
		prev, ev := events[k-1], events[k]
		if d := ev.GetEventTime().AsTime().Sub(prev.GetEventTime().AsTime()); d > gap {
			gap, between = d, fmt.Sprintf("%d %s -> %d %s", prev.GetEventId(), prev.GetEventType(), ev.GetEventId(), ev.GetEventType())
		}
	}
	if err != nil {
		between += " (history incomplete: " + err.Error() + ")"
	}
	return gap, between
}

// history reads a workflow's events; on an error, those read before it and the error.
func (e *env) history(ctx context.Context, id, runID string) ([]*history.HistoryEvent, error) {
	it := e.c.GetWorkflowHistory(ctx, id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*history.HistoryEvent
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

// counters reads the dev server's counters when Config.ServerMetrics is set; nil otherwise or
// when they cannot be read (logged).
func (e *env) counters(ctx context.Context) Counters {
	if e.st.MetricsURL == "" {
		return nil
	}
	c, err := scrapeCounters(ctx, e.st.MetricsURL)
	if err != nil {
		e.cfg.Logger.Warn("Server metrics unavailable", zap.Error(err))
		return nil
	}
	return c
}

// drain waits until Config.Drain has passed since a side's last operation ended, then until the
// server is quiet. Without it, each side pays for the timers the sides before it left behind:
// they fire 5–10 s after a workflow task and 30 s after an activity starts, while the next
// sides are measured. With 11 s, the side after the naive ceiling (which leaves the most
// timers) paid up to 10 ms of server CPU per operation for them.
func (e *env) drain(ctx context.Context, ended time.Time) {
	if e.cfg.Drain <= 0 {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Until(ended.Add(e.cfg.Drain))):
	}
	e.settle(ctx)
}

// settle waits until the Temporal server is quiet (below a fifth of a core over settleWindow),
// for at most settleLimit. Work a side leaves queued on the server when its last operation ends
// (visibility writes above all) then counts in that side's CPU and not in the next side's.
func (e *env) settle(ctx context.Context) {
	prev := e.cpu()
	deadline := time.Now().Add(settleLimit)
	for prev.ok && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(settleWindow):
		}
		cur := e.cpu()
		if !cur.ok || cur.server-prev.server < settleWindow/5 {
			return
		}
		prev = cur
	}
}

const (
	settleWindow = 200 * time.Millisecond
	settleLimit  = 15 * time.Second
)

// cpuSample is the CPU time used so far by the server, the benchmark and the runtime.
type cpuSample struct {
	server, bench, runtime time.Duration
	ok                     bool
}

// pids finds the dev server's and the Solana runtime's processes, once per stack: the
// interleaved runs read CPU around every operation, and a scan of /proc costs about a
// millisecond.
func (e *env) pids() (server, node int, err error) {
	if e.serverPID == 0 || e.nodePID == 0 {
		self := os.Getpid()
		server, err := ChildByName(self, filepath.Base(e.cfg.TemporalCLI))
		if err != nil {
			return 0, 0, err
		}
		node, err := ChildByName(self, "node")
		if err != nil {
			return 0, 0, err
		}
		e.serverPID, e.nodePID = server, node
	}
	return e.serverPID, e.nodePID, nil
}

func (e *env) cpu() cpuSample {
	_, node, err := e.pids()
	if err != nil {
		return cpuSample{}
	}
	return e.cpuWith(node)
}

// cpuWith samples the server's and the benchmark's CPU, and chain's: the process of the chain
// the side runs on (the Solana runtime, or geth).
func (e *env) cpuWith(chain int) cpuSample {
	self := os.Getpid()
	server, _, err := e.pids()
	if err != nil {
		return cpuSample{}
	}
	node := chain
	var s cpuSample
	var errs [3]error
	s.server, errs[0] = CPUTime(server)
	s.bench, errs[1] = CPUTime(self)
	s.runtime, errs[2] = CPUTime(node)
	s.ok = errs[0] == nil && errs[1] == nil && errs[2] == nil
	return s
}

// perOp divides the CPU used since before over ops; nil when either sample failed.
func (s cpuSample) perOp(before cpuSample, ops int) *CPUPerOp {
	if !s.ok || !before.ok || ops == 0 {
		return nil
	}
	n := time.Duration(ops)
	return &CPUPerOp{
		Server:  Duration((s.server - before.server) / n),
		Bench:   Duration((s.bench - before.bench) / n),
		Runtime: Duration((s.runtime - before.runtime) / n),
	}
}
