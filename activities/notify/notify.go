// Package notify posts an operation's events (awaiting approval, stalled, failed, cancelled,
// completed) to a webhook, signed with a shared secret.
//
// Each event is its own small child workflow, abandoned by the operation, whose one activity
// (Notify) posts it with retries: a receiver that is down delays the event, never the operation,
// and a worker that dies mid-post leaves the event to the next worker. Delivery is at least once:
// a post whose answer was lost is sent again with the same X-Stakeflow-Event-Id, which receivers
// deduplicate on.
//
// The request: POST, Content-Type application/json, the Event as its body (or, in the slack
// format, {"text": "<one line>"}), and the headers
//
//	X-Stakeflow-Event-Id:  the event's ID, stable across retries
//	X-Stakeflow-Event:     the event's type
//	X-Stakeflow-Timestamp: unix seconds of this attempt
//	X-Stakeflow-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>
//
// A receiver recomputes the signature over the raw body with the shared secret, compares it in
// constant time and refuses timestamps far from its clock. The secret and the webhook URL (which
// may carry a token, as Slack's do) never appear in logs, errors or workflow history.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
)

// Event types.
const (
	EventAwaitingApproval = "awaiting-approval"
	EventStalled          = "stalled"
	EventFailed           = "failed"
	EventCancelled        = "cancelled"
	EventCompleted        = "completed"
)

// Body formats.
const (
	// FormatJSON posts the Event.
	FormatJSON = "json"
	// FormatSlack posts {"text": Event.Text}, which Slack's incoming webhooks (and compatible
	// receivers) show as a message.
	FormatSlack = "slack"
)

// Headers of a posted event.
const (
	HeaderEventID   = "X-Stakeflow-Event-Id"
	HeaderEvent     = "X-Stakeflow-Event"
	HeaderTimestamp = "X-Stakeflow-Timestamp"
	HeaderSignature = "X-Stakeflow-Signature"
)

// ErrWebhookRefused is the error type of a post the receiver answered with a status other than 2xx.
const ErrWebhookRefused = "WebhookRefused"

// ErrWebhookUnreachable is the error type of a post that got no answer.
const ErrWebhookUnreachable = "WebhookUnreachable"

// Event is what happened to an operation, as posted.
type Event struct {
	// ID is unique per event and stable across retries: <operationId>/<type>[/<n>].
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	At          time.Time `json:"at"`
	OperationID string    `json:"operationId"`
	Chain       string    `json:"chain"`
	Network     string    `json:"network"`
	Operation   string    `json:"operation"`
	Staker      string    `json:"staker"`
	// Amount in Unit, the chain's base unit, as a decimal string.
	Amount string `json:"amount,omitempty"`
	Unit   string `json:"unit,omitempty"`
	// Step is the step the operation is in (for a stall, the step that stalled).
	Step string `json:"step"`
	// Reason says why, in one line, for a failure or a stall.
	Reason string   `json:"reason,omitempty"`
	TxIDs  []string `json:"txIds,omitempty"`
	// Text is the event in one line for people.
	Text string `json:"text"`
}

// Config is what a workflow learns of the worker's notifications.
type Config struct {
	Enabled bool `json:"enabled"`
}

// Notifier posts events to one webhook. The zero value (or nil) posts nothing.
type Notifier struct {
	// URL is the webhook; empty disables notifications.
	URL string
	// Secret signs every post (HMAC-SHA256); empty sends no signature.
	Secret []byte
	// Format is FormatJSON (default) or FormatSlack.
	Format string
	// Client posts; nil uses a client with a 10 s timeout.
	Client *http.Client
	// Now is the clock of the timestamps; nil is time.Now.
	Now func() time.Time
}

// NotifyConfig tells a workflow whether events are posted (a local activity: the answer is
// recorded in the operation's history, so its replays take the same path).
func (n *Notifier) NotifyConfig(context.Context) (Config, error) {
	return Config{Enabled: n != nil && n.URL != ""}, nil
}

// Notify posts ev. A 2xx answer delivers it; anything else is an error the activity's retries
// deal with (a receiver that is down, or misconfigured, delays the event until it answers).
func (n *Notifier) Notify(ctx context.Context, ev Event) error {
	if n == nil || n.URL == "" {
		return nil
	}
	body, err := n.body(ev)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("webhook: encoding the event: "+err.Error(), "InvalidEvent", nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL, bytes.NewReader(body))
	if err != nil {
		// The URL is checked at start-up; this says nothing of it, which may carry a token.
		return temporal.NewNonRetryableApplicationError("webhook: the configured URL cannot be requested", "InvalidWebhook", nil)
	}
	now := time.Now
	if n.Now != nil {
		now = n.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "stakeflow")
	req.Header.Set(HeaderEventID, ev.ID)
	req.Header.Set(HeaderEvent, ev.Type)
	req.Header.Set(HeaderTimestamp, ts)
	if len(n.Secret) > 0 {
		req.Header.Set(HeaderSignature, Sign(n.Secret, ts, body))
	}
	c := n.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL
		}
		return temporal.NewApplicationError("webhook post of "+ev.Type+" event: "+err.Error(), ErrWebhookUnreachable)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return temporal.NewApplicationError(fmt.Sprintf("webhook post of %s event: the receiver answered %s", ev.Type, resp.Status), ErrWebhookRefused)
	}
	return nil
}

func (n *Notifier) body(ev Event) ([]byte, error) {
	if n.Format == FormatSlack {
		return json.Marshal(struct {
			Text string `json:"text"`
		}{ev.Text})
	}
	return json.Marshal(ev)
}

// Sign is the X-Stakeflow-Signature of body posted at timestamp ts (unix seconds, as sent in
// X-Stakeflow-Timestamp): "v1=" and the hex HMAC-SHA256 of ts + "." + body under secret.
func Sign(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

// CheckURL refuses a webhook URL that is not absolute http(s), without repeating it (it may carry
// a token).
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("--notify-webhook must be an absolute http or https URL")
	}
	return nil
}
