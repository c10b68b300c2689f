package worker

import (
	"context"
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/store"
)

// OpenStore opens the data jobs' store from a DSN ("postgres://..." or "sqlite:PATH"): the
// store package's; tests may put another in its place.
var OpenStore = func(ctx context.Context, dsn string) (any, error) {
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// StoreDSN is the store the worker opens: --store, else the SQLite file stakeflow.db in
// --data-dir.
func (c *Config) StoreDSN() string {
	if c.Store != "" {
		return c.Store
	}
	return "sqlite:" + filepath.Join(c.DataDir, "stakeflow.db")
}

// openStore opens the store (the SQLite file's directory is created) and returns it with a
// function that closes it. A store that cannot be opened is an error naming the DSN (without its
// password).
func openStore(ctx context.Context, cfg Config, logger *zap.Logger) (any, func(), error) {
	dsn := cfg.StoreDSN()
	st, err := OpenStore(ctx, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the store %s (--store): %w", store.RedactDSN(dsn), err)
	}
	closeStore := func() {}
	if c, ok := st.(interface{ Close() error }); ok {
		closeStore = func() {
			if err := c.Close(); err != nil {
				logger.Warn("Closing the store", zap.Error(err))
			}
		}
	}
	logger.Info("Store open", zap.String("store", store.RedactDSN(dsn)))
	return st, closeStore, nil
}
