// Package childproc holds what every launcher of a child process (the geth node, the Solana
// runtime) needs: the child dies with its parent, and the last lines it wrote are kept for the
// errors that report its failure.
package childproc

import (
	"context"
	"fmt"
	"net"
	"os"
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

// ListenInheritable binds a TCP socket on a free loopback port and returns it as a file to hand
// a child as one of its descriptors (exec.Cmd.ExtraFiles), with its address: the child serves on
// a port bound before it starts, so nothing else can take it meanwhile. The caller closes the
// file once the child has it.
func ListenInheritable() (*os.File, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("binding a loopback socket: %w", err)
	}
	f, err := ln.(*net.TCPListener).File()
	_ = ln.Close() // the duplicate in f keeps the socket bound
	if err != nil {
		return nil, "", fmt.Errorf("the loopback socket as a file: %w", err)
	}
	return f, ln.Addr().String(), nil
}
