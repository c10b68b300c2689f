package sandbox

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RateWindow is one quota of a rate-limit policy: Limit requests per Window.
type RateWindow struct {
	Limit  int           // requests allowed per window
	Window time.Duration // window length, whole seconds
}

// ParseRatePolicy parses the RateLimit-Policy form "<limit>;w=<seconds>",
// comma-separated for several windows (for example "100;w=1,1000;w=60").
// An empty string is no policy.
func ParseRatePolicy(s string) ([]RateWindow, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []RateWindow
	for _, part := range strings.Split(s, ",") {
		lim, w, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok {
			return nil, fmt.Errorf("sandbox: rate policy item %q: want <limit>;w=<seconds>", part)
		}
		n, err := strconv.Atoi(strings.TrimSpace(lim))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("sandbox: rate policy item %q: limit must be a positive integer", part)
		}
		ws, ok := strings.CutPrefix(strings.TrimSpace(w), "w=")
		if !ok {
			return nil, fmt.Errorf("sandbox: rate policy item %q: want w=<seconds>", part)
		}
		secs, err := strconv.Atoi(ws)
		if err != nil || secs < 1 {
			return nil, fmt.Errorf("sandbox: rate policy item %q: window must be a positive number of seconds", part)
		}
		out = append(out, RateWindow{Limit: n, Window: time.Duration(secs) * time.Second})
	}
	return out, nil
}

// formatRatePolicy renders windows in the RateLimit-Policy form.
func formatRatePolicy(ws []RateWindow) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("%d;w=%d", w.Limit, int(w.Window/time.Second))
	}
	return strings.Join(parts, ",")
}

// rateLimiter counts requests per key in fixed windows that start at the
// key's first request in each window.
type rateLimiter struct {
	windows []RateWindow
	policy  string
	now     func() time.Time

	mu    sync.Mutex
	state map[string][]windowState
}

type windowState struct {
	start time.Time
	count int
}

func newRateLimiter(ws []RateWindow, now func() time.Time) *rateLimiter {
	return &rateLimiter{windows: ws, policy: formatRatePolicy(ws), now: now, state: map[string][]windowState{}}
}

// allow counts one request for key, or returns the 429 answer when a window
// is exhausted (the request is then not counted).
func (l *rateLimiter) allow(key string) *apiError {
	if l == nil || len(l.windows) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	st, ok := l.state[key]
	if !ok {
		st = make([]windowState, len(l.windows))
		l.state[key] = st
	}
	blocked := -1
	var reset time.Duration
	for i, w := range l.windows {
		if st[i].start.IsZero() || !now.Before(st[i].start.Add(w.Window)) {
			st[i] = windowState{start: now}
		}
		if st[i].count >= w.Limit {
			if r := st[i].start.Add(w.Window).Sub(now); blocked < 0 || r > reset {
				blocked, reset = i, r
			}
		}
	}
	if blocked >= 0 {
		return throttled(l.windows[blocked].Limit, reset, l.policy)
	}
	for i := range st {
		st[i].count++
	}
	return nil
}

// throttled is the 429 ThrottlerException with its headers.
func throttled(limit int, reset time.Duration, policy string) *apiError {
	secs := int(math.Ceil(reset.Seconds()))
	if secs < 1 {
		secs = 1
	}
	h := http.Header{}
	h.Set("Retry-After", strconv.Itoa(secs))
	h.Set("RateLimit-Limit", strconv.Itoa(limit))
	h.Set("RateLimit-Reset", strconv.Itoa(secs))
	h.Set("RateLimit-Policy", policy)
	return &apiError{Status: http.StatusTooManyRequests, Name: nameThrottler, Code: codeThrottler, Type: typeClient,
		Message: nameThrottler, Header: h}
}
