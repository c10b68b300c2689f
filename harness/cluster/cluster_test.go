package cluster

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFreeLowPortsFitASmallint: Temporal stores membership ports in a PostgreSQL smallint
// (at most 32767); the ports are distinct and free.
func TestFreeLowPortsFitASmallint(t *testing.T) {
	ports, err := freeLowPorts(10)
	require.NoError(t, err)
	require.Len(t, ports, 10)
	seen := map[int]bool{}
	for _, p := range ports {
		assert.Less(t, p, 32768)
		assert.False(t, seen[p], "port %d twice", p)
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		require.NoError(t, err, "port %d is not free", p)
		require.NoError(t, l.Close())
	}
}

// TestCopyKeysCopiesKeysPrivately: every *.json key, and nothing else, lands as mode 0600 with
// the same bytes (the worker refuses a key file the group or others may read).
func TestCopyKeysCopiesKeysPrivately(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(filepath.Join(src, "a.json"), []byte("[1,2]"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "notes.txt"), []byte("x"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(src, "sub.json"), 0o700))
	require.NoError(t, copyKeys(src, dst))

	entries, err := os.ReadDir(dst)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	info, err := os.Stat(filepath.Join(dst, "a.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	raw, err := os.ReadFile(filepath.Join(dst, "a.json"))
	require.NoError(t, err)
	assert.Equal(t, "[1,2]", string(raw))
}
