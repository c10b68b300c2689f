package jobs

import (
	"context"
	"errors"
	"fmt"
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

// Service is what the jobs read from the staking service (an *apiclient.Client): one page per
// call, so that the jobs check each page's progress, count the requests and pace them.
type Service interface {
	NetworkAPY(ctx context.Context, network string, q apiclient.NetworkAPYQuery) (*apiclient.NetworkAPYPage, error)
	DelegatorAPR(ctx context.Context, network string, q apiclient.DelegatorAPRQuery) (*apiclient.DelegatorRewardsPage, error)
	SSVRequests(ctx context.Context, q apiclient.SSVRequestsQuery) (*apiclient.SetupRequestPage, error)
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

// DefaultMaxRequests bounds the requests one activity call sends when the input gives no bound
// (the job gives the rest of its run's cap).
const DefaultMaxRequests = 2 * DefaultMaxRecords / PageLimit

// Activities are the data jobs' activities. Call them through a nil pointer from workflows.
type Activities struct {
	Service Service
	Store   Store
	// Now is the clock of the SSV events and of the pacing (default time.Now).
	Now func() time.Time
	// Sleep waits between paced requests (default: a timer that ctx cancels).
	Sleep func(ctx context.Context, d time.Duration) error
	// MinInterval is the least time between two requests of the jobs (default 0: only the
	// service's rate-limit headers pace them).
	MinInterval time.Duration

	mu       sync.Mutex
	statuses map[string]bool // every status stakeflow_ssv_requests was set for
	lastAt   time.Time       // the last request's turn (pace)
	interval time.Duration   // between two requests, from the rate-limit headers (learnPace)
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
	// MaxRequests bounds the requests sent by one call (0: DefaultMaxRequests).
	MaxRequests int `json:"maxRequests,omitempty"`
}

// CollectResult is what one collecting call did.
type CollectResult struct {
	// Read is the number of records the service returned, Upserted the rows the store wrote.
	Read     int `json:"read"`
	Upserted int `json:"upserted"`
	// Last is the newest staking period read (number or identifier), empty when none.
	Last string `json:"last,omitempty"`
	// More is true when the call stopped at MaxRecords or MaxRequests: call again to catch up.
	More bool `json:"more"`
	// Requests counts the requests sent; Capped is true when MaxRequests stopped the call.
	Requests int  `json:"requests,omitempty"`
	Capped   bool `json:"capped,omitempty"`
	// Flagged counts the rows stored flagged (they contradict themselves or the chain).
	Flagged int `json:"flagged,omitempty"`
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
	what := "network APY of " + in.Network
	pg := newPager(a, what, 0, apiclient.MaxDataOffset, maxRequests(in.MaxRequests),
		func(r apiclient.NetworkAPYRecord) string {
			return "period " + strconv.FormatInt(r.StakingPeriodNumber, 10)
		},
		func(ctx context.Context, limit, offset int) (page[apiclient.NetworkAPYRecord], error) {
			q.Limit, q.Offset = limit, offset
			p, err := a.Service.NetworkAPY(ctx, in.Network, q)
			if err != nil {
				return page[apiclient.NetworkAPYRecord]{}, err
			}
			return page[apiclient.NetworkAPYRecord]{items: p.List, offset: p.Offset}, nil
		})
	for rec, err := range pg.all(ctx) {
		if err != nil {
			return res, serviceErr(what, err)
		}
		res.Read++
		if newest == nil || rec.StakingPeriodNumber >= newest.StakingPeriodNumber {
			r := rec
			newest = &r
		}
		row := checkAPY(in.Network, rec)
		if row.Flag != "" {
			res.Flagged++
			activity.GetLogger(ctx).Warn("Network APY stored flagged", "network", in.Network, "period", rec.StakingPeriodNumber, "flag", row.Flag)
		}
		batch.rows = append(batch.rows, row)
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
	res.More = res.More || pg.capped
	if newest != nil {
		res.Last = strconv.FormatInt(newest.StakingPeriodNumber, 10)
		if ok && newest.StakingPeriodNumber == last && res.Read == 1 {
			// Only the period already stored came back: caught up.
			res.More = false
		}
		if row := checkAPY(in.Network, *newest); row.Flag == "" {
			recordAPY(ctx, in.Network, newest.NetworkAPY) // a flagged APY is not shown as the network's
		}
	}
	res.Requests, res.Capped = pg.requests, pg.capped
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
	// MaxRequests bounds the requests sent by one call (0: DefaultMaxRequests).
	MaxRequests int `json:"maxRequests,omitempty"`
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
	what := "delegator rewards of " + address
	pg := newPager(a, what, 0, apiclient.MaxDataOffset, maxRequests(in.MaxRequests),
		func(r apiclient.DelegatorRewardRecord) string { return "period " + strconv.Quote(r.StakingPeriod) },
		func(ctx context.Context, limit, offset int) (page[apiclient.DelegatorRewardRecord], error) {
			q.Limit, q.Offset = limit, offset
			p, err := a.Service.DelegatorAPR(ctx, in.Network, q)
			if err != nil {
				return page[apiclient.DelegatorRewardRecord]{}, err
			}
			return page[apiclient.DelegatorRewardRecord]{items: p.List, offset: int(p.Offset)}, nil
		})
	for rec, err := range pg.all(ctx) {
		if err != nil {
			return res, serviceErr(what, err)
		}
		res.Read++
		if !rec.StakingPeriodStart.Before(newestStart) {
			newestStart, res.Last = rec.StakingPeriodStart.Time, rec.StakingPeriod
		}
		for _, rw := range rec.Rewards {
			row := checkReward(in.Network, address, rec, rw)
			if row.Flag != "" {
				res.Flagged++
				activity.GetLogger(ctx).Warn("Delegator reward stored flagged", "address", address, "period", rec.StakingPeriod,
					"type", row.Type, "flag", row.Flag)
			}
			batch.rows = append(batch.rows, row)
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
	res.More = res.More || pg.capped
	if ok && res.Read == 1 && newestStart.Equal(start) {
		res.More = false
	}
	res.Requests, res.Capped = pg.requests, pg.capped
	return res, nil
}

// SSVInput is the input of WatchSSV.
type SSVInput struct {
	// Offset is where this call starts in the service's list.
	Offset int `json:"offset,omitempty"`
	// MaxRecords bounds the requests read by one call (0: DefaultMaxRecords).
	MaxRecords int `json:"maxRecords,omitempty"`
	// MaxRequests bounds the requests sent to the service by one call (0: DefaultMaxRequests).
	MaxRequests int `json:"maxRequests,omitempty"`
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
	// Requests counts the requests sent; Capped is true when MaxRequests stopped the call.
	Requests int  `json:"requests,omitempty"`
	Capped   bool `json:"capped,omitempty"`
	// Flagged counts the requests stored flagged.
	Flagged int `json:"flagged,omitempty"`
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
	const what = "SSV set-up requests"
	pg := newPager(a, what, in.Offset, apiclient.MaxSSVOffset, maxRequests(in.MaxRequests),
		func(r apiclient.SetupRequest) string { return "request " + strconv.Quote(r.ID) },
		func(ctx context.Context, limit, offset int) (page[apiclient.SetupRequest], error) {
			p, err := a.Service.SSVRequests(ctx, apiclient.SSVRequestsQuery{Limit: limit, Offset: offset})
			if err != nil {
				return page[apiclient.SetupRequest]{}, err
			}
			return page[apiclient.SetupRequest]{items: p.List, offset: p.Offset, total: p.TotalCount}, nil
		})
	for r, err := range pg.all(ctx) {
		if err != nil {
			return res, serviceErr(what, err)
		}
		res.Read++
		row := checkSSV(r, at)
		if row.Flag != "" {
			res.Flagged++
			log.Warn("SSV set-up request stored flagged", "requestId", r.ID, "flag", row.Flag)
		}
		batch = append(batch, row)
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
	res.Next, res.More, res.Requests, res.Capped = pg.pos, res.More || pg.capped, pg.requests, pg.capped
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

// maxRequests is the request bound of one call: n, DefaultMaxRequests when n is 0.
func maxRequests(n int) int {
	if n <= 0 {
		return DefaultMaxRequests
	}
	return n
}

// serviceErr is a failure of the pager (already classified) or of the service (classified here).
func serviceErr(what string, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return err
	}
	return activities.ClassifyService(what, err)
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
