package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "devstack:", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is 0 on success, 2 for a command line that cannot be run, 130 when a signal
// stopped the command, and 1 for any other failure.
func exitCode(err error) int {
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		return 2
	case errors.Is(err, errInterrupted):
		return 130
	default:
		return 1
	}
}
