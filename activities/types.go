package activities

import "github.com/stakeflow/stakeflow/approval"

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
	// ErrInsufficientFunds: the pre-flight read of the staker's balance, from the worker's own
	// RPC, found less than the operation needs (amount, fees, rent). Nothing was signed.
	// Non-retryable.
	ErrInsufficientFunds = "InsufficientFunds"
)

// NonRetryable lists the error types no retry policy should retry.
var NonRetryable = []string{
	ErrInvalidInput, ErrUnknownKey, ErrPolicy, ErrVerificationFailed, ErrServiceRejected,
	ErrTransactionRejected, ErrBroadcastUncertain, ErrBlockhashExpired, ErrValidatorNotHealthy,
	ErrStakeAccountState, ErrStaleTransaction, ErrChainRejected, ErrInsufficientFunds,
}

// PolicyDecision is the worker's policy applied to an intent before anything is built.
type PolicyDecision struct {
	// ApprovalRequired is true when the amount needs at least one approval (ApprovalsRequired > 0).
	ApprovalRequired bool `json:"approvalRequired"`
	// ApprovalsRequired is how many distinct approvals the amount needs: 0, 1 at or above
	// ApprovalThreshold, 2 at or above DualApprovalThreshold.
	ApprovalsRequired int `json:"approvalsRequired"`
	// ApprovalThreshold is the threshold in force, in the chain's base unit (0: approvals are off).
	ApprovalThreshold uint64 `json:"approvalThreshold"`
	// DualApprovalThreshold is the two-approval threshold in force, in the chain's base unit (0: off).
	DualApprovalThreshold uint64 `json:"dualApprovalThreshold,omitempty"`
	// Approvers are the worker's configured approvers (--approvers): with any, every decision
	// must be a statement signed by one of their keys; with none, decisions name their approver
	// in free text. Carried in history so that the update validator verifies deterministically.
	Approvers []approval.Approver `json:"approvers,omitempty"`
}

// Confirmation outcomes.
const (
	// OutcomeFinalized: the transaction is finalized without error.
	OutcomeFinalized = "finalized"
	// OutcomeFailed: the transaction landed with an error and is finalized so; its effects did
	// not happen, its fee was paid.
	OutcomeFailed = "failed"
	// OutcomeCannotLand: the chain has proven that nothing the step signed can land anymore
	// (Solana: the blockhash expired and the signature is absent on an RPC proven to be the right
	// cluster; EVM: the nonce consumed at final depth by another transaction, identified by hash;
	// Cosmos: the timeout height passed with the sequence unconsumed; Hyperliquid: the nonce left
	// the exchange's window without the action in the account's history). A new build is safe,
	// and so is ending the step.
	OutcomeCannotLand = "cannot-land"
	// OutcomeReplace: on a chain with nonces, the newest build was not mined in time and no build
	// holds the nonce: a replacement under the same nonce is safe (at most one build can land),
	// but every build sent may still land. It is never a reason to end the step.
	OutcomeReplace = "replace"
)
