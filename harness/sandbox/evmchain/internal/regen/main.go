// Command regen recompiles harness/sandbox/evmchain/contracts into harness/sandbox/evmchain/artifacts with the
// pinned solc. Run it from harness/sandbox/evmchain (go generate does).
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain/solc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "regen:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := "artifacts"
	old, err := filepath.Glob(filepath.Join(out, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return solc.Compile(ctx, "", "contracts", out)
}
