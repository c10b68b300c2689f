// Package childproc holds what every launcher of a child process (the geth node, the Solana
// runtime) needs: the child dies with its parent, and the last lines it wrote are kept for the
// errors that report its failure.
package childproc

import (
	"strings"
	"sync"
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
