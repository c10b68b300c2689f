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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := starter.Run(ctx, os.Args[1:], os.Stdout, nil)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starter:", err)
		var usage *starter.UsageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
