package stack

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/codec"
)

// TestCodecServerNeedsAKeyset: a codec server without the keyset it decodes with is refused before
// anything starts.
func TestCodecServerNeedsAKeyset(t *testing.T) {
	_, err := Start(context.Background(), Options{TemporalAddress: "127.0.0.1:1", Dir: t.TempDir(), CodecServer: true})
	require.ErrorContains(t, err, "CodecServer requires PayloadKeyset")
}

// TestWriteNewKeysetWritesAKeysetOnlyItsOwnerReads: the keyset loads, is 0600, and a second write
// to the same file is refused rather than losing the key the first one holds.
func TestWriteNewKeysetWritesAKeysetOnlyItsOwnerReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyset.json")
	require.NoError(t, WriteNewKeyset(path, "local-1"))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	ks, err := codec.LoadKeyset(path)
	require.NoError(t, err)
	require.Equal(t, "local-1", ks.Current())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	require.ErrorContains(t, WriteNewKeyset(path, "local-2"), path)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
}
