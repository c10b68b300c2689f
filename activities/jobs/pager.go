package jobs

import (
	"context"
	"fmt"
	"iter"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/apiclient"
)

// ErrPageNotAdvancing is the error type of a service whose pages do not advance: a page that
// answers another offset than the one asked, or holds only rows already read in this call (the
// same page again, an offset ignored). Not retried: the run ends with the error, naming the
// offsets; the next scheduled run tries again.
const ErrPageNotAdvancing = "PageNotAdvancing"

// MaxPace bounds the wait between two requests that the service's rate-limit headers ask for: a
// quota slower than that is left to its 429s and their Retry-After.
const MaxPace = 30 * time.Second

// page is one page of a list endpoint as the pager needs it.
type page[T any] struct {
	items  []T
	offset int // the offset the service says the page starts at
	total  int // the list's size when the service says it (0: unknown)
}

// pager walks a list endpoint page by page. Unlike apiclient's iterators it trusts nothing the
// service says about progress: every page must start at the offset asked and bring at least one
// row not read before in this call; its requests are counted against an allowance and paced by
// the service's rate-limit headers.
type pager[T any] struct {
	a     *Activities
	what  string // "network APY of polkadot", for errors
	key   func(T) string
	fetch func(ctx context.Context, limit, offset int) (page[T], error)
	// offset is where the next request starts; maxOffset the service's largest; pos is just
	// past the row last yielded (where a call that stops there resumes).
	offset, maxOffset, pos int
	// allowance bounds the requests (0: none); requests counts those sent; capped is set when
	// the allowance stopped the walk with pages left.
	allowance, requests int
	capped              bool
	seen                map[string]int // row key -> offset of the page it was first read on
}

func newPager[T any](a *Activities, what string, offset, maxOffset, allowance int, key func(T) string,
	fetch func(ctx context.Context, limit, offset int) (page[T], error)) *pager[T] {
	return &pager[T]{a: a, what: what, key: key, fetch: fetch, offset: offset, maxOffset: maxOffset,
		allowance: allowance, pos: offset, seen: map[string]int{}}
}

// all yields every new row, then stops at a short or empty page, the list's total, or the
// allowance (capped). An error is yielded once, last.
func (p *pager[T]) all(ctx context.Context) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for {
			if p.allowance > 0 && p.requests >= p.allowance {
				p.capped = true
				return
			}
			if err := p.a.pace(ctx); err != nil {
				yield(zero, err)
				return
			}
			var info apiclient.ResponseInfo
			p.requests++
			pg, err := p.fetch(apiclient.WithResponseInfo(ctx, &info), PageLimit, p.offset)
			p.a.learnPace(info.RateLimit)
			if err != nil {
				yield(zero, err)
				return
			}
			if err := p.check(pg); err != nil {
				yield(zero, err)
				return
			}
			for i, it := range pg.items {
				p.pos = p.offset + i + 1
				k := p.key(it)
				if _, dup := p.seen[k]; dup {
					continue
				}
				p.seen[k] = p.offset
				if !yield(it, nil) {
					return
				}
			}
			p.offset += len(pg.items)
			if len(pg.items) < PageLimit || (pg.total > 0 && p.offset >= pg.total) {
				return
			}
			if p.offset > p.maxOffset {
				yield(zero, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"%s: paging stopped at offset %d: the service accepts offsets up to %d", p.what, p.offset, p.maxOffset), ErrPageNotAdvancing, nil))
				return
			}
		}
	}
}

// check refuses a page that does not advance.
func (p *pager[T]) check(pg page[T]) error {
	notAdvancing := func(format string, args ...any) error {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: the service's pages do not advance: ", p.what)+fmt.Sprintf(format, args...),
			ErrPageNotAdvancing, nil)
	}
	if pg.offset != p.offset {
		return notAdvancing("asked for offset %d, it answered the page at offset %d", p.offset, pg.offset)
	}
	if len(pg.items) > PageLimit {
		return notAdvancing("asked for %d rows at offset %d, it answered %d", PageLimit, p.offset, len(pg.items))
	}
	if len(pg.items) == 0 {
		return nil
	}
	for _, it := range pg.items {
		if _, dup := p.seen[p.key(it)]; !dup {
			return nil
		}
	}
	first := p.key(pg.items[0])
	return notAdvancing("the page at offset %d holds only rows already read (%d rows; %s was first read at offset %d): the offset is ignored or the same page repeated",
		p.offset, len(pg.items), first, p.seen[first])
}

// pace waits for the next request's turn: the requests of every job of this worker share the
// service's quota, so turns are handed out in order, one interval apart.
func (a *Activities) pace(ctx context.Context) error {
	a.mu.Lock()
	now := a.now()
	at := now
	if !a.lastAt.IsZero() {
		if t := a.lastAt.Add(max(a.interval, a.MinInterval)); t.After(at) {
			at = t
		}
	}
	a.lastAt = at
	a.mu.Unlock()
	d := at.Sub(now)
	if d <= 0 {
		return nil
	}
	activity.RecordHeartbeat(ctx, "pacing")
	return a.sleep(ctx, d)
}

// learnPace sets the interval between requests from the service's rate-limit headers: the
// slowest window of RateLimit-Policy (its quota spread over its length), else RateLimit-Limit
// over RateLimit-Reset; at most MaxPace. A response without the headers changes nothing (the
// service may send them only with its 429s).
func (a *Activities) learnPace(rl *apiclient.RateLimit) {
	if rl == nil {
		return
	}
	var d time.Duration
	for _, w := range rl.Policy {
		if w.Limit > 0 && w.Window > 0 {
			d = max(d, w.Window/time.Duration(w.Limit))
		}
	}
	if d == 0 && rl.Limit > 0 && rl.HasReset {
		d = rl.Reset / time.Duration(rl.Limit)
	}
	if d == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.interval = min(d, MaxPace)
}

func (a *Activities) sleep(ctx context.Context, d time.Duration) error {
	if a.Sleep != nil {
		return a.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
