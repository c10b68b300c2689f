package activities

import (
	"fmt"
	"time"

	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/signer"
)

// Error types of the application errors activities return. Workflows switch on them with
// errors.As(err, &appErr) and appErr.Type(). Every type listed in NonRetryable is final for the
// activity that returned it; it is not always final for the operation (see ErrChainRejected).
const (
	// ErrInvalidInput: the request is malformed (bad address, amount, network). Non-retryable.
	ErrInvalidInput = "InvalidInput"
	// ErrUnknownKey: the worker holds no key for the staker. Non-retryable.
	ErrUnknownKey = "UnknownKey"
	// ErrPolicy: the operation is outside the worker's policy (vote account not allowed, or a stake
	// that names no vote account while the worker has no allow-list). Non-retryable.
	ErrPolicy = "PolicyViolation"
	// ErrVerificationFailed: the unsigned transaction does not do what was asked; nothing was signed. Non-retryable.
	ErrVerificationFailed = "VerificationFailed"
	// ErrServiceRejected: the staking service refused the request (HTTP 400, 403, 404, ...). Non-retryable.
	ErrServiceRejected = "ServiceRejected"
	// ErrServiceUnauthorized: the staking service refused the worker's token (HTTP 401) after the
	// client re-read it, or no token is configured. Retryable: the cure is a new token, not a new
	// operation, so an operation half done (a transaction sent, not yet confirmed) waits for it;
	// the pending activity's last failure shows the refusal in the Web UI, and /readyz names it.
	ErrServiceUnauthorized = "ServiceUnauthorized"
	// ErrServiceUnavailable: the staking service failed or could not be reached. Retryable with
	// backoff, or after the service's Retry-After (NextRetryDelay) when it sent one (503).
	ErrServiceUnavailable = "ServiceUnavailable"
	// ErrRateLimited: the staking service answered 429; retried after its Retry-After (NextRetryDelay).
	ErrRateLimited = "RateLimited"
	// ErrTransactionRejected: the broadcast was refused for a reason that will not change by re-sending
	// the same bytes (bad signature, instruction error). Non-retryable.
	ErrTransactionRejected = "TransactionRejected"
	// ErrBroadcastUncertain: a re-send of the same bytes was refused after an earlier attempt whose
	// answer was lost: that attempt may have landed, so the refusal says nothing about the
	// transaction. Non-retryable for the broadcast; the workflow follows the transaction on chain
	// (Confirm) instead of failing.
	ErrBroadcastUncertain = "BroadcastUncertain"
	// ErrBlockhashExpired: the broadcast was refused because the transaction's blockhash is unknown or
	// expired. Non-retryable for the broadcast; the workflow then proves the transaction cannot land.
	ErrBlockhashExpired = "BlockhashExpired"
	// ErrValidatorNotHealthy: the vote account is not active for the service, unknown to or delinquent
	// on our own RPC, or charges more commission than the policy allows. Non-retryable.
	ErrValidatorNotHealthy = "ValidatorNotHealthy"
	// ErrStakeAccountState: the stake account does not exist, belongs to someone else, or is in a state
	// that does not allow the operation. Non-retryable.
	ErrStakeAccountState = "StakeAccountState"
	// ErrStaleTransaction: the transaction the service built is not new: its signature is already on
	// chain, or the stake account it would create already exists. Nothing may be sent. Non-retryable.
	ErrStaleTransaction = "StaleTransaction"
	// ErrChainUnavailable: the chain RPC failed or could not be reached. Retryable with backoff.
	ErrChainUnavailable = "ChainUnavailable"
	// ErrChainUnverified: the RPC of the network is not (or no longer) proven to serve it: its
	// genesis hash was not read yet, differs from the network's, or the RPC failed since it was
	// read. The message names the network, the expected and the served hash. Retryable: the worker
	// re-checks on its own, and /readyz names the reason meanwhile.
	ErrChainUnverified = "ChainUnverified"
	// ErrChainRejected: the chain RPC refused the request in a way that asking again will not
	// change (HTTP 401/403 from the RPC provider, JSON-RPC invalid params or method not found).
	// Non-retryable for the activity, which returns at once rather than burning its retries;
	// it is not a verdict on the operation: the workflow shows the step as stalled and runs the
	// step again on its own schedule, so an operator who fixes the endpoint's credentials or
	// configuration sees it resume.
	ErrChainRejected = "ChainRejected"
)

// NonRetryable lists the error types no retry policy should retry.
var NonRetryable = []string{
	ErrInvalidInput, ErrUnknownKey, ErrPolicy, ErrVerificationFailed, ErrServiceRejected,
	ErrTransactionRejected, ErrBroadcastUncertain, ErrBlockhashExpired, ErrValidatorNotHealthy,
	ErrStakeAccountState, ErrStaleTransaction, ErrChainRejected,
}

// SolanaNetworks are the Solana networks the staking service serves (defined once, in apiclient).
var SolanaNetworks = apiclient.SolanaNetworks

// Operation names a staking operation; defined once, in signer.
type Operation = signer.Operation

// The operations stakeflow runs.
const (
	OpStake    = signer.OpStake
	OpUnstake  = signer.OpUnstake
	OpWithdraw = signer.OpWithdraw
)

// Intent is what the operator asked for; defined once, in signer. It travels with every step so
// that each step can check its work against it.
type Intent = signer.Intent

// PolicyDecision is the worker's policy applied to an intent before anything is built.
type PolicyDecision struct {
	// ApprovalRequired is true when the amount needs at least one approval (ApprovalsRequired > 0).
	ApprovalRequired bool `json:"approvalRequired"`
	// ApprovalsRequired is how many distinct approvals the amount needs: 0, 1 at or above
	// ApprovalThreshold, 2 at or above DualApprovalThreshold.
	ApprovalsRequired int `json:"approvalsRequired"`
	// ApprovalThreshold is the threshold in force, in lamports (0: approvals are off).
	ApprovalThreshold uint64 `json:"approvalThreshold"`
	// DualApprovalThreshold is the two-approval threshold in force, in lamports (0: off).
	DualApprovalThreshold uint64 `json:"dualApprovalThreshold,omitempty"`
}

// ValidatorCheckInput names the vote account to check before staking to it.
type ValidatorCheckInput struct {
	Network     string `json:"network"`
	VoteAccount string `json:"voteAccount"`
}

// ValidatorCheckResult is a vote account the service reports as active and our own RPC finds
// current, with its commission within the policy.
type ValidatorCheckResult struct {
	VoteAccount string `json:"voteAccount"`
	// Status is the service's status of the vote account.
	Status string `json:"status"`
	// Commission is the validator's commission in percent, as our RPC reports it.
	Commission uint8 `json:"commission"`
	// ActivatedStake is the stake active on the vote account this epoch, in lamports.
	ActivatedStake uint64 `json:"activatedStake,omitempty"`
}

// FreshInput names a signed transaction to check for freshness before its first broadcast.
type FreshInput struct {
	Network string `json:"network"`
	// Signature is the transaction's signature.
	Signature string `json:"signature"`
	// NewStakeAccount is the stake account the transaction creates (stake only).
	NewStakeAccount string `json:"newStakeAccount,omitempty"`
}

// FreshResult is a transaction proven new: its signature unknown to the chain and, for a stake,
// its new stake account absent.
type FreshResult struct {
	Signature       string `json:"signature"`
	NewStakeAccount string `json:"newStakeAccount,omitempty"`
}

// BuildResult is an unsigned transaction from the staking service.
type BuildResult struct {
	// UnsignedTransaction is the serialized unsigned transaction, as the service returned it.
	UnsignedTransaction string `json:"unsignedTransaction"`
	// VoteAccount and StakeAccount are what the service says the transaction does (extraData).
	// They are claims: the signer checks the transaction itself.
	VoteAccount  string    `json:"voteAccount,omitempty"`
	StakeAccount string    `json:"stakeAccount,omitempty"`
	RequestID    string    `json:"requestId,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
}

// SignInput is an unsigned transaction and the intent it must match.
type SignInput struct {
	Intent              Intent `json:"intent"`
	UnsignedTransaction string `json:"unsignedTransaction"`
}

// SignResult is a verified, signed transaction.
type SignResult struct {
	Signature         string `json:"signature"`
	SignedTransaction string `json:"signedTransaction"`
	RecentBlockhash   string `json:"recentBlockhash"`
	StakeAccount      string `json:"stakeAccount,omitempty"`
	VoteAccount       string `json:"voteAccount,omitempty"`
	// FeeLamports is the most the transaction pays if it lands (base fee of its signatures plus
	// the priority fee of its compute budget), as the signer verified it under its fee cap.
	FeeLamports uint64 `json:"feeLamports,omitempty"`
}

// BroadcastInput is a signed transaction to send. Retries send these same bytes.
type BroadcastInput struct {
	Intent            Intent `json:"intent"`
	Signature         string `json:"signature"`
	SignedTransaction string `json:"signedTransaction"`
}

// BroadcastResult is the service's answer to a broadcast.
type BroadcastResult struct {
	Signature string `json:"signature"`
	// Slot is the slot the service reports (0 when the transaction was already processed).
	Slot uint64 `json:"slot"`
	// AlreadyProcessed is true when the chain had already seen these bytes: an earlier attempt landed.
	AlreadyProcessed bool   `json:"alreadyProcessed"`
	RequestID        string `json:"requestId,omitempty"`
}

// ConfirmInput names the transaction to follow until it is final or provably cannot land.
type ConfirmInput struct {
	Network string `json:"network"`
	// Operation labels the fee metric (empty: "unknown").
	Operation       Operation `json:"operation,omitempty"`
	Signature       string    `json:"signature"`
	RecentBlockhash string    `json:"recentBlockhash"`
	// PollInterval between status reads; default one second.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// ExpiryMarginBlocks overrides DefaultExpiryMarginBlocks.
	ExpiryMarginBlocks uint64 `json:"expiryMarginBlocks,omitempty"`
}

// Confirmation outcomes.
const (
	// OutcomeFinalized: the transaction is finalized without error.
	OutcomeFinalized = "finalized"
	// OutcomeFailed: the transaction landed with an error and is finalized so; its effects did
	// not happen, its fee was paid.
	OutcomeFailed = "failed"
	// OutcomeExpired: the blockhash expired and the signature never landed: the transaction can never land.
	OutcomeExpired = "expired"
)

// ConfirmResult is where a transaction ended.
type ConfirmResult struct {
	Outcome string `json:"outcome"`
	Slot    uint64 `json:"slot,omitempty"`
	// Error is the on-chain error of a failed transaction.
	Error string `json:"error,omitempty"`
	// Fee is the fee in lamports the transaction paid (finalized and failed outcomes), as the
	// finalized transaction's metadata records it; 0 when the RPC could not serve the transaction
	// (a Solana transaction never pays less than 5000 lamports, so 0 is never a real fee).
	Fee uint64 `json:"fee,omitempty"`
}

// StakeStateInput names a stake account to read.
type StakeStateInput struct {
	Network      string `json:"network"`
	StakeAccount string `json:"stakeAccount"`
}

// Stake account states, as StakeState.State reports them: the chain's activation states (defined
// once, in chain/solana), and initialized for an account never delegated.
const (
	StakeInactive     = solchain.ActivationInactive
	StakeActivating   = solchain.ActivationActivating
	StakeActive       = solchain.ActivationActive
	StakeDeactivating = solchain.ActivationDeactivating
	// StakeInitialized is an initialized, never delegated stake account.
	StakeInitialized = string(solchain.StateInitialized)
)

// StakeState is a stake account and the epoch clock, read together.
type StakeState struct {
	StakeAccount string `json:"stakeAccount"`
	Lamports     uint64 `json:"lamports"`
	Staker       string `json:"staker"`
	Withdrawer   string `json:"withdrawer"`
	Voter        string `json:"voter,omitempty"`
	// State is one of the Stake* activation states.
	State             string `json:"state"`
	ActivationEpoch   uint64 `json:"activationEpoch,omitempty"`
	DeactivationEpoch uint64 `json:"deactivationEpoch,omitempty"`
	// Deactivating is true once a deactivation was recorded (DeactivationEpoch is meaningful).
	Deactivating bool   `json:"deactivating"`
	Epoch        uint64 `json:"epoch"`
	SlotIndex    uint64 `json:"slotIndex"`
	SlotsInEpoch uint64 `json:"slotsInEpoch"`
	// SlotDuration is the network's slot time as the worker is configured with it; the workflow
	// sizes its wait for the epoch's end with it.
	SlotDuration time.Duration `json:"slotDuration,omitempty"`
	// RecheckAfter is the longest the worker wants a workflow to wait before reading the stake
	// account again (its --epoch-recheck); zero leaves the workflow's own cap.
	RecheckAfter time.Duration `json:"recheckAfter,omitempty"`
	// Lockup is the stake account's lockup, when it has one.
	Lockup *Lockup `json:"lockup,omitempty"`
}

// Lockup is a stake account's lockup: no withdrawal before a cluster time or epoch unless its
// custodian signs.
type Lockup struct {
	UnixTimestamp int64  `json:"unixTimestamp,omitempty"`
	Epoch         uint64 `json:"epoch,omitempty"`
	Custodian     string `json:"custodian,omitempty"`
	// InForce is true while the cluster's clock (ClusterTime) or epoch is before the lockup's.
	InForce     bool  `json:"inForce"`
	ClusterTime int64 `json:"clusterTime,omitempty"`
}

// String describes the lockup for an operator.
func (l Lockup) String() string {
	return fmt.Sprintf("locked up until unix time %d (%s) or epoch %d, custodian %s",
		l.UnixTimestamp, time.Unix(l.UnixTimestamp, 0).UTC().Format(time.RFC3339), l.Epoch, l.Custodian)
}
