package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"go.uber.org/zap"

	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
)

// ErrStoreNotBuiltIn is OpenStore's answer in a build without a store.
var ErrStoreNotBuiltIn = errors.New("store not built in")

// OpenStore opens the data jobs' store from a DSN ("postgres://..." or "sqlite:PATH"). A build
// with a store sets it; the default answers ErrStoreNotBuiltIn.
var OpenStore = noStore

func noStore(context.Context, string) (actjobs.Store, error) { return nil, ErrStoreNotBuiltIn }

// storeBuiltIn reports whether OpenStore was set to a store.
func storeBuiltIn() bool {
	return reflect.ValueOf(OpenStore).Pointer() != reflect.ValueOf(noStore).Pointer()
}

// StoreDSN is the store the worker opens: --store, else the SQLite file stakeflow.db in
// --data-dir.
func (c *Config) StoreDSN() string {
	if c.Store != "" {
		return c.Store
	}
	return "sqlite:" + filepath.Join(c.DataDir, "stakeflow.db")
}

// newJobActivities opens the store and returns the data jobs' activities over it and svc, and a
// function that closes the store. A store that cannot be opened is an error naming the DSN
// (without its password); in a build without a store the jobs are registered all the same and
// each call fails, non-retryably, saying so.
func newJobActivities(ctx context.Context, cfg Config, logger *zap.Logger, svc actjobs.Service) (*actjobs.Activities, func(), error) {
	dsn := cfg.StoreDSN()
	if cfg.Store == "" && cfg.DataDir != "" && storeBuiltIn() {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("--data-dir %s: %w", cfg.DataDir, err)
		}
	}
	st, err := OpenStore(ctx, dsn)
	if errors.Is(err, ErrStoreNotBuiltIn) {
		logger.Warn("No store in this build: the data jobs fail until one is", zap.String("store", RedactDSN(dsn)))
		return actjobs.New(svc, actjobs.Unavailable(err)), func() {}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("opening the store %s (--store): %w", RedactDSN(dsn), err)
	}
	closeStore := func() {}
	if c, ok := st.(interface{ Close() error }); ok {
		closeStore = func() {
			if err := c.Close(); err != nil {
				logger.Warn("Closing the store", zap.Error(err))
			}
		}
	}
	logger.Info("Store open", zap.String("store", RedactDSN(dsn)))
	return actjobs.New(svc, st), closeStore, nil
}

// RedactDSN hides the password of a DSN's user info ("postgres://user:secret@host/db" becomes
// "postgres://user:xxxxx@host/db").
func RedactDSN(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return dsn
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return dsn
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}
