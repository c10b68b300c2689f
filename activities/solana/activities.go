package solana

import (
	"context"
	"errors"
	"fmt"
	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/approval"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/signer"
)

// StakingService is the part of the staking service the activities call. The worker's client
// counts and times every call (metrics.ServiceObserver).
type StakingService interface {
	Stake(ctx context.Context, req apiclient.StakeRequest) (*apiclient.UnsignedTransaction, error)
	Unstake(ctx context.Context, req apiclient.UnstakeRequest) (*apiclient.UnsignedTransaction, error)
	Withdraw(ctx context.Context, req apiclient.WithdrawRequest) (*apiclient.UnsignedTransaction, error)
	Broadcast(ctx context.Context, req apiclient.BroadcastRequest) (*apiclient.BroadcastResult, error)
	SolanaValidatorStatus(ctx context.Context, network string, voteAccounts []string) (*apiclient.ValidatorStatusResult, error)
}

// TxSigner verifies an unsigned transaction against the intent and signs it. Its allow-list is
// the one place the validators a stake may go to are configured: CheckPolicy reads it too.
type TxSigner interface {
	Sign(ctx context.Context, unsigned string, intent signer.Intent) (*signer.Signed, error)
	AllowedVoteAccounts() []string
}

// KeyHolder tells whether the worker holds the key of an address.
type KeyHolder interface {
	Has(addr string) bool
}

// Policy is the worker's operating policy.
type Policy struct {
	// ApprovalThreshold: operations of at least this many lamports wait for an approval (0: never).
	ApprovalThreshold uint64
	// DualApprovalThreshold: operations of at least this many lamports wait for two distinct
	// approvals (0: never).
	DualApprovalThreshold uint64
	// MaxCommission is the highest validator commission, in percent, a stake may be delegated to.
	// The zero value allows only validators that charge none.
	MaxCommission uint8
	// Approvers are the worker's configured approvers (--approvers), carried in every decision.
	Approvers []approval.Approver
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
// hold the staker's key, a stake must name its vote account unless the worker has an allow-list,
// an explicitly asked vote account must be allowed, and large amounts wait for one approval, or
// two at the dual-approval threshold.
func (a *Activities) CheckPolicy(ctx context.Context, in Intent) (activities.PolicyDecision, error) {
	if !a.Keys.Has(in.Staker) {
		return activities.PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker holds no key for staker %s", in.Staker), activities.ErrUnknownKey, nil)
	}
	allowed := a.Signer.AllowedVoteAccounts()
	if in.Operation == OpStake && in.VoteAccount == "" && len(allowed) == 0 {
		// Otherwise the service would choose the validator, and nobody named or allowed it.
		return activities.PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			"the stake names no vote account and this worker has no allow-list: name the validator "+
				"(starter --vote-account) or give the worker the validators it may choose from "+
				"(worker --allowed-vote-accounts)", activities.ErrPolicy, nil)
	}
	if in.VoteAccount != "" && len(allowed) > 0 && !slices.Contains(allowed, in.VoteAccount) {
		return activities.PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("vote account %s is not on the worker's allow-list", in.VoteAccount), activities.ErrPolicy, nil)
	}
	if _, ok := a.Chains[in.Network]; !ok {
		return activities.PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker has no RPC endpoint for network %s", in.Network), activities.ErrInvalidInput, nil)
	}
	one, two := a.Policy.ApprovalThreshold, a.Policy.DualApprovalThreshold
	n := 0
	if one > 0 && in.Lamports >= one {
		n = 1
	}
	if two > 0 && in.Lamports >= two {
		n = 2
	}
	return activities.PolicyDecision{ApprovalRequired: n > 0, ApprovalsRequired: n, ApprovalThreshold: one, DualApprovalThreshold: two,
		Approvers: a.Policy.Approvers}, nil
}

// CheckValidator lets a stake go to a vote account only when two sources agree that it is healthy:
// the service reports it active, and our own RPC, proven to serve the network, lists it as
// current (not delinquent) with a commission within the policy. Anything else is refused,
// non-retryably, naming what did not hold.
func (a *Activities) CheckValidator(ctx context.Context, in ValidatorCheckInput) (ValidatorCheckResult, error) {
	r, err := a.chain(in.Network)
	if err != nil {
		return ValidatorCheckResult{}, err
	}
	res, err := a.Service.SolanaValidatorStatus(ctx, in.Network, []string{in.VoteAccount})
	if err != nil {
		return ValidatorCheckResult{}, activities.ClassifyService("validator status", err)
	}
	status, err := validatorStatus(res, in.VoteAccount)
	if err != nil {
		return ValidatorCheckResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("validator status of %s: %v", in.VoteAccount, err), activities.ErrValidatorNotHealthy, nil)
	}
	if !strings.EqualFold(status, "active") {
		return ValidatorCheckResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("vote account %s is %s, not active: refusing to stake to it", in.VoteAccount, status), activities.ErrValidatorNotHealthy, nil)
	}
	v, err := r.VoteAccount(ctx, in.VoteAccount)
	if err != nil {
		return ValidatorCheckResult{}, chainErr("vote account "+in.VoteAccount, err)
	}
	refuse := func(format string, args ...any) (ValidatorCheckResult, error) {
		return ValidatorCheckResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf(format, args...)+": refusing to stake to it", activities.ErrValidatorNotHealthy, nil)
	}
	switch {
	case !v.Found:
		return refuse("vote account %s is unknown to the worker's %s RPC, though the service reports it %s", in.VoteAccount, in.Network, status)
	case v.Delinquent:
		return refuse("vote account %s is delinquent on %s (last vote at slot %d), though the service reports it %s", in.VoteAccount, in.Network, v.LastVote, status)
	case v.Commission > a.Policy.MaxCommission:
		return refuse("vote account %s charges %d%% commission, above the worker's --max-commission of %d%%", in.VoteAccount, v.Commission, a.Policy.MaxCommission)
	}
	return ValidatorCheckResult{VoteAccount: in.VoteAccount, Status: status, Commission: v.Commission, ActivatedStake: v.ActivatedStake}, nil
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
		return BuildResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown operation %q", in.Operation), activities.ErrInvalidInput, nil)
	}
	if err != nil {
		return BuildResult{}, activities.ClassifyService("build "+string(in.Operation), err)
	}
	if tx.UnsignedTransactionData == "" {
		return BuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("build %s: the service returned no unsignedTransactionData (request %s)", in.Operation, info.RequestID),
			activities.ErrServiceRejected, nil)
	}
	activity.GetLogger(ctx).Info("Built transaction", "operation", string(in.Operation), "requestId", info.RequestID)
	return BuildResult{
		UnsignedTransaction: tx.UnsignedTransactionData,
		VoteAccount:         tx.ExtraData.VoteAccount,
		RequestID:           info.RequestID,
		CreatedAt:           tx.CreatedAt.Time,
	}, nil
}

// Sign verifies the unsigned transaction against the intent and signs it with the staker's key.
// A transaction that does not do exactly what was asked is refused, non-retryably, and nothing is
// signed.
func (a *Activities) Sign(ctx context.Context, in SignInput) (SignResult, error) {
	signed, err := a.Signer.Sign(ctx, in.UnsignedTransaction, signerIntent(in.Intent))
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// Not a refusal: the attempt was cancelled or ran out of time before anything was signed.
		return SignResult{}, fmt.Errorf("sign: %w", err)
	}
	if err != nil {
		typ := activities.ErrVerificationFailed
		switch {
		case errors.Is(err, signer.ErrUnknownKey):
			typ = activities.ErrUnknownKey
		case errors.Is(err, signer.ErrIntent):
			typ = activities.ErrInvalidInput
		}
		activity.GetLogger(ctx).Warn("Refused to sign", "operation", string(in.Intent.Operation), "error", err)
		recordSignerRefusal(ctx, in.Intent.Chain, string(in.Intent.Operation), err)
		return SignResult{}, temporal.NewNonRetryableApplicationError("refused to sign: "+err.Error(), typ, nil)
	}
	return SignResult{
		Signature:         signed.Signature,
		SignedTransaction: signed.SignedTransaction,
		RecentBlockhash:   signed.RecentBlockhash,
		StakeAccount:      signed.StakeAccount,
		VoteAccount:       signed.VoteAccount,
		FeeLamports:       signed.FeeLamports,
	}, nil
}

func signerIntent(in Intent) signer.Intent {
	out := in
	if in.Operation == OpUnstake {
		// A deactivation always covers the whole stake account; the amount is checked against the
		// account's balance when the workflow reads it, not in the transaction.
		out.Lamports = 0
	}
	return out
}

// Broadcast sends the signed bytes through the staking service. It sends exactly the bytes it is
// given, so retries re-send the same transaction; a refusal because the chain already processed
// them counts as sent, and any other refusal of a re-send (an earlier attempt may have landed)
// is activities.ErrBroadcastUncertain, for the chain to decide.
func (a *Activities) Broadcast(ctx context.Context, in BroadcastInput) (BroadcastResult, error) {
	var info apiclient.ResponseInfo
	rctx := apiclient.WithResponseInfo(ctx, &info)
	res, err := a.Service.Broadcast(rctx, apiclient.BroadcastRequest{
		Chain: in.Intent.Chain, Network: in.Intent.Network, StakerAddress: in.Intent.Staker, SignedTransaction: in.SignedTransaction,
	})
	logger := activity.GetLogger(ctx)
	record := func(outcome, reason string) {
		activities.RecordBroadcast(ctx, in.Intent.Chain, in.Intent.Network, outcome, reason)
	}
	if err != nil {
		switch broadcastRefusal(err) {
		case refusalAlreadyProcessed:
			record(activities.BroadcastAlreadyProcessed, activities.ReasonNone)
			logger.Info("Broadcast: already processed", "txSig", in.Signature)
			return BroadcastResult{Signature: in.Signature, AlreadyProcessed: true, RequestID: apiclient.RequestIDOf(err)}, nil
		case refusalBlockhash:
			record(activities.BroadcastRefused, activities.ReasonBlockhashExpired)
			return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("broadcast %s: blockhash not found or expired: %v", in.Signature, err), activities.ErrBlockhashExpired, nil)
		case refusalRejected:
			record(activities.BroadcastRefused, activities.ReasonRejected)
			if attempt := activity.GetInfo(ctx).Attempt; attempt > 1 {
				// An earlier attempt's answer was lost: it may have landed, and a landed transaction
				// is refused when sent again. Only the chain can tell.
				return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("broadcast %s refused at attempt %d, after an earlier attempt that may have landed: %v", in.Signature, attempt, err),
					activities.ErrBroadcastUncertain, nil)
			}
			if d, ok := decodeRefusal(err, in.SignedTransaction); ok {
				// Cause first; the service's answer, whole, is the cause.
				return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("%s; broadcast %s refused", d, in.Signature), activities.ErrTransactionRejected, err)
			}
			return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("broadcast %s refused: %v", in.Signature, err), activities.ErrTransactionRejected, nil)
		}
		record(activities.BroadcastRefused, activities.BroadcastErrorReason(err))
		return BroadcastResult{}, activities.ClassifyService("broadcast "+in.Signature, err)
	}
	if res.ExtraData.TransactionID != "" && res.ExtraData.TransactionID != in.Signature {
		// The service reports another transaction id than the signature of the bytes sent. The chain
		// is followed by our own signature; record the discrepancy loudly.
		logger.Error("Broadcast answered another transaction id", "txSig", in.Signature, "reported", res.ExtraData.TransactionID)
	}
	record(activities.BroadcastSent, activities.ReasonNone)
	logger.Info("Broadcast", "txSig", in.Signature, "slot", res.ExtraData.Slot, "requestId", info.RequestID)
	return BroadcastResult{Signature: in.Signature, Slot: res.ExtraData.Slot, RequestID: info.RequestID}, nil
}

// decodeRefusal decodes the transaction error a broadcast refusal carries, naming the program of
// the failing instruction from the signed transaction.
func decodeRefusal(err error, signedTx string) (*solchain.TxError, bool) {
	progs, perr := solchain.TransactionPrograms(signedTx)
	if perr != nil {
		progs = nil
	}
	return solchain.DecodeTxError(err.Error(), progs)
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
		apiErr.StatusCode == 429 || apiErr.StatusCode == 401 || apiErr.StatusCode == 403 || apiErr.Retryable() {
		// Not an answer about the transaction: the service is busy (408, 409 with its envelope),
		// throttling, or refusing the worker. The same bytes are sent again.
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
