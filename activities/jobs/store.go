package jobs

import (
	"context"
	"time"

	"github.com/stakeflow/stakeflow/store"
)

// Store is what the jobs need from the store (package store's *DB; tests use jobstest's).
type Store interface {
	UpsertAPY(ctx context.Context, rows []APY) (int, error)
	LastAPYPeriod(ctx context.Context, network string) (int64, bool, error)
	UpsertRewards(ctx context.Context, rows []Reward) (int, error)
	LastRewardPeriodStart(ctx context.Context, network, address string) (time.Time, bool, error)
	UpsertSSVRequests(ctx context.Context, rows []SSVRequest, at time.Time) ([]SSVEvent, error)
	SSVStatusCounts(ctx context.Context) (map[string]int, error)
	Reader
}

// Reader reads the store back (the starter's export and listings).
type Reader interface {
	APYs(ctx context.Context, q Query) ([]APY, error)
	Rewards(ctx context.Context, q Query) ([]Reward, error)
	SSVRequests(ctx context.Context, q Query) ([]SSVRequest, error)
}

// The records are the store's own.
type (
	APY        = store.APY
	Reward     = store.Reward
	SSVRequest = store.SSVRequest
	SSVEvent   = store.SSVEvent
	Query      = store.Query
)

var _ Store = (*store.DB)(nil)
