package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gagliardetto/solana-go/rpc"

	"github.com/stakeflow/stakeflow/internal/cli"
)

// runWarp moves a running stack's chain forward by whole epochs.
func runWarp(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("devstack warp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	epochs := fs.Uint64("epochs", 1, "how many epochs to move forward")
	rpcURL := fs.String("rpc", "", "Solana JSON-RPC URL of the stack (default: read from <stack-dir>/"+rpcURLFile+")")
	dir := fs.String("stack-dir", ".stack", "directory of the running stack")
	if err := cli.Parse(fs, args, ""); err != nil {
		return &usageError{msg: fmt.Sprintf("warp: %v (see devstack --help)", err)}
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("warp: unexpected argument %q", fs.Arg(0))}
	}
	if *epochs == 0 {
		return &usageError{msg: "warp: --epochs 0: want at least 1"}
	}
	url := *rpcURL
	if url == "" {
		raw, err := os.ReadFile(filepath.Join(*dir, rpcURLFile))
		if errors.Is(err, os.ErrNotExist) {
			return &usageError{msg: fmt.Sprintf("warp: no --rpc given and no stack is running from %s (start one with devstack up)", *dir)}
		}
		if err != nil {
			return fmt.Errorf("warp: %w", err)
		}
		url = strings.TrimSpace(string(raw))
	}
	from, to, err := warpEpochs(ctx, url, *epochs)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "warped the chain at %s from epoch %d to epoch %d\n", url, from, to)
	return err
}

// warpEpochs calls the runtime's sandbox_warpEpochs and returns the epochs before and after.
func warpEpochs(ctx context.Context, url string, n uint64) (from, to uint64, err error) {
	c := rpc.New(url)
	before, err := c.GetEpochInfo(ctx, rpc.CommitmentProcessed)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the epoch from %s: %w", url, err)
	}
	var raw any
	if err := c.RPCCallForInto(ctx, &raw, "sandbox_warpEpochs", []any{map[string]uint64{"n": n}}); err != nil {
		return 0, 0, fmt.Errorf("sandbox_warpEpochs at %s: %w", url, err)
	}
	after, err := c.GetEpochInfo(ctx, rpc.CommitmentProcessed)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the epoch from %s: %w", url, err)
	}
	return before.Epoch, after.Epoch, nil
}
