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
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg worker.Config
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	cfg.Register(fs)
	if err := cli.Parse(fs, os.Args[1:], "config"); err != nil {
		return err
	}
	logger, err := cli.NewLogger(cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return worker.Run(ctx, cfg, logger)
}
