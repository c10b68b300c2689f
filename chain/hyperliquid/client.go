// Package hyperliquid is access to a Hyperliquid network's API for the staking withdrawal: the
// exchange endpoint that takes a signed user action, and the info reads of a delegator's staking
// summary (delegatorSummary), staking history (delegatorHistory) and spot balance
// (spotClearinghouseState). It signs nothing and builds nothing.
//
// Amounts are whole numbers of wei (10^-8 HYPE), read exactly from the API's decimal strings.
package hyperliquid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Client calls one network's API at its base URL (…/exchange, …/info).
type Client struct {
	base string
	hc   *http.Client
}

// New returns a client of the API at base.
func New(base string) *Client {
	return &Client{base: strings.TrimRight(base, "/"), hc: &http.Client{Timeout: 30 * time.Second}}
}

// UnavailableError is a failure to reach the API or a 5xx/429 answer: asking again may succeed.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return "hyperliquid API unavailable: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }

// ErrRefused is an answer other than the one asked for that asking again will not change.
var ErrRefused = errors.New("hyperliquid API refused the request")

func (c *Client) post(ctx context.Context, path string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return &UnavailableError{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return &UnavailableError{Err: err}
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return &UnavailableError{Err: fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%w: %s: HTTP %d: %s", ErrRefused, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%w: %s: undecodable answer: %v", ErrRefused, path, err)
	}
	return nil
}

// ExchangeResult is the exchange's answer: Status "ok" or "err", Response the reason of an "err".
type ExchangeResult struct {
	Status   string `json:"status"`
	Response any    `json:"response"`
}

// OK reports whether the exchange accepted the action.
func (r ExchangeResult) OK() bool { return r.Status == "ok" }

// Reason is the refusal's text.
func (r ExchangeResult) Reason() string {
	if s, ok := r.Response.(string); ok {
		return s
	}
	b, _ := json.Marshal(r.Response)
	return string(b)
}

// Exchange posts a signed action ({action, nonce, signature}).
func (c *Client) Exchange(ctx context.Context, signed any) (ExchangeResult, error) {
	var out ExchangeResult
	err := c.post(ctx, "/exchange", signed, &out)
	return out, err
}

// Withdrawal is a staking withdrawal as the delegator's history shows it: initiated by the L1
// transaction Hash at Time (the block's time).
type Withdrawal struct {
	Hash string    `json:"hash"`
	Time time.Time `json:"time"`
	Wei  uint64    `json:"wei"`
	// CompletesAt is when a pending withdrawal reaches spot (Time plus the network's queue); set
	// by the caller, which knows the network.
	CompletesAt time.Time `json:"completesAt,omitempty"`
}

// Account is what the worker reads of a delegator.
type Account struct {
	// Staking is the undelegated staking balance; Spot the spot HYPE balance (wei both).
	Staking uint64 `json:"staking"`
	Spot    uint64 `json:"spot"`
	// Pending are the withdrawals in the queue, oldest first: the last nPendingWithdrawals of the
	// initiated ones (the queue is first in, first out, one duration for all).
	Pending []Withdrawal `json:"pending"`
	// Finalized are the other initiated withdrawals: they reached spot.
	Finalized []Withdrawal `json:"finalized"`
}

// historyEntry is one delegatorHistory entry; only a withdrawal's delta is read.
type historyEntry struct {
	Time  int64  `json:"time"`
	Hash  string `json:"hash"`
	Delta struct {
		Withdrawal *struct {
			Amount string `json:"amount"`
			Phase  string `json:"phase"`
		} `json:"withdrawal"`
	} `json:"delta"`
}

// Account reads user's staking summary (delegatorSummary), staking history (delegatorHistory) and
// spot balance (spotClearinghouseState). The pending withdrawals are the last
// nPendingWithdrawals withdrawals the history shows initiated; a history that shows fewer is
// read again later (UnavailableError).
func (c *Client) Account(ctx context.Context, user string) (Account, error) {
	var out Account
	var sum struct {
		Undelegated string `json:"undelegated"`
		NPending    int    `json:"nPendingWithdrawals"`
	}
	if err := c.post(ctx, "/info", map[string]string{"type": "delegatorSummary", "user": user}, &sum); err != nil {
		return out, err
	}
	var err error
	if out.Staking, err = Wei(sum.Undelegated); err != nil {
		return out, fmt.Errorf("%w: delegatorSummary.undelegated: %v", ErrRefused, err)
	}
	var hist []historyEntry
	if err := c.post(ctx, "/info", map[string]string{"type": "delegatorHistory", "user": user}, &hist); err != nil {
		return out, err
	}
	initiated := []Withdrawal{}
	for _, h := range hist {
		w := h.Delta.Withdrawal
		if w == nil || w.Phase != "initiated" {
			continue
		}
		wei, err := Wei(w.Amount)
		if err != nil {
			return out, fmt.Errorf("%w: delegatorHistory withdrawal %s: %v", ErrRefused, h.Hash, err)
		}
		initiated = append(initiated, Withdrawal{Hash: strings.ToLower(h.Hash), Time: time.UnixMilli(h.Time).UTC(), Wei: wei})
	}
	sort.SliceStable(initiated, func(i, j int) bool { return initiated[i].Time.Before(initiated[j].Time) })
	if sum.NPending < 0 || sum.NPending > len(initiated) {
		return out, &UnavailableError{Err: fmt.Errorf("info reads disagree: the summary counts %d pending withdrawals, the history shows %d initiated", sum.NPending, len(initiated))}
	}
	cut := len(initiated) - sum.NPending
	out.Finalized, out.Pending = initiated[:cut:cut], initiated[cut:]
	var spot struct {
		Balances []struct {
			Coin  string `json:"coin"`
			Total string `json:"total"`
		} `json:"balances"`
	}
	if err := c.post(ctx, "/info", map[string]string{"type": "spotClearinghouseState", "user": user}, &spot); err != nil {
		return out, err
	}
	for _, b := range spot.Balances {
		if b.Coin == "HYPE" {
			if out.Spot, err = Wei(b.Total); err != nil {
				return out, fmt.Errorf("%w: spot HYPE: %v", ErrRefused, err)
			}
		}
	}
	return out, nil
}

// Wei reads a decimal HYPE amount exactly as wei (10^-8 HYPE).
func Wei(s string) (uint64, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 || strings.ContainsAny(s, "/eExXpP") {
		return 0, fmt.Errorf("%q is not a decimal amount", s)
	}
	r.Mul(r, big.NewRat(100_000_000, 1))
	if !r.IsInt() || !r.Num().IsUint64() {
		return 0, fmt.Errorf("%q is not a whole number of 10^-8 HYPE", s)
	}
	return r.Num().Uint64(), nil
}
