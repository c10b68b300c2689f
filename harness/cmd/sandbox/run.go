package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stakeflow/stakeflow/harness/sandbox"
)

// startTimeout bounds start-up (the first run installs the runtime's npm
// dependencies).
const startTimeout = 5 * time.Minute

// run dispatches to the token or the serve command.
func run(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == "token" {
		return runToken(args[1:], stdout, getenv)
	}
	return runServe(ctx, args, stdout, getenv)
}

func runToken(args []string, stdout io.Writer, getenv func(string) string) error {
	var cfg TokenConfig
	if err := parse(newTokenFlags(&cfg, stdout), args, getenv); err != nil {
		return err
	}
	if cfg.Subject == "" {
		return errors.New("token: --subject is required")
	}
	secret, err := loadSecret(cfg.TokenSecretFile, getenv)
	if err != nil {
		return err
	}
	tok, err := sandbox.MintToken(secret, cfg.Subject, cfg.TTL)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}

func runServe(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string) error {
	var cfg Config
	if err := parse(newServeFlags(&cfg, stdout), args, getenv); err != nil {
		return err
	}
	log, err := newLogger(cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	secret, err := loadSecret(cfg.TokenSecretFile, getenv)
	if err != nil {
		return err
	}
	scfg, err := cfg.sandboxConfig(secret)
	if err != nil {
		return err
	}
	scfg.Logger = log
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	sb, err := sandbox.Start(startCtx, scfg)
	cancel()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sandbox API: %s\nsolana RPC: %s\nsolana genesis hash: %s\n", sb.URL(), sb.Runtime().URL(), sb.Runtime().GenesisHash())
	if cfg.EVMRPC != "" {
		fmt.Fprintf(stdout, "polygon transactions forwarded to: %s\n", cfg.EVMRPC)
	}
	fmt.Fprintf(stdout, "celestia REST: celestia-mocha-testnet=%s,celestia-mainnet-beta=%s\n",
		sb.CelestiaREST("celestia-mocha-testnet"), sb.CelestiaREST("celestia-mainnet-beta"))
	<-ctx.Done()
	log.Info("stopping")
	return sb.Close()
}

// newLogger builds the process logger.
func newLogger(level, format string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	var zc zap.Config
	switch format {
	case "json":
		zc = zap.NewProductionConfig()
	case "console":
		zc = zap.NewDevelopmentConfig()
	default:
		return nil, fmt.Errorf("--log-format %q: want console or json", format)
	}
	zc.Level = zap.NewAtomicLevelAt(lvl)
	zc.OutputPaths = []string{"stderr"}
	return zc.Build()
}
