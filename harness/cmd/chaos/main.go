package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/stakeflow/stakeflow/harness/chaos"
	"github.com/stakeflow/stakeflow/internal/cli"
)

// errViolations is returned when the run found broken guarantees.
var errViolations = errors.New("violations found")

// errUnexercised is returned when a fault class or recovery path the run forces did not happen.
var errUnexercised = errors.New("paths not exercised")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

// options are the command's settings.
type options struct {
	cfg      chaos.Config
	logLevel string
}

func (o *options) register(fs *flag.FlagSet) {
	fs.IntVar(&o.cfg.Ops, "ops", 200, "operations to run")
	fs.IntVar(&o.cfg.Concurrency, "concurrency", 40, "operations running at once")
	fs.Float64Var(&o.cfg.ChainShare, "chain-share", 0.4, "fraction of operations that are stake -> unstake -> withdraw chains")
	fs.IntVar(&o.cfg.WorkerKills, "worker-kills", 4, "times the worker is killed with SIGKILL and started again, the first while an operation confirms a dropped transaction")
	fs.BoolVar(&o.cfg.RestartTemporal, "restart-temporal", true, "stop the Temporal dev server once and start it again on its database")
	fs.IntVar(&o.cfg.PolygonOps, "polygon-ops", 20, "Polygon operations (delegates, delegate -> unstake -> claim chains) run beside the Solana ones on a geth --dev chain; 0: none")
	fs.IntVar(&o.cfg.PolygonStakers, "polygon-stakers", 4, "EVM addresses the Polygon operations share")
	fs.IntVar(&o.cfg.CelestiaOps, "celestia-ops", 12, "Celestia delegates run beside the Solana ones on the sandbox's Celestia ledger, from three delegators; 0: none")
	fs.IntVar(&o.cfg.CheckpointOps, "checkpoint-ops", 2, "EigenLayer checkpoints (one pod of 120 validators each, its own owner) run beside them on the same chain; 0: none")
	fs.Uint64Var(&o.cfg.Seed, "seed", 1, "seed of the operations, stakers, fault rates and process-fault schedule")
	fs.DurationVar(&o.cfg.Timeout, "timeout", 30*time.Minute, "longest time the operations may take")
	fs.DurationVar(&o.cfg.WarpEvery, "warp-every", 5*time.Second, "least time between two epoch warps")
	fs.StringVar(&o.cfg.TemporalCLI, "temporal-cli", "", "Temporal CLI binary (default $TEMPORAL_CLI, else scripts/tools.sh temporal)")
	fs.StringVar(&o.cfg.PayloadKeyset, "payload-keyset", "", "keyset file (JSON, 0600) of the payload codec: the worker and the run's client encrypt every payload (docs/encryption.md); empty: payloads in clear")
	fs.StringVar(&o.cfg.WorkerBin, "worker-bin", "", "built cmd/worker binary (default: go build it)")
	fs.StringVar(&o.cfg.Dir, "dir", "", "directory for the run's database, keys and logs (default: a temporary one, kept when the run fails)")
	fs.BoolVar(&o.cfg.Keep, "keep", false, "keep the temporary directory")
	fs.StringVar(&o.logLevel, "log-level", "info", "progress log level: debug, info, warn or error")
}

// parse reads the flags and their environment twins.
func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	o.register(fs)
	if err := cli.Parse(fs, args, ""); err != nil {
		return o, err
	}
	if o.cfg.TemporalCLI == "" {
		o.cfg.TemporalCLI = os.Getenv("TEMPORAL_CLI")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	if o.cfg.TemporalCLI == "" {
		out, err := exec.CommandContext(ctx, "scripts/tools.sh", "temporal").Output()
		if err != nil {
			return fmt.Errorf("no Temporal CLI: set --temporal-cli or TEMPORAL_CLI, or run from the repository root (scripts/tools.sh temporal: %v)", err)
		}
		o.cfg.TemporalCLI = strings.TrimSpace(string(out))
	}
	logger, err := cli.NewLogger("console", o.logLevel)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	rep, err := chaos.Run(ctx, o.cfg, logger)
	if err != nil {
		if rep != nil && rep.Dir != "" {
			return fmt.Errorf("%w (files in %s)", err, rep.Dir)
		}
		return err
	}
	if err := rep.Write(stdout); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("%w: %d (files kept in %s)", errViolations, len(rep.Violations), rep.Dir)
	}
	if missing := rep.Unexercised(); len(missing) > 0 {
		return fmt.Errorf("%w: %d, listed in the report (files kept in %s)", errUnexercised, len(missing), rep.Dir)
	}
	return nil
}
