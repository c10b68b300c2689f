package chaos

import (
	"slices"
	"sort"
	"sync"

	"go.uber.org/zap/zapcore"

	"github.com/stakeflow/stakeflow/harness/sandbox"
)

// Fault kinds as the sandbox logs them ("injected fault", field "fault").
const (
	Fault429          = "429"
	Fault500          = "500"
	FaultDrop         = "drop"
	FaultLostResponse = "broadcastLostResponse"
	// FaultDropped is a broadcast answered as sent but never submitted (BroadcastDropped).
	FaultDropped = "broadcastDropped"
	// FaultRefusedResend is a re-send refused after its first send landed with its answer lost
	// (BroadcastLoseThenRefuse).
	FaultRefusedResend = "broadcastLoseThenRefuse"
	// FaultPolygonDropped is a Polygon transaction endpoint 4 answered for without forwarding it
	// to the chain (PolygonSendDropped).
	FaultPolygonDropped = "polygonSendDropped"
)

// Lost answers split by how the answer was lost: counted under FaultLostResponse and, by the
// mode in force when the sandbox logged them (SetLostAnswerDrop), under one of these.
const (
	FaultLostAnswer500  = "broadcastLostResponse/500"
	FaultLostAnswerDrop = "broadcastLostResponse/drop"
)

// FaultCounts counts the faults the sandbox injected, by endpoint and kind, and keeps the
// signatures of the broadcasts it dropped or whose re-send it refused.
type FaultCounts struct {
	mu       sync.Mutex
	n        map[[2]string]int
	sigs     map[string][]string
	lostDrop bool
}

// Add counts one injected fault. A lost answer is also counted as lost by a 500 or by a dropped
// connection, by the mode SetLostAnswerDrop last set.
func (f *FaultCounts) Add(endpoint, kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[[2]string]int{}
	}
	f.n[[2]string{endpoint, kind}]++
	if kind == FaultLostResponse {
		split := FaultLostAnswer500
		if f.lostDrop {
			split = FaultLostAnswerDrop
		}
		f.n[[2]string{endpoint, split}]++
	}
}

// SetLostAnswerDrop sets how lost answers are lost from now on: by a dropped connection (true) or
// a 500. The run sets it when it switches the sandbox's faults.
func (f *FaultCounts) SetLostAnswerDrop(drop bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lostDrop = drop
}

// AddSignature records the signature a fault of kind concerned; each signature once per kind.
func (f *FaultCounts) AddSignature(kind, sig string) {
	if sig == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sigs == nil {
		f.sigs = map[string][]string{}
	}
	if !slices.Contains(f.sigs[kind], sig) {
		f.sigs[kind] = append(f.sigs[kind], sig)
	}
}

// Signatures lists the signatures recorded for kind, in the order first seen.
func (f *FaultCounts) Signatures(kind string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sigs[kind])
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

// Total is the number of faults of every endpoint and kind (a lost answer once).
func (f *FaultCounts) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := 0
	for k, v := range f.n {
		if k[1] != FaultLostAnswer500 && k[1] != FaultLostAnswerDrop {
			t += v
		}
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
		var endpoint, kind, sig string
		for _, f := range append(append([]zapcore.Field(nil), c.fields...), fields...) {
			switch f.Key {
			case "endpoint":
				endpoint = f.String
			case "fault":
				kind = f.String
			case "txSig", "txHash":
				sig = f.String
			}
		}
		switch kind {
		case FaultDropped, FaultRefusedResend:
			// Logged by the broadcast handler itself, without the endpoint field.
			if endpoint == "" {
				endpoint = sandbox.EndpointBroadcast
			}
			c.counts.AddSignature(kind, sig)
		case FaultPolygonDropped:
			// Logged by endpoint 4's handler, without the endpoint field.
			if endpoint == "" {
				endpoint = sandbox.EndpointPolygonSend
			}
			c.counts.AddSignature(kind, sig)
		}
		c.counts.Add(endpoint, kind)
	}
	if c.next.Enabled(e.Level) {
		return c.next.Write(e, fields)
	}
	return nil
}

func (c *countingCore) Sync() error { return c.next.Sync() }
