package jobs

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
)

// Service is what the jobs read from the staking service (an *apiclient.Client).
type Service interface {
	NetworkAPYAll(ctx context.Context, network string, q apiclient.NetworkAPYQuery) iter.Seq2[apiclient.NetworkAPYRecord, error]
	DelegatorAPRAll(ctx context.Context, network string, q apiclient.DelegatorAPRQuery) iter.Seq2[apiclient.DelegatorRewardRecord, error]
	SSVRequestsAll(ctx context.Context, q apiclient.SSVRequestsQuery) iter.Seq2[apiclient.SetupRequest, error]
}

var _ Service = (*apiclient.Client)(nil)

// NetworkAPYNetworks and DelegatorAPRNetworks are the networks of the APY and the rewards jobs
// (defined once, in apiclient).
var (
	NetworkAPYNetworks   = apiclient.NetworkAPYNetworks
	DelegatorAPRNetworks = apiclient.DelegatorAPRNetworks
)

// ErrStoreUnavailable is the error type of a store failure: retried with backoff.
const ErrStoreUnavailable = "StoreUnavailable"

// PageLimit is the page size the jobs ask the service for (its largest).
const PageLimit = apiclient.MaxLimit

// DefaultMaxRecords bounds the records one activity call reads when the input gives no bound.
const DefaultMaxRecords = 10 * PageLimit

// Activities are the data jobs' activities. Call them through a nil pointer from workflows.
type Activities struct {
	Service Service
	Store   Store
	// Now is the clock of the SSV events (default time.Now).
	Now func() time.Time

	mu       sync.Mutex
	statuses map[string]bool // every status stakeflow_ssv_requests was set for
}

// New returns the jobs' activities over the service and the store.
func New(svc Service, st Store) *Activities { return &Activities{Service: svc, Store: st} }

func (a *Activities) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// APYInput is the input of CollectAPY.
type APYInput struct {
	Network string `json:"network"`
	// Since is where a network with nothing stored starts (zero: the service's default, a month
	// back).
	Since time.Time `json:"since,omitzero"`
	// MaxRecords bounds the records read by one call (0: DefaultMaxRecords).
	MaxRecords int `json:"maxRecords,omitempty"`
}

// CollectResult is what one collecting call did.
type CollectResult struct {
	// Read is the number of records the service returned, Upserted the rows the store wrote.
	Read     int `json:"read"`
	Upserted int `json:"upserted"`
	// Last is the newest staking period read (number or identifier), empty when none.
	Last string `json:"last,omitempty"`
	// More is true when the call stopped at MaxRecords: call again to catch up.
	More bool `json:"more"`
}

// CollectAPY collects the network APY of every staking period from the last one stored.
func (a *Activities) CollectAPY(ctx context.Context, in APYInput) (CollectResult, error) {
	if !slices.Contains(NetworkAPYNetworks, in.Network) {
		return CollectResult{}, invalid("network %q is not one of %s", in.Network, strings.Join(NetworkAPYNetworks, ", "))
	}
	q := apiclient.NetworkAPYQuery{Limit: PageLimit, StartAt: in.Since}
	last, ok, err := a.Store.LastAPYPeriod(ctx, in.Network)
	if err != nil {
		return CollectResult{}, storeErr("reading the last stored APY period", err)
	}
	if ok {
		// The last stored period is read again: its APY moves until it ends.
		q.StartNumber = &last
	}
	var res CollectResult
	var newest *apiclient.NetworkAPYRecord
	batch := newBatch(&res, "storing APYs", a.Store.UpsertAPY)
	for rec, err := range a.Service.NetworkAPYAll(ctx, in.Network, q) {
		if err != nil {
			return res, activities.ClassifyService("network APY of "+in.Network, err)
		}
		res.Read++
		if newest == nil || rec.StakingPeriodNumber >= newest.StakingPeriodNumber {
			r := rec
			newest = &r
		}
		batch.rows = append(batch.rows, APY{Network: in.Network, Period: rec.StakingPeriodNumber,
			PeriodStart: rec.StakingPeriodStart, PeriodEnd: rec.StakingPeriodEnd, UpdatedAt: rec.UpdatedAt,
			NetworkAPY: rec.NetworkAPY.String(), ConsensusAPY: rec.ConsensusLayerAPY.String(), ExecutionAPY: rec.ExecutionLayerAPY.String()})
		if err := batch.flushFull(ctx); err != nil {
			return res, err
		}
		if res.Read >= maxRecords(in.MaxRecords) {
			res.More = true
			break
		}
	}
	if err := batch.flush(ctx); err != nil {
		return res, err
	}
	if newest != nil {
		res.Last = strconv.FormatInt(newest.StakingPeriodNumber, 10)
		if ok && newest.StakingPeriodNumber == last && res.Read == 1 {
			// Only the period already stored came back: caught up.
			res.More = false
		}
		recordAPY(ctx, in.Network, newest.NetworkAPY)
	}
	return res, nil
}

// RewardsInput is the input of CollectRewards.
type RewardsInput struct {
	Network string `json:"network"`
	Address string `json:"address"`
	// Since is where an address with nothing stored starts (zero: the service's default, a month
	// back).
	Since time.Time `json:"since,omitzero"`
	// MaxRecords bounds the staking periods read by one call (0: DefaultMaxRecords).
	MaxRecords int `json:"maxRecords,omitempty"`
}

var evmAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// ValidAddress reports whether s is a delegator address of the rewards job's networks (an EVM
// address, 0x and 40 hexadecimal digits).
func ValidAddress(s string) bool { return evmAddress.MatchString(s) }

// CollectRewards collects a delegator's rewards of every staking period from the start of the
// last one stored.
func (a *Activities) CollectRewards(ctx context.Context, in RewardsInput) (CollectResult, error) {
	if !slices.Contains(DelegatorAPRNetworks, in.Network) {
		return CollectResult{}, invalid("network %q is not one of %s", in.Network, strings.Join(DelegatorAPRNetworks, ", "))
	}
	if !ValidAddress(in.Address) {
		return CollectResult{}, invalid("address %q is not an address of %s (0x and 40 hexadecimal digits)", in.Address, in.Network)
	}
	address := strings.ToLower(in.Address)
	q := apiclient.DelegatorAPRQuery{Address: address, Limit: PageLimit, StartAt: in.Since}
	start, ok, err := a.Store.LastRewardPeriodStart(ctx, in.Network, address)
	if err != nil {
		return CollectResult{}, storeErr("reading the last stored reward period", err)
	}
	if ok {
		// Read again from the last stored period: it may not have been final.
		q.StartAt = start
	}
	var res CollectResult
	batch := newBatch(&res, "storing rewards", a.Store.UpsertRewards)
	var newestStart time.Time
	for rec, err := range a.Service.DelegatorAPRAll(ctx, in.Network, q) {
		if err != nil {
			return res, activities.ClassifyService("delegator rewards of "+address, err)
		}
		res.Read++
		if !rec.StakingPeriodStart.Before(newestStart) {
			newestStart, res.Last = rec.StakingPeriodStart, rec.StakingPeriod
		}
		for _, rw := range rec.Rewards {
			validator := rw.Validator
			if validator == "" {
				validator = rec.Validator
			}
			batch.rows = append(batch.rows, Reward{Network: in.Network, Address: address, Period: rec.StakingPeriod, Type: string(rw.Type),
				Validator: validator, Currency: string(rw.Currency), Recipient: rw.Recipient,
				Amount: rw.Amount.String(), NetAmount: rw.NetAmount.String(), Fee: rw.Fee.String(),
				PeriodStart: rec.StakingPeriodStart, PeriodEnd: rec.StakingPeriodEnd, NotFinalized: rec.NotFinalized})
		}
		if err := batch.flushFull(ctx); err != nil {
			return res, err
		}
		if res.Read >= maxRecords(in.MaxRecords) {
			res.More = true
			break
		}
	}
	if err := batch.flush(ctx); err != nil {
		return res, err
	}
	if ok && res.Read == 1 && newestStart.Equal(start) {
		res.More = false
	}
	return res, nil
}

// SSVInput is the input of WatchSSV.
type SSVInput struct {
	// Offset is where this call starts in the service's list.
	Offset int `json:"offset,omitempty"`
	// MaxRecords bounds the requests read by one call (0: DefaultMaxRecords).
	MaxRecords int `json:"maxRecords,omitempty"`
}

// SSVResult is what one WatchSSV call did.
type SSVResult struct {
	Read int `json:"read"`
	// Changes counts the status changes the store recorded; Failed lists the requests that
	// entered a failed status.
	Changes int      `json:"changes"`
	Failed  []string `json:"failed,omitempty"`
	// Next is the offset of the next call when More is true.
	Next int  `json:"next"`
	More bool `json:"more"`
}

// FailedStatus reports whether a set-up request status is a failure: "failed", or a status
// ending in "-failed" or "_failed" (e.g. "registration-failed").
func FailedStatus(s string) bool {
	s = strings.ToLower(s)
	return s == "failed" || strings.HasSuffix(s, "-failed") || strings.HasSuffix(s, "_failed")
}

// WatchSSV reads the set-up requests from in.Offset, upserts their statuses, logs each request
// that entered a failed status at error level and refreshes stakeflow_ssv_requests.
func (a *Activities) WatchSSV(ctx context.Context, in SSVInput) (SSVResult, error) {
	if in.Offset < 0 || in.Offset > apiclient.MaxSSVOffset {
		return SSVResult{}, invalid("offset %d is not between 0 and %d", in.Offset, apiclient.MaxSSVOffset)
	}
	log := activity.GetLogger(ctx)
	res := SSVResult{Next: in.Offset}
	batch := make([]SSVRequest, 0, PageLimit)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		events, err := a.Store.UpsertSSVRequests(ctx, batch, a.now())
		if err != nil {
			return storeErr("storing SSV requests", err)
		}
		for _, ev := range events {
			res.Changes++
			if FailedStatus(ev.To) && !FailedStatus(ev.From) {
				res.Failed = append(res.Failed, ev.RequestID)
				log.Error("SSV set-up request failed", "requestId", ev.RequestID, "from", ev.From, "status", ev.To)
			} else {
				log.Info("SSV set-up request status changed", "requestId", ev.RequestID, "from", ev.From, "status", ev.To)
			}
		}
		batch = batch[:0]
		activity.RecordHeartbeat(ctx, res)
		return nil
	}
	at := a.now()
	for r, err := range a.Service.SSVRequestsAll(ctx, apiclient.SSVRequestsQuery{Limit: PageLimit, Offset: in.Offset}) {
		if err != nil {
			return res, activities.ClassifyService("SSV set-up requests", err)
		}
		res.Read++
		res.Next++
		batch = append(batch, SSVRequest{ID: r.ID, Status: r.Status, ValidatorsCount: r.ValidatorsCount,
			AmountPerValidator: r.AmountPerValidator, Type: r.Type, SSVOwnerAddress: r.SSVOwnerAddress,
			WithdrawalAddress: r.WithdrawalAddress, FeeRecipientAddress: r.FeeRecipientAddress, UpdatedAt: at})
		if len(batch) == PageLimit {
			if err := flush(); err != nil {
				return res, err
			}
		}
		if res.Read >= maxRecords(in.MaxRecords) {
			res.More = true
			break
		}
	}
	if err := flush(); err != nil {
		return res, err
	}
	counts, err := a.Store.SSVStatusCounts(ctx)
	if err != nil {
		return res, storeErr("counting SSV requests", err)
	}
	a.recordSSV(ctx, counts)
	return res, nil
}

// maxRecords is the bound of one call: n, DefaultMaxRecords when n is 0, and at least 2 (a call
// reads the last stored period again, so a bound of 1 would never move on).
func maxRecords(n int) int {
	if n <= 0 {
		return DefaultMaxRecords
	}
	return max(n, 2)
}

func invalid(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), activities.ErrInvalidInput, nil)
}

// storeErr is a store failure, retried with backoff unless the store said it is final.
func storeErr(what string, err error) error {
	msg := fmt.Sprintf("%s: %v", what, err)
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.NonRetryable() {
		return temporal.NewNonRetryableApplicationError(msg, ErrStoreUnavailable, nil)
	}
	return temporal.NewApplicationError(msg, ErrStoreUnavailable)
}

// batch holds rows read from the service until they are written, PageLimit at a time, counting
// what the store changed in res and heartbeating res after each write.
type batch[T any] struct {
	rows   []T
	res    *CollectResult
	what   string
	upsert func(context.Context, []T) (int, error)
}

func newBatch[T any](res *CollectResult, what string, upsert func(context.Context, []T) (int, error)) *batch[T] {
	return &batch[T]{rows: make([]T, 0, PageLimit), res: res, what: what, upsert: upsert}
}

// flushFull writes the rows once PageLimit of them wait.
func (b *batch[T]) flushFull(ctx context.Context) error {
	if len(b.rows) < PageLimit {
		return nil
	}
	return b.flush(ctx)
}

// flush writes the rows that wait.
func (b *batch[T]) flush(ctx context.Context) error {
	if len(b.rows) == 0 {
		return nil
	}
	n, err := b.upsert(ctx, b.rows)
	if err != nil {
		return storeErr(b.what, err)
	}
	b.res.Upserted += n
	b.rows = b.rows[:0]
	activity.RecordHeartbeat(ctx, *b.res)
	return nil
}
