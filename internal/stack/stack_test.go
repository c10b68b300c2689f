package stack

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/cli"
)

// TestStartRefusesMissingOptions: the two required options are named before anything starts.
func TestStartRefusesMissingOptions(t *testing.T) {
	_, err := Start(context.Background(), Options{Dir: t.TempDir()})
	require.ErrorContains(t, err, "TemporalCLI is required")
	_, err = Start(context.Background(), Options{TemporalCLI: "/nonexistent/temporal"})
	require.ErrorContains(t, err, "Dir is required")
}

// TestCompressionDefaultsToNone: on loopback the stack's Temporal connections skip gzip unless
// asked for it.
func TestCompressionDefaultsToNone(t *testing.T) {
	require.Equal(t, cli.CompressionNone, (&Stack{}).compression())
	require.Equal(t, "gzip", (&Stack{opts: Options{GRPCCompression: "gzip"}}).compression())
}
