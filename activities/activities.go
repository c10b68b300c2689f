package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/signer"
)

// StakingService is the part of the staking service the activities call.
type StakingService interface {
	Stake(ctx context.Context, req apiclient.StakeRequest) (*apiclient.UnsignedTransaction, error)
	Unstake(ctx context.Context, req apiclient.UnstakeRequest) (*apiclient.UnsignedTransaction, error)
	Withdraw(ctx context.Context, req apiclient.WithdrawRequest) (*apiclient.UnsignedTransaction, error)
	Broadcast(ctx context.Context, req apiclient.BroadcastRequest) (*apiclient.BroadcastResult, error)
	SolanaValidatorStatus(ctx context.Context, network string, voteAccounts []string) (*apiclient.ValidatorStatusResult, error)
}

// TxSigner verifies an unsigned transaction against the intent and signs it.
type TxSigner interface {
	Sign(ctx context.Context, unsigned string, intent signer.Intent) (*signer.Signed, error)
}

// KeyHolder tells whether the worker holds the key of an address.
type KeyHolder interface {
	Has(addr string) bool
}

// Policy is the worker's operating policy.
type Policy struct {
	// ApprovalThreshold: operations of at least this many lamports wait for an approval (0: never).
	ApprovalThreshold uint64
	// AllowedVoteAccounts, when set, are the only validators stakes may be delegated to.
	AllowedVoteAccounts []string
}

// Activities are stakeflow's activities. Service, Signer, Keys and Chains are required; the
// durations have defaults.
type Activities struct {
	Service StakingService
	Signer  TxSigner
	Keys    KeyHolder
	// Chains reads each Solana network, by network name.
	Chains map[string]SolanaReader
	Policy Policy
	// SlotDuration is the slot time of the Solana networks, reported with stake state so that
	// workflows size their waits for an epoch's end. Zero leaves the workflow's default.
	SlotDuration time.Duration
	// EpochRecheck caps each wait for an epoch's end before the stake account is read again.
	// Zero leaves the workflow's own cap (an hour).
	EpochRecheck time.Duration
	// ConfirmHeartbeatAfter is how long Confirm runs before it starts heartbeating; zero means
	// five seconds, and never more than a quarter of the activity's heartbeat timeout.
	ConfirmHeartbeatAfter time.Duration
}

// CheckPolicy applies the worker's policy to an intent before anything is built: the worker must
// hold the staker's key, an explicitly asked vote account must be allowed, and large amounts wait
// for approval.
func (a *Activities) CheckPolicy(ctx context.Context, in Intent) (PolicyDecision, error) {
	if !a.Keys.Has(in.Staker) {
		return PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker holds no key for staker %s", in.Staker), ErrUnknownKey, nil)
	}
	if in.VoteAccount != "" && len(a.Policy.AllowedVoteAccounts) > 0 && !slices.Contains(a.Policy.AllowedVoteAccounts, in.VoteAccount) {
		return PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("vote account %s is not on the worker's allow-list", in.VoteAccount), ErrPolicy, nil)
	}
	if _, ok := a.Chains[in.Network]; !ok {
		return PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker has no RPC endpoint for network %s", in.Network), ErrInvalidInput, nil)
	}
	t := a.Policy.ApprovalThreshold
	return PolicyDecision{ApprovalRequired: t > 0 && in.Lamports >= t, ApprovalThreshold: t}, nil
}

// CheckValidator refuses a vote account the service reports as anything but active, or does not
// know.
func (a *Activities) CheckValidator(ctx context.Context, in ValidatorCheckInput) (ValidatorCheckResult, error) {
	res, err := a.Service.SolanaValidatorStatus(ctx, in.Network, []string{in.VoteAccount})
	if err != nil {
		return ValidatorCheckResult{}, classifyService("validator status", err)
	}
	status, err := validatorStatus(res, in.VoteAccount)
	if err != nil {
		return ValidatorCheckResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("validator status of %s: %v", in.VoteAccount, err), ErrValidatorNotHealthy, nil)
	}
	if !strings.EqualFold(status, "active") {
		return ValidatorCheckResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("vote account %s is %s, not active: refusing to stake to it", in.VoteAccount, status), ErrValidatorNotHealthy, nil)
	}
	return ValidatorCheckResult{VoteAccount: in.VoteAccount, Status: status}, nil
}

// validatorStatus finds the status of one vote account in an endpoint 7 result, whose form the
// spec leaves open: a map of vote account to status, a JSON text holding such a map, or, for a
// single account, a plain status word or a one-element list.
func validatorStatus(res *apiclient.ValidatorStatusResult, vote string) (string, error) {
	p, err := res.ParseStatuses()
	if err != nil {
		return "", err
	}
	switch p.Form {
	case apiclient.StatusesMap:
		if s, ok := p.Map[vote]; ok {
			return s, nil
		}
		return "unknown", nil
	case apiclient.StatusesList:
		if len(p.List) == 1 {
			return p.List[0], nil
		}
		return "", fmt.Errorf("%d statuses for one vote account", len(p.List))
	default:
		inner := apiclient.ValidatorStatusResult{Statuses: []byte(p.Text)}
		if q, err := inner.ParseStatuses(); err == nil && q.Form != apiclient.StatusesString {
			return validatorStatus(&inner, vote)
		}
		if p.Text == "" {
			return "", errors.New("empty status")
		}
		return p.Text, nil
	}
}

// Build asks the staking service for the unsigned transaction of an intent. It has no effect on
// chain; retrying it is safe.
func (a *Activities) Build(ctx context.Context, in Intent) (BuildResult, error) {
	var info apiclient.ResponseInfo
	rctx := apiclient.WithResponseInfo(ctx, &info)
	amount := strconv.FormatUint(in.Lamports, 10)
	var tx *apiclient.UnsignedTransaction
	var err error
	switch in.Operation {
	case OpStake:
		tx, err = a.Service.Stake(rctx, apiclient.StakeRequest{Chain: in.Chain, Network: in.Network, StakerAddress: in.Staker, Amount: amount})
	case OpUnstake:
		tx, err = a.Service.Unstake(rctx, apiclient.UnstakeRequest{Chain: in.Chain, Network: in.Network, StakerAddress: in.Staker,
			Extra: apiclient.UnstakeExtra{Amount: amount, StakeAccount: in.StakeAccount}})
	case OpWithdraw:
		tx, err = a.Service.Withdraw(rctx, apiclient.WithdrawRequest{Chain: in.Chain, Network: in.Network, StakerAddress: in.Staker,
			Extra: apiclient.WithdrawExtra{Amount: amount}})
	default:
		return BuildResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown operation %q", in.Operation), ErrInvalidInput, nil)
	}
	if err != nil {
		return BuildResult{}, classifyService("build "+string(in.Operation), err)
	}
	if tx.UnsignedTransactionData == "" {
		return BuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("build %s: the service returned no unsignedTransactionData (request %s)", in.Operation, info.RequestID),
			ErrServiceRejected, nil)
	}
	activity.GetLogger(ctx).Info("Built transaction", "operation", string(in.Operation), "requestId", info.RequestID)
	return BuildResult{
		UnsignedTransaction: tx.UnsignedTransactionData,
		VoteAccount:         tx.ExtraData.VoteAccount,
		RequestID:           info.RequestID,
		CreatedAt:           tx.CreatedAt,
	}, nil
}

// Sign verifies the unsigned transaction against the intent and signs it with the staker's key.
// A transaction that does not do exactly what was asked is refused, non-retryably, and nothing is
// signed.
func (a *Activities) Sign(ctx context.Context, in SignInput) (SignResult, error) {
	signed, err := a.Signer.Sign(ctx, in.UnsignedTransaction, signerIntent(in.Intent))
	if err != nil {
		typ := ErrVerificationFailed
		switch {
		case errors.Is(err, signer.ErrUnknownKey):
			typ = ErrUnknownKey
		case errors.Is(err, signer.ErrIntent):
			typ = ErrInvalidInput
		}
		activity.GetLogger(ctx).Warn("Refused to sign", "operation", string(in.Intent.Operation), "error", err)
		metrics.RecordSignerRefusal(activity.GetMetricsHandler(ctx), in.Intent.Chain, string(in.Intent.Operation), err)
		return SignResult{}, temporal.NewNonRetryableApplicationError("refused to sign: "+err.Error(), typ, nil)
	}
	return SignResult{
		Signature:         signed.Signature,
		SignedTransaction: signed.SignedTransaction,
		RecentBlockhash:   signed.RecentBlockhash,
		StakeAccount:      signed.StakeAccount,
		VoteAccount:       signed.VoteAccount,
	}, nil
}

func signerIntent(in Intent) signer.Intent {
	out := signer.Intent{
		Chain: in.Chain, Network: in.Network, Operation: signer.Operation(in.Operation),
		Staker: in.Staker, Lamports: in.Lamports, VoteAccount: in.VoteAccount, StakeAccount: in.StakeAccount,
	}
	if in.Operation == OpUnstake {
		// A deactivation always covers the whole stake account; the amount is checked against the
		// account's balance when the workflow reads it, not in the transaction.
		out.Lamports = 0
	}
	return out
}

// Broadcast sends the signed bytes through the staking service. It sends exactly the bytes it is
// given, so retries re-send the same transaction; a refusal because the chain already processed
// them counts as sent.
func (a *Activities) Broadcast(ctx context.Context, in BroadcastInput) (BroadcastResult, error) {
	var info apiclient.ResponseInfo
	rctx := apiclient.WithResponseInfo(ctx, &info)
	res, err := a.Service.Broadcast(rctx, apiclient.BroadcastRequest{
		Chain: in.Intent.Chain, Network: in.Intent.Network, StakerAddress: in.Intent.Staker, SignedTransaction: in.SignedTransaction,
	})
	logger := activity.GetLogger(ctx)
	record := func(outcome, reason string) {
		metrics.RecordBroadcast(activity.GetMetricsHandler(ctx), in.Intent.Chain, in.Intent.Network, outcome, reason)
	}
	if err != nil {
		switch broadcastRefusal(err) {
		case refusalAlreadyProcessed:
			record(metrics.BroadcastAlreadyProcessed, metrics.ReasonNone)
			logger.Info("Broadcast: already processed", "txSig", in.Signature)
			return BroadcastResult{Signature: in.Signature, AlreadyProcessed: true, RequestID: apiclient.RequestIDOf(err)}, nil
		case refusalBlockhash:
			record(metrics.BroadcastRefused, metrics.ReasonBlockhashExpired)
			return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("broadcast %s: blockhash not found or expired: %v", in.Signature, err), ErrBlockhashExpired, nil)
		case refusalRejected:
			record(metrics.BroadcastRefused, metrics.ReasonRejected)
			return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("broadcast %s refused: %v", in.Signature, err), ErrTransactionRejected, nil)
		}
		record(metrics.BroadcastRefused, broadcastErrorReason(err))
		return BroadcastResult{}, classifyService("broadcast "+in.Signature, err)
	}
	if res.ExtraData.TransactionID != "" && res.ExtraData.TransactionID != in.Signature {
		// The service reports another transaction id than the signature of the bytes sent. The chain
		// is followed by our own signature; record the discrepancy loudly.
		logger.Error("Broadcast answered another transaction id", "txSig", in.Signature, "reported", res.ExtraData.TransactionID)
	}
	record(metrics.BroadcastSent, metrics.ReasonNone)
	logger.Info("Broadcast", "txSig", in.Signature, "slot", res.ExtraData.Slot, "requestId", info.RequestID)
	return BroadcastResult{Signature: in.Signature, Slot: res.ExtraData.Slot, RequestID: info.RequestID}, nil
}

type refusal int

const (
	refusalNone refusal = iota
	refusalAlreadyProcessed
	refusalBlockhash
	refusalRejected
)

// broadcastRefusal reads what a 4xx answer to a broadcast means for the transaction.
func broadcastRefusal(err error) refusal {
	var apiErr *apiclient.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode < 400 || apiErr.StatusCode >= 500 ||
		apiErr.StatusCode == 429 || apiErr.StatusCode == 401 || apiErr.StatusCode == 403 {
		return refusalNone
	}
	text := strings.ToLower(apiErr.Name + " " + apiErr.Message)
	for _, v := range apiErr.Errors {
		for _, c := range v.Constraints {
			text += " " + strings.ToLower(c)
		}
	}
	squashed := strings.ReplaceAll(text, " ", "")
	switch {
	case strings.Contains(squashed, "alreadyprocessed") || strings.Contains(squashed, "alreadybeenprocessed"):
		return refusalAlreadyProcessed
	case strings.Contains(squashed, "blockhashnotfound") || strings.Contains(squashed, "blockhashexpired"):
		return refusalBlockhash
	}
	return refusalRejected
}

// broadcastErrorReason is the refusal reason of a broadcast error that is retried or unforeseen.
func broadcastErrorReason(err error) string {
	switch {
	case apiclient.IsThrottled(err):
		return metrics.ReasonThrottled
	case apiclient.IsRetryable(err):
		return metrics.ReasonUnavailable
	}
	return metrics.ReasonError
}

// classifyService turns an apiclient error into an application error of the right retryability.
func classifyService(what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return temporal.NewApplicationError(fmt.Sprintf("%s: %v", what, err), ErrServiceUnavailable)
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	if apiclient.IsThrottled(err) {
		opts := temporal.ApplicationErrorOptions{}
		if d, ok := apiclient.RetryAfterOf(err); ok {
			opts.NextRetryDelay = d
		}
		return temporal.NewApplicationErrorWithOptions(msg, ErrRateLimited, opts)
	}
	var argErr *apiclient.ArgumentError
	if errors.As(err, &argErr) || errors.Is(err, apiclient.ErrNoToken) {
		return temporal.NewNonRetryableApplicationError(msg, ErrInvalidInput, nil)
	}
	if apiclient.IsRetryable(err) {
		return temporal.NewApplicationError(msg, ErrServiceUnavailable)
	}
	var apiErr *apiclient.APIError
	var unexpected *apiclient.UnexpectedResponseError
	if errors.As(err, &apiErr) || errors.As(err, &unexpected) {
		return temporal.NewNonRetryableApplicationError(msg, ErrServiceRejected, nil)
	}
	// Transport errors and anything unforeseen: retry with backoff.
	return temporal.NewApplicationError(msg, ErrServiceUnavailable)
}
