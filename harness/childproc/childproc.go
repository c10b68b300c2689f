// Package childproc holds what every launcher of a child process (the geth node, the Solana
// runtime) needs: the child dies with its parent, and the last lines it wrote are kept for the
// errors that report its failure.
package childproc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Tail keeps the last Max lines written to it.
type Tail struct {
	max   int
	sep   string
	mu    sync.Mutex
	lines []string
}

// NewTail keeps the last max lines; String joins them with sep.
func NewTail(max int, sep string) *Tail { return &Tail{max: max, sep: sep} }

// Add keeps line, dropping the oldest beyond the maximum.
func (t *Tail) Add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

// String returns the kept lines joined by the separator, "" when there are none.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, t.sep)
}

// WaitReady calls probe every 100 ms (each call bounded by probeTimeout) until it succeeds, and
// fails when limit passes (with probe's last error), ctx ends, or exited closes (the child died
// before it was ready). what names the child in the error.
func WaitReady(ctx context.Context, limit, probeTimeout time.Duration, what string, exited <-chan struct{}, probe func(context.Context) error) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		last := probe(pctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("%s not ready after %s: %v", what, limit, last)
		case <-exited:
			return fmt.Errorf("%s: the process exited before it was ready (see its log)", what)
		case <-tick.C:
		}
	}
}
