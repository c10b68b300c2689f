// Command starter is stakeflow's admin tool: it starts, approves, rejects, cancels, shows and
// lists staking operations, and registers the namespace's search attributes. See
// internal/starter for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/modules/all"
)

func main() {
	os.Exit(run())
}

// run runs one starter command and returns the process's exit code: 0 on success, 2 for a command
// line that cannot be run, 1 for any other failure.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := starter.Run(ctx, os.Args[1:], os.Stdout, nil, all.StarterGroups()...)
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "starter:", err)
	var usage *starter.UsageError
	if errors.As(err, &usage) {
		return 2
	}
	return 1
}
