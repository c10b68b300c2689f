package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities/notify/notifytest"
)

var event = Event{ID: "stake-1/failed", Type: EventFailed, OperationID: "stake-1", Chain: "solana", Network: "testnet",
	Operation: "stake", Staker: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", Amount: "2000000000", Unit: "lamports",
	Step: "failed", Reason: "insufficient funds", Text: "stakeflow: stake 2 SOL failed: insufficient funds (stake-1)",
	At: time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)}

type received struct {
	header http.Header
	body   []byte
}

func receiver(t *testing.T, status int) (*httptest.Server, <-chan received) {
	got := make(chan received, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{r.Header.Clone(), b}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestNotifyPostsTheSignedEvent(t *testing.T) {
	srv, got := receiver(t, http.StatusNoContent)
	now := time.Unix(1_795_000_000, 0)
	n := &Notifier{URL: srv.URL + "/hook", Secret: []byte("s3cret"), Now: func() time.Time { return now }}
	require.NoError(t, n.Notify(context.Background(), event))
	r := <-got
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	assert.Equal(t, "stake-1/failed", r.header.Get(HeaderEventID))
	assert.Equal(t, EventFailed, r.header.Get(HeaderEvent))
	ts := r.header.Get(HeaderTimestamp)
	assert.Equal(t, strconv.FormatInt(now.Unix(), 10), ts)
	assert.True(t, notifytest.Signed("s3cret", r.header, r.body), "signed under the secret, as a receiver checks")
	var back Event
	require.NoError(t, json.Unmarshal(r.body, &back))
	assert.Equal(t, event, back)
	assert.False(t, notifytest.Signed("other", r.header, r.body), "the secret matters")
}

func TestNotifySlackBodyIsTheLine(t *testing.T) {
	srv, got := receiver(t, http.StatusOK)
	n := &Notifier{URL: srv.URL, Format: FormatSlack}
	require.NoError(t, n.Notify(context.Background(), event))
	r := <-got
	assert.JSONEq(t, `{"text":"stakeflow: stake 2 SOL failed: insufficient funds (stake-1)"}`, string(r.body))
	assert.Empty(t, r.header.Get(HeaderSignature), "no secret, no signature")
}

// TestNotifyFailuresAreRetriedAndHideTheURL: a receiver that refuses or cannot be reached is an
// error the activity's retries handle, and no error repeats the URL, which may carry a token.
func TestNotifyFailuresAreRetriedAndHideTheURL(t *testing.T) {
	srv, _ := receiver(t, http.StatusServiceUnavailable)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	for _, tt := range []struct {
		url, typ string
	}{
		{srv.URL + "/hooks/T0KEN-abc", ErrWebhookRefused},
		{closed + "/hooks/T0KEN-abc", ErrWebhookUnreachable},
	} {
		err := (&Notifier{URL: tt.url, Secret: []byte("s3cret")}).Notify(context.Background(), event)
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(err, &appErr), "%v", err)
		assert.Equal(t, tt.typ, appErr.Type())
		assert.False(t, appErr.NonRetryable())
		assert.NotContains(t, err.Error(), "T0KEN")
		assert.NotContains(t, err.Error(), "s3cret")
		assert.Contains(t, err.Error(), "failed event")
	}
}

func TestNotifierOff(t *testing.T) {
	var n *Notifier
	cfg, err := n.NotifyConfig(context.Background())
	require.NoError(t, err)
	assert.False(t, cfg.Enabled)
	require.NoError(t, n.Notify(context.Background(), event))
	cfg, err = (&Notifier{URL: "http://127.0.0.1:1"}).NotifyConfig(context.Background())
	require.NoError(t, err)
	assert.True(t, cfg.Enabled)
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:9000/hook", "https://hooks.slack.com/services/T/B/X"} {
		assert.NoError(t, CheckURL(ok), ok)
	}
	for _, bad := range []string{"", "hooks.example.com/x", "ftp://h/x", "http:///x", "https://tok:en@%zz"} {
		err := CheckURL(bad)
		require.Error(t, err, bad)
		if bad != "" {
			assert.NotContains(t, err.Error(), bad)
		}
	}
}
