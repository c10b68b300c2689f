package jobs

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"
)

// Store is what the jobs need from the store (package store's *DB). The record types below have
// the fields of the store's own; once both live in one build, each becomes an alias of the
// store's type (type APY = store.APY, ...) and *store.DB satisfies Store as it is.
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

// APY is one staking period's network APY. The APYs are exact decimal text.
type APY struct {
	Network                                string
	Period                                 int64
	PeriodStart, PeriodEnd, UpdatedAt      time.Time
	NetworkAPY, ConsensusAPY, ExecutionAPY string
}

// Reward is one reward of a delegator in one staking period. Amount, NetAmount and Fee are exact
// decimal text.
type Reward struct {
	Network, Address, Period, Type string
	Validator, Currency, Recipient string
	Amount, NetAmount, Fee         string
	PeriodStart, PeriodEnd         time.Time
	NotFinalized                   bool
}

// SSVRequest is the stored state of one SSV set-up request.
type SSVRequest struct {
	ID, Status                                                                        string
	ValidatorsCount                                                                   int
	AmountPerValidator, Type, SSVOwnerAddress, WithdrawalAddress, FeeRecipientAddress string
	UpdatedAt                                                                         time.Time
}

// SSVEvent is one status change of a set-up request, as the store recorded it.
type SSVEvent struct {
	RequestID, From, To string
	At                  time.Time
}

// Query selects stored rows; zero fields do not filter.
type Query struct {
	Network, Address, Status string
	From, To                 time.Time
}

// Unavailable is a Store whose every call fails non-retryably with err: the jobs' store when the
// worker has none.
func Unavailable(err error) Store { return unavailable{err} }

type unavailable struct{ err error }

func (u unavailable) fail() error {
	return temporal.NewNonRetryableApplicationError("store: "+u.err.Error(), ErrStoreUnavailable, nil)
}

func (u unavailable) UpsertAPY(context.Context, []APY) (int, error) { return 0, u.fail() }
func (u unavailable) LastAPYPeriod(context.Context, string) (int64, bool, error) {
	return 0, false, u.fail()
}
func (u unavailable) UpsertRewards(context.Context, []Reward) (int, error) { return 0, u.fail() }
func (u unavailable) LastRewardPeriodStart(context.Context, string, string) (time.Time, bool, error) {
	return time.Time{}, false, u.fail()
}
func (u unavailable) UpsertSSVRequests(context.Context, []SSVRequest, time.Time) ([]SSVEvent, error) {
	return nil, u.fail()
}
func (u unavailable) SSVStatusCounts(context.Context) (map[string]int, error) { return nil, u.fail() }
func (u unavailable) APYs(context.Context, Query) ([]APY, error)              { return nil, u.fail() }
func (u unavailable) Rewards(context.Context, Query) ([]Reward, error)        { return nil, u.fail() }
func (u unavailable) SSVRequests(context.Context, Query) ([]SSVRequest, error) {
	return nil, u.fail()
}
