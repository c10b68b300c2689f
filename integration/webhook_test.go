//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/activities/notify/notifytest"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// hooks receives the events the stack's worker posts.
var hooks *webhook

// webhook is a receiver of stakeflow's events that checks each post's signature as a receiver
// does, from the documented scheme (notifytest).
type webhook struct {
	srv        *httptest.Server
	secret     string
	secretFile string

	mu   sync.Mutex
	down bool
	// delivered counts accepted posts by event ID; refused counts posts answered 503 while down;
	// events keeps the first accepted body of each ID; forged counts posts with a bad signature.
	delivered map[string]int
	refused   map[string]int
	events    map[string]map[string]any
	forged    int
}

func newWebhook(dir string) (*webhook, error) {
	h := &webhook{secret: "whsec-" + strconv.FormatInt(time.Now().UnixNano(), 36), delivered: map[string]int{},
		refused: map[string]int{}, events: map[string]map[string]any{}}
	h.secretFile = filepath.Join(dir, "webhook-secret")
	if err := os.WriteFile(h.secretFile, []byte(h.secret+"\n"), 0o600); err != nil {
		return nil, err
	}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	return h, nil
}

func (h *webhook) configure(cfg *worker.Config) {
	cfg.NotifyWebhook = h.srv.URL + "/stakeflow"
	cfg.NotifyWebhookSecretFile = h.secretFile
}

func (h *webhook) close() { h.srv.Close() }

func (h *webhook) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !notifytest.Signed(h.secret, r.Header, body) {
		h.forged++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	id := r.Header.Get("X-Stakeflow-Event-Id")
	if h.down {
		h.refused[id]++
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil || ev["id"] != id {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.delivered[id]++
	if h.events[id] == nil {
		h.events[id] = ev
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *webhook) setDown(down bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.down = down
}

// seen returns how often event id was delivered and refused, and its body.
func (h *webhook) seen(id string) (delivered, refused int, ev map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delivered[id], h.refused[id], h.events[id]
}

// TestEventsReachTheWebhook: a stake over the approval threshold tells the webhook it awaits
// approval, and that it completed, each signed and delivered once. The receiver is down at first:
// the events wait for it, the operation does not.
func TestEventsReachTheWebhook(t *testing.T) {
	staker := st.Stakers[15]
	hooks.setDown(true)
	t.Cleanup(func() { hooks.setDown(false) })
	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "60",
		"--id", id, "--requested-by", "alice")
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepAwaitingApproval)
	awaiting, completed := id+"/awaiting-approval", id+"/completed"
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, refused, _ := hooks.seen(awaiting)
		assert.Positive(c, refused, "the event was posted while the receiver was down")
	}, time.Minute, 100*time.Millisecond)

	out, err = starterRun(t, "approve", "--id", id, "--approver", "bob")
	require.NoError(t, err, out)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var res wfsolana.Result
	require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res), "the operation completes while the receiver is down")
	n, _, _ := hooks.seen(completed)
	require.Zero(t, n)

	hooks.setDown(false)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, ev := range []string{awaiting, completed} {
			n, _, _ := hooks.seen(ev)
			assert.Equal(c, 1, n, ev)
		}
	}, 3*time.Minute, 200*time.Millisecond)
	_, _, ev := hooks.seen(completed)
	assert.Equal(t, "completed", ev["type"])
	assert.Equal(t, id, ev["operationId"])
	assert.Equal(t, staker.String(), ev["staker"])
	assert.Equal(t, "60000000000", ev["amount"])
	assert.Equal(t, []any{res.Transactions[0].TxID}, ev["txIds"])
	_, _, ev = hooks.seen(awaiting)
	assert.Equal(t, "awaiting-approval", ev["type"])
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	assert.Zero(t, hooks.forged, "every post carried a valid signature")
}
