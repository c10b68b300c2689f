// Package jobstest holds an in-memory jobs.Store for tests.
package jobstest

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/stakeflow/stakeflow/activities/jobs"
)

// Store is an in-memory jobs.Store. Upserts replace rows by key: (network, period) for APYs,
// (network, address, period, type, validator) for rewards, the ID for SSV requests. A set-up
// request whose status differs from the stored one (or that is new) yields an event.
type Store struct {
	mu      sync.Mutex
	apys    map[apyKey]jobs.APY
	rewards map[rewardKey]jobs.Reward
	ssv     map[string]jobs.SSVRequest
	// Events are every SSV event recorded, in order.
	Events []jobs.SSVEvent
	// Err, when set, fails every call.
	Err error
	// Calls counts the upserts.
	Calls int
}

type apyKey struct {
	network string
	period  int64
}

type rewardKey struct{ network, address, period, typ, validator string }

var _ jobs.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{apys: map[apyKey]jobs.APY{}, rewards: map[rewardKey]jobs.Reward{}, ssv: map[string]jobs.SSVRequest{}}
}

// UpsertAPY stores rows.
func (s *Store) UpsertAPY(_ context.Context, rows []jobs.APY) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Err != nil {
		return 0, s.Err
	}
	s.Calls++
	for _, r := range rows {
		s.apys[apyKey{r.Network, r.Period}] = r
	}
	return len(rows), nil
}

// LastAPYPeriod is the highest period stored for network.
func (s *Store) LastAPYPeriod(_ context.Context, network string) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Err != nil {
		return 0, false, s.Err
	}
	var last int64
	ok := false
	for k := range s.apys {
		if k.network == network && (!ok || k.period > last) {
			last, ok = k.period, true
		}
	}
	return last, ok, nil
}

// UpsertRewards stores rows.
func (s *Store) UpsertRewards(_ context.Context, rows []jobs.Reward) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Err != nil {
		return 0, s.Err
	}
	s.Calls++
	for _, r := range rows {
		s.rewards[rewardKey{r.Network, r.Address, r.Period, r.Type, r.Validator}] = r
	}
	return len(rows), nil
}

// LastRewardPeriodStart is the latest period start stored for the address.
func (s *Store) LastRewardPeriodStart(_ context.Context, network, address string) (time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Err != nil {
		return time.Time{}, false, s.Err
	}
	var last time.Time
	ok := false
	for k, r := range s.rewards {
		if k.network == network && k.address == address && (!ok || r.PeriodStart.After(last)) {
			last, ok = r.PeriodStart, true
		}
	}
	return last, ok, nil
}

// UpsertSSVRequests stores rows and returns the status changes.
func (s *Store) UpsertSSVRequests(_ context.Context, rows []jobs.SSVRequest, at time.Time) ([]jobs.SSVEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Err != nil {
		return nil, s.Err
	}
	s.Calls++
	var events []jobs.SSVEvent
	for _, r := range rows {
		old, had := s.ssv[r.ID]
		if !had || old.Status != r.Status {
			ev := jobs.SSVEvent{RequestID: r.ID, From: old.Status, To: r.Status, At: at}
			events = append(events, ev)
			s.Events = append(s.Events, ev)
		}
		s.ssv[r.ID] = r
	}
	return events, nil
}

// SSVStatusCounts counts the requests by status.
func (s *Store) SSVStatusCounts(context.Context) (map[string]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Err != nil {
		return nil, s.Err
	}
	out := map[string]int{}
	for _, r := range s.ssv {
		out[r.Status]++
	}
	return out, nil
}

// APYs lists the APYs of q.Network (all when empty) whose period starts in [From, To), by network
// and period.
func (s *Store) APYs(_ context.Context, q jobs.Query) ([]jobs.APY, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []jobs.APY{}
	for _, r := range s.apys {
		if (q.Network == "" || r.Network == q.Network) && in(r.PeriodStart, q) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b jobs.APY) int {
		return cmp.Or(cmp.Compare(a.Network, b.Network), cmp.Compare(a.Period, b.Period))
	})
	return out, nil
}

// Rewards lists the rewards matching q, by period start, period and type.
func (s *Store) Rewards(_ context.Context, q jobs.Query) ([]jobs.Reward, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []jobs.Reward{}
	for _, r := range s.rewards {
		if (q.Network == "" || r.Network == q.Network) && (q.Address == "" || r.Address == q.Address) && in(r.PeriodStart, q) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b jobs.Reward) int {
		return cmp.Or(a.PeriodStart.Compare(b.PeriodStart), cmp.Compare(a.Period, b.Period), cmp.Compare(a.Type, b.Type))
	})
	return out, nil
}

// SSVRequests lists the requests of q.Status (all when empty) by ID.
func (s *Store) SSVRequests(_ context.Context, q jobs.Query) ([]jobs.SSVRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []jobs.SSVRequest{}
	for _, r := range s.ssv {
		if q.Status == "" || r.Status == q.Status {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b jobs.SSVRequest) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

func in(t time.Time, q jobs.Query) bool {
	return (q.From.IsZero() || !t.Before(q.From)) && (q.To.IsZero() || t.Before(q.To))
}
