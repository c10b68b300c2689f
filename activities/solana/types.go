package solana

import (
	"fmt"
	"time"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/signer"
)

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
