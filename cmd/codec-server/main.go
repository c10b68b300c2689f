// Command codec-server serves stakeflow's payload codec to the Temporal Web UI and CLI: POST
// /encode and /decode with the keyset the worker seals payloads with, for requests that carry a
// token of the token file, from the configured UI origins only. See internal/codecserver for its
// configuration and docs/codec-server.md for running it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/codecserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	reload := make(chan struct{})
	go func() {
		for range hup {
			reload <- struct{}{}
		}
	}()
	err := run(ctx, os.Args[1:], reload)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "codec-server:", err)
		os.Exit(1)
	}
}

// run parses args, builds the logger and serves until ctx is done; every receive on reload
// reads the keyset, the tokens and the TLS pair again.
func run(ctx context.Context, args []string, reload <-chan struct{}) error {
	var cfg codecserver.Config
	fs := flag.NewFlagSet("codec-server", flag.ContinueOnError)
	cfg.Register(fs)
	if err := cli.Parse(fs, args, "config"); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	logger, err := cli.NewLogger(cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	cfg.Reload = reload
	return codecserver.Run(ctx, cfg, logger)
}
