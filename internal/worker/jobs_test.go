package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/activities/jobs/jobstest"
)

func TestStoreDSN(t *testing.T) {
	cfg := defaultConfig(t)
	assert.Equal(t, "sqlite:data/stakeflow.db", cfg.StoreDSN(), "default: SQLite in --data-dir")
	cfg.DataDir = "/var/lib/stakeflow"
	assert.Equal(t, "sqlite:/var/lib/stakeflow/stakeflow.db", cfg.StoreDSN())
	cfg.Store = "postgres://u:p@db/stakeflow"
	assert.Equal(t, "postgres://u:p@db/stakeflow", cfg.StoreDSN())
}

func TestCheckDSN(t *testing.T) {
	for dsn, ok := range map[string]bool{
		"postgres://u:p@db:5432/stakeflow?sslmode=disable": true,
		"postgresql://db/stakeflow":                        true,
		"sqlite:/var/lib/stakeflow.db":                     true,
		"/var/lib/stakeflow.db":                            true,
		"mysql://u:secret@db/stakeflow":                    false,
		"sqlite:":                                          false,
	} {
		err := checkDSN(dsn)
		assert.Equal(t, ok, err == nil, "%s: %v", dsn, err)
		if err != nil {
			assert.NotContains(t, err.Error(), "secret", "no password in errors")
		}
	}
}

// TestStoreThatDoesNotOpenStopsTheWorker: a store that cannot be opened is an error at start that
// names the store without its password.
func TestStoreThatDoesNotOpenStopsTheWorker(t *testing.T) {
	old := OpenStore
	t.Cleanup(func() { OpenStore = old })
	OpenStore = func(context.Context, string) (any, error) {
		return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
	}
	cfg := defaultConfig(t)
	cfg.Store = "postgres://stakeflow:s3cr3t@127.0.0.1:1/stakeflow"
	_, _, err := openStore(context.Background(), cfg, zap.NewNop())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "opening the store postgres://stakeflow:xxxxx@127.0.0.1:1/stakeflow (--store): dial tcp 127.0.0.1:1: connection refused")
	assert.NotContains(t, err.Error(), "s3cr3t")

	OpenStore = func(context.Context, string) (any, error) { return jobstest.New(), nil }
	st, closeStore, err := openStore(context.Background(), cfg, zap.NewNop())
	require.NoError(t, err)
	closeStore()
	assert.NotNil(t, st)
}

// TestDefaultStoreIsSQLiteInTheDataDir: without --store the worker opens (and migrates) the SQLite
// file stakeflow.db in --data-dir, creating the directory, readable by its owner alone.
func TestDefaultStoreIsSQLiteInTheDataDir(t *testing.T) {
	cfg := defaultConfig(t)
	cfg.DataDir = t.TempDir() + "/not-created"
	_, closeStore, err := openStore(context.Background(), cfg, zap.NewNop())
	require.NoError(t, err)
	defer closeStore()
	fi, err := os.Stat(filepath.Join(cfg.DataDir, "stakeflow.db"))
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o077, "mode %v", fi.Mode().Perm())
}
