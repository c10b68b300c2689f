package ton

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
)

// Chain is the chain name of TON operations; Unit the base unit of its amounts (1 TON = 10^9).
const (
	Chain = "ton"
	Unit  = "nanoton"
)

// ErrTransactionNotFound: the service did not find the transaction before the deadline.
// Non-retryable.
const ErrTransactionNotFound = "TransactionNotFound"

// Outcome of a transaction followed to its end.
const OutcomeFinal = "final"

// Service is the part of the staking service client the TON activities use.
type Service interface {
	TONTransactionStatus(ctx context.Context, network, txHash string) (*apiclient.TONTransactionStatus, error)
}

// Activities are TON's activities. Zero poll bounds take the defaults.
type Activities struct {
	Service Service
	// PollMin is the first pause after a "not found" (default 1s); pauses double up to PollMax
	// (default 10s, a third of the heartbeat timeout the workflow sets).
	PollMin, PollMax time.Duration
	// sleep waits d or until ctx is done; nil: a timer.
	sleep func(ctx context.Context, d time.Duration) error
}

// ConfirmInput names the transaction to follow and until when.
type ConfirmInput struct {
	Network string `json:"network"`
	// Hash is the transaction hash, normalised (NormalizeHash).
	Hash string `json:"hash"`
	// Deadline is when, still not found, the transaction counts as never landed.
	Deadline time.Time `json:"deadline"`
}

// Transaction is a TON transaction followed to its end, as the service reports it.
type Transaction struct {
	// Hash is the transaction hash, lower-case hex.
	Hash string `json:"hash"`
	// Account is the account the transaction belongs to.
	Account string `json:"account"`
	// Lt is the transaction's logical time, decimal.
	Lt                  string    `json:"lt"`
	PrevTransactionHash string    `json:"prevTransactionHash,omitempty"`
	PrevTransactionLt   string    `json:"prevTransactionLt,omitempty"`
	Time                time.Time `json:"time"`
	OutMessagesCount    int       `json:"outMessagesCount"`
	// OldStatus and EndStatus are the account's status before and after.
	OldStatus string `json:"oldStatus"`
	EndStatus string `json:"endStatus"`
	// Outcome is OutcomeFinal.
	Outcome string `json:"outcome"`
	// Polls counts the reads of endpoint 9 it took.
	Polls int `json:"polls"`
}

// confirmProgress is what TONConfirm heartbeats, so that a retry keeps counting.
type confirmProgress struct {
	Polls int `json:"polls"`
}

// TONConfirm follows a transaction until the service finds it (final: see the package comment),
// or until in.Deadline, when it fails with ErrTransactionNotFound naming the hash.
func (a *Activities) TONConfirm(ctx context.Context, in ConfirmInput) (Transaction, error) {
	hash, err := NormalizeHash(in.Hash)
	if err != nil {
		return Transaction{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("hash %q: %v", in.Hash, err), activities.ErrInvalidInput, nil)
	}
	var p confirmProgress
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &p)
	}
	pause := a.pollMin()
	for {
		p.Polls++
		activity.RecordHeartbeat(ctx, p)
		st, err := a.Service.TONTransactionStatus(ctx, in.Network, hash)
		wait := pause
		switch {
		case err == nil:
			return found(hash, st, p.Polls)
		case notFound(err):
			pause = min(2*pause, a.pollMax())
		case apiclient.IsThrottled(err):
			if d, ok := apiclient.RetryAfterOf(err); ok {
				wait = d
			}
		case apiclient.IsRetryable(err) || activities.Unauthorized(err) || isTransport(err):
			pause = min(2*pause, a.pollMax())
		default:
			return Transaction{}, activities.ClassifyService("TON transaction status", err)
		}
		if !in.Deadline.IsZero() && !time.Now().Add(wait).Before(in.Deadline) {
			return Transaction{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("TON transaction %s not found on %s by %s (%d reads)", hash, in.Network, in.Deadline.UTC().Format(time.RFC3339), p.Polls),
				ErrTransactionNotFound, err)
		}
		// A long Retry-After is waited out in slices, heartbeating between them.
		for left := wait; left > 0; left -= a.pollMax() {
			if err := a.wait(ctx, min(left, a.pollMax())); err != nil {
				return Transaction{}, err
			}
			activity.RecordHeartbeat(ctx, p)
		}
	}
}

// found checks the service's answer against the hash asked and returns the transaction.
func found(hash string, st *apiclient.TONTransactionStatus, polls int) (Transaction, error) {
	got, err := NormalizeHash(st.TransactionHash)
	if err != nil || got != hash {
		return Transaction{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the service answered transaction %q for %s", st.TransactionHash, hash), activities.ErrServiceRejected, nil)
	}
	if lt, err := strconv.ParseUint(st.Lt, 10, 64); err != nil || lt == 0 {
		return Transaction{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the service answered transaction %s with lt %q, not a logical time", hash, st.Lt), activities.ErrServiceRejected, nil)
	}
	return Transaction{
		Hash: hash, Account: st.Address, Lt: st.Lt, PrevTransactionHash: st.PrevTransactionHash, PrevTransactionLt: st.PrevTransactionLt,
		Time: st.NowTime(), OutMessagesCount: st.OutMessagesCount, OldStatus: st.OldStatus, EndStatus: st.EndStatus,
		Outcome: OutcomeFinal, Polls: polls,
	}, nil
}

// notFound reports whether the service answered 404: the transaction is not (yet) known.
func notFound(err error) bool {
	var apiErr *apiclient.APIError
	var unexpected *apiclient.UnexpectedResponseError
	return (errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound) ||
		(errors.As(err, &unexpected) && unexpected.StatusCode == http.StatusNotFound)
}

func isTransport(err error) bool {
	var t *apiclient.TransportError
	return errors.As(err, &t)
}

func (a *Activities) pollMin() time.Duration {
	if a.PollMin > 0 {
		return a.PollMin
	}
	return time.Second
}

func (a *Activities) pollMax() time.Duration {
	if a.PollMax > 0 {
		return max(a.PollMax, a.pollMin())
	}
	return 10 * time.Second
}

func (a *Activities) wait(ctx context.Context, d time.Duration) error {
	if a.sleep != nil {
		return a.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
