package apiclient

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimitWindow is one `<limit>;w=<seconds>` entry of RateLimit-Policy.
type RateLimitWindow struct {
	// Limit is the request quota of the window.
	Limit int
	// Window is the window's length.
	Window time.Duration
}

// RateLimit holds the rate-limit headers of a response.
type RateLimit struct {
	// RetryAfter is Retry-After (seconds, or an HTTP date converted to a delay);
	// meaningful when HasRetryAfter.
	RetryAfter time.Duration
	// HasRetryAfter reports whether a valid Retry-After header was sent.
	HasRetryAfter bool
	// Limit is RateLimit-Limit, the quota of the most restrictive window; 0 when absent.
	Limit int
	// Reset is RateLimit-Reset, the time until the window resets; meaningful
	// when HasReset.
	Reset time.Duration
	// HasReset reports whether a valid RateLimit-Reset header was sent.
	HasReset bool
	// Policy lists the windows of RateLimit-Policy in header order; entries
	// that cannot be parsed are skipped.
	Policy []RateLimitWindow
}

// parseRateLimit reads the rate-limit headers; nil when none is present.
func parseRateLimit(h http.Header, now time.Time) *RateLimit {
	var rl RateLimit
	found := false
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		found = true
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			rl.RetryAfter, rl.HasRetryAfter = seconds(n), true
		} else if t, err := http.ParseTime(v); err == nil {
			d := t.Sub(now)
			if d < 0 {
				d = 0
			}
			rl.RetryAfter, rl.HasRetryAfter = d, true
		}
	}
	if v := strings.TrimSpace(h.Get("RateLimit-Limit")); v != "" {
		found = true
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			rl.Limit = n
		}
	}
	if v := strings.TrimSpace(h.Get("RateLimit-Reset")); v != "" {
		found = true
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			rl.Reset, rl.HasReset = seconds(n), true
		}
	}
	for _, v := range h.Values("RateLimit-Policy") {
		found = true
		rl.Policy = append(rl.Policy, parsePolicy(v)...)
	}
	if !found {
		return nil
	}
	return &rl
}

// seconds converts a count of seconds to a Duration, saturating on overflow.
func seconds(n int64) time.Duration {
	const maxSeconds = int64(1<<63-1) / int64(time.Second)
	if n > maxSeconds {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(n) * time.Second
}

// parsePolicy parses `100;w=60, 1000;w=3600` (extra parameters ignored).
func parsePolicy(v string) []RateLimitWindow {
	var out []RateLimitWindow
	for item := range strings.SplitSeq(v, ",") {
		parts := strings.Split(item, ";")
		limit, err := strconv.Atoi(strings.TrimSpace(parts[0]))
		if err != nil || limit < 0 {
			continue
		}
		w := RateLimitWindow{Limit: limit}
		ok := false
		for _, p := range parts[1:] {
			k, val, found := strings.Cut(strings.TrimSpace(p), "=")
			if !found || strings.TrimSpace(k) != "w" {
				continue
			}
			n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(val), `"`), 10, 64)
			if err != nil || n < 0 {
				break
			}
			w.Window, ok = seconds(n), true
		}
		if ok {
			out = append(out, w)
		}
	}
	return out
}
