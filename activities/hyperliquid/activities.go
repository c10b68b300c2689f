// Package hyperliquid holds Hyperliquid's Temporal activities for the staking-to-spot withdrawal:
// endpoint 6's request (HLRequest), its verification and signature (HLSign), its submission to
// the exchange (HLSubmit) and the delegator's account read (HLReadAccount). Error types are the
// core's (package activities) plus ErrTooManyPending.
//
// HLSubmit re-sends the same signed action on a transport failure or a 5xx; an exchange refusal
// is an outcome, not an error, once the account is read: the action counts as sent when the
// delegator's history shows its withdrawal (Find: a resubmission answered "nonce already used"
// included); otherwise the workflow decides (a nonce refused for its window may get a new
// request; any other refusal ends the operation).
//
// The info API names a withdrawal by the hash and time of the L1 transaction, not by the nonce
// it was signed with, and the exchange's answer names neither; Find ties the two together: the
// earliest withdrawal of the action's amount, in its nonce's window, that the history did not
// show before the action was signed. That is this operation's only because the operation holds
// its delegator's lease (lease.go) from before that first read until the withdrawal's fate is
// final: every other stakeflow withdrawal of the delegator is then among the known ones. Fate
// adds Hyperliquid's proof of "cannot land".
package hyperliquid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	hlsigner "github.com/stakeflow/stakeflow/signer/hyperliquid"
	"github.com/stakeflow/stakeflow/store"
)

// Chain is the chain name of Hyperliquid operations; Unit the base unit of their amounts (wei,
// 10^-8 HYPE).
const (
	Chain = "hyperliquid"
	Unit  = "wei"
	// Decimals: 1 HYPE = 10^8 wei (signer/hyperliquid names the source).
	Decimals = hlsigner.Decimals
)

// ErrTooManyPending: the delegator has as many withdrawals pending as Hyperliquid allows (5).
// Non-retryable.
const ErrTooManyPending = "TooManyPendingWithdrawals"

// MaxPending is how many staking withdrawals Hyperliquid lets a delegator have pending.
const MaxPending = 5

// Submission outcomes.
const (
	// OutcomeSent: the exchange holds the action (accepted now, or earlier: its nonce is recorded).
	OutcomeSent = "sent"
	// OutcomeNonceRefused: the exchange refused the nonce (outside its window or used) and does not
	// hold the action: a new request is safe.
	OutcomeNonceRefused = "nonce-refused"
	// OutcomeRefused: the exchange refused the action for another reason; it does not hold it.
	OutcomeRefused = "refused"
)

// Service is the part of the staking service client the activities use (endpoint 6).
type Service interface {
	HyperliquidWithdraw(ctx context.Context, network string, req apiclient.HyperliquidWithdrawRequest) (*apiclient.HyperliquidWithdrawal, error)
}

// API is one network's Hyperliquid API.
type API interface {
	Exchange(ctx context.Context, signed any) (hlchain.ExchangeResult, error)
	Account(ctx context.Context, user string) (hlchain.Account, error)
}

// Activities are Hyperliquid's activities.
type Activities struct {
	Service Service
	Signer  *hlsigner.Signer
	// APIs maps network to its API (--hyperliquid-api).
	APIs map[string]API
	// RecheckAfter bounds each wait for a withdrawal before the account is read again (0: none).
	RecheckAfter time.Duration
	// Nonces records durably which operation signs with each nonce of a key (the worker's store);
	// nil: the signer's memory alone, which a restart forgets.
	Nonces NonceBook
	// Temporal starts and signals the delegators' leases (HLRequestLease); TaskQueue is the queue
	// they run on (the worker's).
	Temporal  lease.Starter
	TaskQueue string
}

// NonceBook records, before a signature and across restarts, which operation signs with each
// nonce of a key: a nonce another operation recorded is a *store.NonceTakenError.
type NonceBook interface {
	ClaimNonce(ctx context.Context, address string, nonce uint64, operation string, at time.Time) error
}

// ErrNonceBook: the nonce record could not be written or read. Retryable.
const ErrNonceBook = "NonceBookUnavailable"

// AccountInput names a delegator on a network.
type AccountInput struct {
	Network   string `json:"network"`
	Delegator string `json:"delegator"`
}

// Account is what HLReadAccount read, and how long the worker lets a wait last before reading it
// again.
type Account struct {
	hlchain.Account
	RecheckAfter time.Duration `json:"recheckAfter,omitempty"`
	// ReadAt is the worker's clock before the account was read: the read shows the account as it
	// stood at ReadAt or later (the proof of "cannot land" rests on it, see Fate).
	ReadAt time.Time `json:"readAt,omitzero"`
}

// RequestInput asks endpoint 6 for a withdrawal request of Amount HYPE.
type RequestInput struct {
	Network   string `json:"network"`
	Delegator string `json:"delegator"`
	// Amount is the HYPE amount as decimal text, sent as a JSON number exactly as written.
	Amount string `json:"amount"`
}

// Request is endpoint 6's unsigned request, and the amount the answer echoed beside it.
type Request struct {
	Unsigned  string    `json:"unsigned"`
	CreatedAt time.Time `json:"createdAt"`
	// Amount is the answer's own amount field (HYPE, decimal text), checked against the action's
	// wei before anything is signed.
	Amount string `json:"amount,omitempty"`
}

// SignInput is a request to verify and sign.
type SignInput struct {
	RequestInput
	Unsigned string `json:"unsigned"`
	// EchoedAmount is the amount endpoint 6's answer named beside the request (Request.Amount):
	// an answer whose amount and action disagree is refused whole.
	EchoedAmount string `json:"echoedAmount,omitempty"`
	// UsedNonces are nonces earlier requests of this operation were signed with.
	UsedNonces []uint64 `json:"usedNonces,omitempty"`
}

// Signed is a verified, signed action, ready for the exchange. Its signature is not secret: it
// proves the delegator asked for exactly this withdrawal.
type Signed struct {
	Action    hlsigner.Action    `json:"action"`
	Nonce     uint64             `json:"nonce"`
	Signature hlsigner.Signature `json:"signature"`
	// Digest is the EIP-712 hash signed: the action's ID.
	Digest string `json:"digest"`
}

// SubmitInput is a signed action to submit for Delegator.
type SubmitInput struct {
	Network   string `json:"network"`
	Delegator string `json:"delegator"`
	Signed    Signed `json:"signed"`
	// Known are the hashes of the withdrawals the delegator's history showed before the action
	// was signed: none of them is this action's.
	Known []string `json:"known,omitempty"`
}

// SubmitResult is where the action stands after its submission.
type SubmitResult struct {
	Outcome string `json:"outcome"`
	// Reason is the exchange's refusal, when it refused.
	Reason string `json:"reason,omitempty"`
}

func (a *Activities) api(network string) (API, error) {
	api, ok := a.APIs[network]
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the worker has no Hyperliquid API for %s (--hyperliquid-api %s=URL)", network, network), activities.ErrInvalidInput, nil)
	}
	return api, nil
}

// HLReadAccount reads the delegator's staking balance, pending and finalized withdrawals and
// spot balance.
func (a *Activities) HLReadAccount(ctx context.Context, in AccountInput) (Account, error) {
	api, err := a.api(in.Network)
	if err != nil {
		return Account{}, err
	}
	readAt := now()
	acc, err := api.Account(ctx, strings.ToLower(in.Delegator))
	if err != nil {
		return Account{}, classifyAPI("reading the delegator's account", err)
	}
	for i := range acc.Pending {
		acc.Pending[i].CompletesAt = acc.Pending[i].Time.Add(Queue(in.Network))
	}
	return Account{Account: acc, RecheckAfter: a.RecheckAfter, ReadAt: readAt}, nil
}

// HLRequest asks the staking service (endpoint 6) for the unsigned withdrawal request.
func (a *Activities) HLRequest(ctx context.Context, in RequestInput) (Request, error) {
	res, err := a.Service.HyperliquidWithdraw(ctx, in.Network, apiclient.HyperliquidWithdrawRequest{Amount: json.Number(in.Amount), DelegatorAddress: in.Delegator})
	if err != nil {
		return Request{}, activities.ClassifyService("Hyperliquid withdrawal request", err)
	}
	return Request{Unsigned: res.UnsignedTransaction, CreatedAt: res.CreatedAt.Time, Amount: res.Amount}, nil
}

// HLSign decodes the unsigned request, verifies it against the intent and signs it. Anything
// that differs fails VerificationFailed (non-retryable) naming it; nothing is signed then. Before
// the signature the nonce is recorded for the operation in the nonce book: a nonce another
// operation recorded, before or since a restart, is refused the same way.
func (a *Activities) HLSign(ctx context.Context, in SignInput) (Signed, error) {
	if _, err := a.api(in.Network); err != nil || a.Signer == nil {
		return Signed{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the worker does not sign for Hyperliquid %s (--hyperliquid-api %s=URL and --hyperliquid-keys)", in.Network, in.Network), activities.ErrInvalidInput, nil)
	}
	u, err := hlsigner.Decode(in.Unsigned)
	if err != nil {
		return Signed{}, temporal.NewNonRetryableApplicationError(err.Error()+"; nothing was signed", activities.ErrVerificationFailed, nil)
	}
	intent := hlsigner.Intent{Network: in.Network, Delegator: common.HexToAddress(in.Delegator), Amount: in.Amount,
		EchoedAmount: in.EchoedAmount, UsedNonces: in.UsedNonces}
	if err := a.Signer.Verify(intent, u); err != nil {
		return Signed{}, signError(err)
	}
	if a.Nonces != nil {
		if !a.Signer.Has(intent.Delegator) {
			return Signed{}, signError(&signerevm.UnknownKeyError{Address: intent.Delegator.Hex()})
		}
		op := operationOf(ctx)
		err := a.Nonces.ClaimNonce(ctx, intent.Delegator.Hex(), u.Action.Nonce, op, time.Now())
		var taken *store.NonceTakenError
		switch {
		case errors.As(err, &taken):
			return Signed{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("nonce: want one this key has not signed for another operation, got %d, recorded by operation %s; nothing was signed", taken.Nonce, taken.Operation),
				activities.ErrVerificationFailed, nil)
		case err != nil:
			return Signed{}, temporal.NewApplicationError("recording the nonce before signing: "+err.Error(), ErrNonceBook)
		}
	}
	s, err := a.Signer.Sign(ctx, intent, u)
	if err != nil {
		return Signed{}, signError(err)
	}
	return Signed{Action: s.Action, Nonce: s.Nonce, Signature: s.Signature, Digest: s.Digest}, nil
}

// operationOf is the operation an activity runs for: its workflow's ID.
var operationOf = func(ctx context.Context) string { return activity.GetInfo(ctx).WorkflowExecution.ID }

// signError is the application error of a refusal of the signer.
func signError(err error) error {
	switch {
	case errors.Is(err, signerevm.ErrUnknownKey):
		return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrUnknownKey, nil)
	case errors.Is(err, hlsigner.ErrIntent):
		return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrVerificationFailed, nil)
}

// HLSubmit posts the signed action to the exchange, the same bytes at every retry. A refusal is
// followed by a read of the account: the action counts as sent when its nonce is recorded for the
// delegator: its history shows the withdrawal (Find), pending or finalized.
func (a *Activities) HLSubmit(ctx context.Context, in SubmitInput) (SubmitResult, error) {
	api, err := a.api(in.Network)
	if err != nil {
		return SubmitResult{}, err
	}
	body := map[string]any{"action": in.Signed.Action, "nonce": in.Signed.Nonce, "signature": in.Signed.Signature}
	res, err := api.Exchange(ctx, body)
	if err != nil {
		return SubmitResult{}, classifyAPI("submitting the withdrawal", err)
	}
	if res.OK() {
		return SubmitResult{Outcome: OutcomeSent}, nil
	}
	acc, err := api.Account(ctx, strings.ToLower(in.Delegator))
	if err != nil {
		return SubmitResult{}, classifyAPI("reading the account after a refused submission", err)
	}
	if _, ok := Find(acc, in.Signed.Action.Wei, in.Signed.Nonce, in.Known); ok {
		return SubmitResult{Outcome: OutcomeSent, Reason: res.Reason()}, nil
	}
	if strings.Contains(strings.ToLower(res.Reason()), "nonce") {
		return SubmitResult{Outcome: OutcomeNonceRefused, Reason: res.Reason()}, nil
	}
	return SubmitResult{Outcome: OutcomeRefused, Reason: res.Reason()}, nil
}

// Hyperliquid accepts an action whose nonce lies within (T - NonceBehind, T + NonceAhead) of the
// time T of the block that takes it (Hyperliquid's API documentation, "Nonces and API wallets":
// "The nonce must be within (T - 2 days, T + 1 day), where T is the unix millisecond timestamp on
// the block of the transaction").
const (
	NonceBehind = 48 * time.Hour
	NonceAhead  = 24 * time.Hour
)

// ClockSkew is how far the worker's clock may run ahead of the exchange's block time: the proof of
// "cannot land" waits this much longer than the window itself.
const ClockSkew = time.Hour

// now is the worker's clock (ReadAt).
var now = time.Now

// WindowClosed is the earliest worker time at which an action signed with nonce is proven out of
// the exchange's window: the nonce's time plus NonceBehind, plus ClockSkew.
func WindowClosed(nonce uint64) time.Time {
	return time.UnixMilli(int64(min(nonce, uint64(1)<<62))).Add(NonceBehind + ClockSkew)
}

// Fate is where the action of wei signed with nonce stands in acc, read at acc.ReadAt:
//   - activities.OutcomeFinalized with its withdrawal: the history shows it (Find); on Hyperliquid
//     an initiated withdrawal is final, it reaches spot after the queue whatever happens;
//   - activities.OutcomeCannotLand: the account was read after the nonce left the exchange's
//     window (WindowClosed) and its history does not show the action: no block can take it any
//     more, resubmitted or not;
//   - "" otherwise: the action may still land; keep following it.
func Fate(acc Account, wei, nonce uint64, known []string) (hlchain.Withdrawal, string) {
	if w, ok := Find(acc.Account, wei, nonce, known); ok {
		return w, activities.OutcomeFinalized
	}
	if !acc.ReadAt.IsZero() && !acc.ReadAt.Before(WindowClosed(nonce)) {
		return hlchain.Withdrawal{}, activities.OutcomeCannotLand
	}
	return hlchain.Withdrawal{}, ""
}

// Queue is how long a staking withdrawal waits before it reaches spot: 7 days on mainnet, 5
// minutes on testnet.
func Queue(network string) time.Duration {
	if network == "mainnet" {
		return 7 * 24 * time.Hour
	}
	return 5 * time.Minute
}

// Find returns the withdrawal an action of wei signed with nonce became, pending or finalized: the
// earliest withdrawal of exactly wei initiated at a time that could take that nonce (nonce -
// NonceAhead to nonce + NonceBehind) whose hash is not among known (those shown before the action
// was signed).
func Find(acc hlchain.Account, wei, nonce uint64, known []string) (hlchain.Withdrawal, bool) {
	signed := time.UnixMilli(int64(min(nonce, uint64(1)<<62)))
	var found hlchain.Withdrawal
	ok := false
	for _, w := range append(append([]hlchain.Withdrawal{}, acc.Finalized...), acc.Pending...) {
		if w.Wei != wei || slices.Contains(known, w.Hash) || !w.Time.After(signed.Add(-NonceAhead)) || !w.Time.Before(signed.Add(NonceBehind)) {
			continue
		}
		if !ok || w.Time.Before(found.Time) {
			found, ok = w, true
		}
	}
	return found, ok
}

// Hashes lists the hashes of the account's withdrawals, pending and finalized.
func Hashes(acc hlchain.Account) []string {
	out := []string{}
	for _, w := range append(append([]hlchain.Withdrawal{}, acc.Finalized...), acc.Pending...) {
		out = append(out, w.Hash)
	}
	return out
}

func classifyAPI(what string, err error) error {
	var un *hlchain.UnavailableError
	if errors.As(err, &un) || errors.Is(err, context.DeadlineExceeded) {
		return temporal.NewApplicationError(fmt.Sprintf("%s: %v", what, err), activities.ErrChainUnavailable)
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v", what, err), activities.ErrChainRejected, nil)
}
