package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyFileOthersMayReadStopsTheWorker: a key file the group or others may read stops the
// worker at start, before it connects anywhere, with an error that names the file.
func TestKeyFileOthersMayReadStopsTheWorker(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "staker.json")
	ints := "[" // 64 bytes of a keypair: any values; the mode is refused before they are read
	for i := 0; i < 64; i++ {
		if i > 0 {
			ints += ","
		}
		ints += "1"
	}
	require.NoError(t, os.WriteFile(key, []byte(ints+"]"), 0o600))
	require.NoError(t, os.Chmod(key, 0o644))
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte("t"), 0o600))

	err := run(context.Background(), []string{
		"--service-url", "http://127.0.0.1:1", "--service-token-file", token, "--solana-keys", dir,
		"--solana-rpc", "testnet=http://127.0.0.1:1", "--health-addr", "", "--log-level", "error", "--data-dir", t.TempDir(),
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), key)
	assert.Contains(t, err.Error(), "chmod 600")
}

func TestBadFlagsStopTheWorker(t *testing.T) {
	err := run(context.Background(), []string{"--max-commission", "101", "--health-addr", ""})
	require.Error(t, err)
	for _, want := range []string{"--service-url is required", "--max-commission 101"} {
		assert.Contains(t, err.Error(), want)
	}
}
