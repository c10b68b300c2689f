// Command cluster runs stakeflow in its production shape on this machine until Ctrl-C: the real
// Temporal server on PostgreSQL (advanced visibility on PostgreSQL, stakeflow's search
// attributes), its Web UI, the staking-service sandbox on a real Solana runtime, and N worker
// processes. `make cluster` builds the binaries and the pinned tools and runs it; see
// harness/cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/cluster"
	"github.com/stakeflow/stakeflow/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var opts cluster.Options
	var stakerSOL uint64
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.StringVar(&opts.Dir, "dir", ".cluster", "directory of PostgreSQL's data, logs, keys and the workers' files")
	fs.IntVar(&opts.Workers, "workers", 2, "worker processes to start")
	fs.IntVar(&opts.HistoryShards, "history-shards", 4, "Temporal history shards (fixed for the life of the database)")
	fs.StringVar(&opts.ServerDir, "temporal-server-dir", "", "directory of temporal-server, temporal-sql-tool and schema/ (scripts/tools.sh temporal-server)")
	fs.StringVar(&opts.TemporalCLI, "temporal-cli", "", "the Temporal CLI (scripts/tools.sh temporal)")
	fs.StringVar(&opts.UIServer, "ui-server", "", "the Temporal Web UI server (scripts/tools.sh temporal-ui; empty: no UI)")
	fs.StringVar(&opts.WorkerBin, "worker-bin", "bin/worker", "the worker binary")
	fs.StringVar(&opts.StarterBin, "starter-bin", "bin/starter", "the starter binary")
	fs.IntVar(&opts.Stakers, "stakers", 3, "funded staker keys to create")
	fs.Uint64Var(&stakerSOL, "staker-sol", 100, "SOL given to each staker")
	fs.DurationVar(&opts.Runtime.SlotDuration, "slot-duration", 100*time.Millisecond, "wall time of one slot")
	fs.Uint64Var(&opts.Runtime.SlotsPerEpoch, "slots-per-epoch", 64, "epoch length in slots")
	fs.DurationVar(&opts.EpochRecheck, "epoch-recheck", time.Second, "workers' longest wait before a deactivating stake account is read again")
	if err := cli.Parse(fs, args, ""); err != nil {
		return err
	}
	opts.StakerLamports = stakerSOL * 1_000_000_000
	logger, err := cli.NewLogger("console", "info")
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	if err := os.RemoveAll(opts.Dir); err != nil {
		return err
	}
	opts.Logger = logger
	c, err := cluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	fields := []zap.Field{
		zap.String("temporal", c.Server.Address), zap.String("postgres", c.PostgresDSN),
		zap.String("sandbox", c.Stack.Sandbox.URL()), zap.String("solanaRPC", c.Stack.Sandbox.Runtime().URL()),
		zap.String("serviceTokenFile", c.Stack.TokenFile), zap.String("logs", c.LogPath("")),
	}
	if c.UIURL != "" {
		fields = append(fields, zap.String("webUI", c.UIURL))
	}
	for _, w := range c.Workers {
		fields = append(fields, zap.String(fmt.Sprintf("worker%dHealth", w.Index), w.HealthURL))
	}
	for _, s := range c.Stack.Stakers {
		fields = append(fields, zap.Stringer("staker", s))
	}
	logger.Info("The cluster is up; Ctrl-C stops it", fields...)
	logger.Info("Stake with: STAKEFLOW_TEMPORAL_ADDRESS=" + c.Server.Address + " bin/starter stake --network testnet --staker " +
		c.Stack.Stakers[0].String() + " --sol 2 --wait")
	<-ctx.Done()
	logger.Info("Stopping")
	return nil
}
