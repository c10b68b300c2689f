package main

import (
	"context"
	"fmt"
	"io"
)

// run dispatches to the demo, up or warp command.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &usageError{msg: "no command given"}
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "-h", "--help", "help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	case "demo", "up":
		cfg, err := parseConfig(cmd, rest)
		if err != nil {
			return err
		}
		if cmd == "demo" {
			return runDemo(ctx, cfg, stdout, stderr)
		}
		return runUp(ctx, cfg, stdout, stderr)
	case "warp":
		return runWarp(ctx, rest, stdout)
	default:
		return &usageError{msg: fmt.Sprintf("unknown command %q (see devstack --help)", cmd)}
	}
}
