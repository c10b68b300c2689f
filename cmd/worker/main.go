// Command worker is the stakeflow daemon: it runs staking operations as Temporal workflows. See
// internal/worker for its configuration.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/modules/all"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// run parses args, builds the logger and runs the worker until ctx is done.
func run(ctx context.Context, args []string) error {
	cfg := worker.Config{Modules: all.Modules()}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	cfg.Register(fs)
	if err := cli.Parse(fs, args, "config"); err != nil {
		return err
	}
	logger, err := cli.NewLogger(cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	return worker.Run(ctx, cfg, logger)
}
