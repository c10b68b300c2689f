package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMissingKeysetAndTokenStopTheServer: without a keyset or a token file the command stops at
// start, and the error names both flags.
func TestMissingKeysetAndTokenStopTheServer(t *testing.T) {
	t.Setenv("STAKEFLOW_PAYLOAD_KEYSET", "")
	t.Setenv("STAKEFLOW_TOKEN_FILE", "")
	err := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--log-level", "error"}, nil)
	require.Error(t, err)
	for _, want := range []string{"--payload-keyset is required", "--token-file is required"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestEnvironmentTwinsAreRead(t *testing.T) {
	t.Setenv("STAKEFLOW_PAYLOAD_KEYSET", "/nonexistent/keyset.json")
	t.Setenv("STAKEFLOW_TOKEN_FILE", "/nonexistent/tokens")
	err := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--log-level", "error"}, nil)
	require.ErrorContains(t, err, "/nonexistent/keyset.json", "STAKEFLOW_PAYLOAD_KEYSET names the keyset")
}

func TestStrayArgumentIsRefused(t *testing.T) {
	err := run(context.Background(), []string{"serve"}, nil)
	require.ErrorContains(t, err, `unexpected argument "serve"`)
}
