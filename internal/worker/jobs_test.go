package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"

	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
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

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://stakeflow:s3cr3t@db:5432/x": "postgres://stakeflow:xxxxx@db:5432/x",
		"postgres://stakeflow@db/x":             "postgres://stakeflow@db/x",
		"postgres://db/x":                       "postgres://db/x",
		"sqlite:/tmp/a.db":                      "sqlite:/tmp/a.db",
		"postgres://u:p@ss@db/x":                "postgres://u:xxxxx@db/x",
	} {
		assert.Equal(t, want, RedactDSN(in), in)
	}
}

// TestStoreThatDoesNotOpenStopsTheWorker: a store that cannot be opened is an error at start that
// names the store without its password.
func TestStoreThatDoesNotOpenStopsTheWorker(t *testing.T) {
	old := OpenStore
	t.Cleanup(func() { OpenStore = old })
	OpenStore = func(context.Context, string) (actjobs.Store, error) {
		return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
	}
	cfg := defaultConfig(t)
	cfg.Store = "postgres://stakeflow:s3cr3t@127.0.0.1:1/stakeflow"
	_, _, err := newJobActivities(context.Background(), cfg, zap.NewNop(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "opening the store postgres://stakeflow:xxxxx@127.0.0.1:1/stakeflow (--store): dial tcp 127.0.0.1:1: connection refused")
	assert.NotContains(t, err.Error(), "s3cr3t")

	OpenStore = func(context.Context, string) (actjobs.Store, error) { return jobstest.New(), nil }
	acts, closeStore, err := newJobActivities(context.Background(), cfg, zap.NewNop(), nil)
	require.NoError(t, err)
	closeStore()
	assert.NotNil(t, acts.Store)
}

// TestNoStoreBuiltIn: without a store the worker starts and each job call fails, non-retryably,
// saying why.
func TestNoStoreBuiltIn(t *testing.T) {
	cfg := defaultConfig(t)
	cfg.DataDir = t.TempDir() + "/not-created"
	acts, closeStore, err := newJobActivities(context.Background(), cfg, zap.NewNop(), nil)
	require.NoError(t, err)
	defer closeStore()
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	_, err = env.ExecuteActivity(acts.CollectAPY, actjobs.APYInput{Network: "solana"})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "got %v", err)
	assert.Equal(t, actjobs.ErrStoreUnavailable, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	assert.Contains(t, appErr.Error(), "store not built in")
	assert.NoDirExists(t, cfg.DataDir, "nothing is created for a store this build cannot open")
}
