package chaos

import (
	"sort"
	"sync"

	"go.uber.org/zap/zapcore"
)

// Fault kinds as the sandbox logs them ("injected fault", field "fault").
const (
	Fault429          = "429"
	Fault500          = "500"
	FaultDrop         = "drop"
	FaultLostResponse = "broadcastLostResponse"
)

// FaultCounts counts the faults the sandbox injected, by endpoint and kind.
type FaultCounts struct {
	mu sync.Mutex
	n  map[[2]string]int
}

// Add counts one injected fault.
func (f *FaultCounts) Add(endpoint, kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[[2]string]int{}
	}
	f.n[[2]string{endpoint, kind}]++
}

// Get returns the count of one endpoint and kind.
func (f *FaultCounts) Get(endpoint, kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[[2]string{endpoint, kind}]
}

// Endpoints lists the endpoints that had faults, sorted.
func (f *FaultCounts) Endpoints() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for k := range f.n {
		if !seen[k[0]] {
			seen[k[0]] = true
			out = append(out, k[0])
		}
	}
	sort.Strings(out)
	return out
}

// Total is the number of faults of every endpoint and kind.
func (f *FaultCounts) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := 0
	for _, v := range f.n {
		t += v
	}
	return t
}

// countingCore is a zap core that passes every entry to next and counts the sandbox's
// "injected fault" entries into counts.
type countingCore struct {
	next   zapcore.Core
	counts *FaultCounts
	fields []zapcore.Field
}

func newCountingCore(next zapcore.Core, counts *FaultCounts) zapcore.Core {
	return &countingCore{next: next, counts: counts}
}

func (c *countingCore) Enabled(l zapcore.Level) bool { return true }

func (c *countingCore) With(fields []zapcore.Field) zapcore.Core {
	return &countingCore{next: c.next.With(fields), counts: c.counts,
		fields: append(append([]zapcore.Field(nil), c.fields...), fields...)}
}

func (c *countingCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}

func (c *countingCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	if e.Message == "injected fault" {
		var endpoint, kind string
		for _, f := range append(append([]zapcore.Field(nil), c.fields...), fields...) {
			switch f.Key {
			case "endpoint":
				endpoint = f.String
			case "fault":
				kind = f.String
			}
		}
		c.counts.Add(endpoint, kind)
	}
	if c.next.Enabled(e.Level) {
		return c.next.Write(e, fields)
	}
	return nil
}

func (c *countingCore) Sync() error { return c.next.Sync() }
