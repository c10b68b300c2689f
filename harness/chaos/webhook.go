package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/stakeflow/stakeflow/activities/notify/notifytest"
)

// hookReceiver receives the events the worker posts (--notify-webhook). It checks every post's
// signature as a receiver does (notifytest), and answers the first post of each event 503,
// so that every event is retried at least once (across the run's worker kills and Temporal
// restarts as they fall).
type hookReceiver struct {
	srv        *httptest.Server
	secret     string
	secretFile string

	mu        sync.Mutex
	delivered map[string]int // accepted posts by event ID
	refused   map[string]int // first posts answered 503
	forged    int            // posts with a bad signature or a body that is not the event
}

func newHookReceiver(dir string) (*hookReceiver, error) {
	h := &hookReceiver{secret: fmt.Sprintf("chaos-whsec-%d", time.Now().UnixNano()),
		delivered: map[string]int{}, refused: map[string]int{}}
	h.secretFile = filepath.Join(dir, "webhook-secret")
	if err := os.WriteFile(h.secretFile, []byte(h.secret), 0o600); err != nil {
		return nil, fmt.Errorf("chaos: writing the webhook secret: %w", err)
	}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	return h, nil
}

func (h *hookReceiver) args() []string {
	return []string{"--notify-webhook", h.srv.URL + "/events", "--notify-webhook-secret-file", h.secretFile}
}

func (h *hookReceiver) close() { h.srv.Close() }

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	id := r.Header.Get("X-Stakeflow-Event-Id")
	var ev struct {
		ID string `json:"id"`
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !notifytest.Signed(h.secret, r.Header, body) || json.Unmarshal(body, &ev) != nil || ev.ID != id {
		h.forged++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if h.refused[id] == 0 {
		h.refused[id]++
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h.delivered[id]++
	w.WriteHeader(http.StatusNoContent)
}

// missing lists the events of want not delivered yet.
func (h *hookReceiver) missing(want []string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, id := range want {
		if h.delivered[id] == 0 {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// expectedEvents are the events the operations' ends must have posted: completed for each workflow
// that completed, failed for the one that failed.
func expectedEvents(ops []OpOutcome, polygon []PolygonOutcome) []string {
	var out []string
	end := func(id string, done bool, failed bool) {
		switch {
		case done:
			out = append(out, id+"/completed")
		case failed:
			out = append(out, id+"/failed")
		}
	}
	for _, o := range ops {
		failed := o.State == StateFailed
		end(o.Spec.StakeID, o.Stake != nil, failed && o.Stake == nil)
		if o.Spec.Kind == KindChain {
			end(o.Spec.UnstakeID, o.Unstake != nil, failed && o.Stake != nil)
		}
	}
	for _, o := range polygon {
		failed := o.State == StateFailed
		end(o.Spec.DelegateID, o.Delegate != nil, failed && o.Delegate == nil)
		if o.Spec.UnstakeID != "" {
			end(o.Spec.UnstakeID, o.Unstake != nil, failed && o.Delegate != nil)
		}
	}
	sort.Strings(out)
	return out
}

// checkEvents waits (up to limit) for every expected event, then reports the deliveries and a
// violation for each event missing, and for any forged post.
func (h *hookReceiver) checkEvents(ctx context.Context, rep *Report, want []string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for len(h.missing(want)) > 0 && time.Now().Before(deadline) {
		if !sleepCtx(ctx, 250*time.Millisecond) {
			break
		}
	}
	missing := h.missing(want)
	h.mu.Lock()
	defer h.mu.Unlock()
	rep.WebhookExpected, rep.WebhookForged = len(want), h.forged
	for _, n := range h.delivered {
		rep.WebhookEvents++
		rep.WebhookDuplicates += n - 1
	}
	for _, id := range missing {
		rep.Violations = append(rep.Violations, Violation{Op: id, What: fmt.Sprintf("event not delivered to the webhook within %s of the run's end", limit)})
	}
	if h.forged > 0 {
		rep.Violations = append(rep.Violations, Violation{What: fmt.Sprintf("%d webhook posts without a valid signature", h.forged)})
	}
}
