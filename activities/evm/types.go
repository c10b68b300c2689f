package evm

import (
	"time"

	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// Intent is what an EVM step must do, as the signer verifies it (one definition: signer/evm's).
type Intent = signerevm.Intent

// Operation is an EVM step's call (approve, delegate, unstake, claim, withdraw-rewards, restake).
type Operation = signerevm.Operation

// Units and chain names of the operations these activities serve.
const (
	// ChainPolygon is the StakeflowChain of Polygon staking operations (on Ethereum L1).
	ChainPolygon = "polygon"
	// Unit is the base unit of POL amounts and of fees: wei (1 POL = 10^18 wei).
	Unit = "wei"
)

// PolicyInput is an operation as the worker's policy sees it.
type PolicyInput struct {
	Network   string `json:"network"`
	Operation string `json:"operation"`
	Staker    string `json:"staker"`
	// Amount in wei, decimal; empty when the operation moves no amount the operator names
	// (withdraw rewards, restake, claim).
	Amount string `json:"amount,omitempty"`
	// ValidatorShare is the validator's ValidatorShare contract.
	ValidatorShare string `json:"validatorShare"`
}

// DelegationInput names a staker's delegation to one validator.
type DelegationInput struct {
	Network        string `json:"network"`
	Staker         string `json:"staker"`
	ValidatorShare string `json:"validatorShare"`
	// Amount, in wei, is the POL the caller means to delegate or unstake: ExpectedShares is
	// its worth in shares at the current exchange rate.
	Amount string `json:"amount,omitempty"`
}

// Delegation is a staker's position with one validator and what the chain says around it, read at
// one block.
type Delegation struct {
	// Block is the block the reads were made at.
	Block uint64 `json:"block"`
	// Balance is the staker's POL balance, in wei.
	Balance string `json:"balance"`
	// Allowance is what the StakeManager may pull from the staker, in wei.
	Allowance string `json:"allowance"`
	// Shares is the staker's validator shares; Staked their worth in wei.
	Shares string `json:"shares"`
	Staked string `json:"staked"`
	// ExpectedShares is DelegationInput.Amount's worth in shares (empty without an amount).
	ExpectedShares string `json:"expectedShares,omitempty"`
	// LiquidRewards is the staker's rewards not yet withdrawn, in wei.
	LiquidRewards string `json:"liquidRewards"`
	// Epoch and WithdrawalDelay are the StakeManager's.
	Epoch           uint64 `json:"epoch"`
	WithdrawalDelay uint64 `json:"withdrawalDelay"`
	// EpochDuration is the observed time between checkpoints (0 when not observed yet).
	EpochDuration time.Duration `json:"epochDuration,omitempty"`
}

// UnbondInput names an unbond: by the unstake transaction that made it (TxID) or by its nonce.
type UnbondInput struct {
	Network        string `json:"network"`
	Staker         string `json:"staker"`
	ValidatorShare string `json:"validatorShare"`
	// TxID is the finalized unstake (sellVoucher_newPOL) whose receipt names the unbond.
	TxID string `json:"txId,omitempty"`
	// Nonce is the unbond nonce, when known.
	Nonce uint64 `json:"nonce,omitempty"`
}

// Unbond is one of a staker's unbonds and the StakeManager's clock.
type Unbond struct {
	Nonce uint64 `json:"nonce"`
	// Shares still unbonding (0 once claimed).
	Shares string `json:"shares"`
	// Amount is the POL the unbond pays when claimed, in wei.
	Amount string `json:"amount"`
	// WithdrawEpoch is the epoch the unbond started; it can be claimed once
	// Epoch >= WithdrawEpoch + WithdrawalDelay.
	WithdrawEpoch   uint64 `json:"withdrawEpoch"`
	Epoch           uint64 `json:"epoch"`
	WithdrawalDelay uint64 `json:"withdrawalDelay"`
	// EpochDuration is the observed time between checkpoints (0 when not observed yet).
	EpochDuration time.Duration `json:"epochDuration,omitempty"`
	// RecheckAfter, when set, caps each wait before the unbond is read again (the worker's
	// --epoch-recheck).
	RecheckAfter time.Duration `json:"recheckAfter,omitempty"`
}

// Claimable reports whether the unbond can be claimed now.
func (u Unbond) Claimable() bool { return u.Epoch >= u.WithdrawEpoch+u.WithdrawalDelay }

// BuildInput asks for an unsigned transaction for one step.
type BuildInput struct {
	Network string `json:"network"`
	Intent  Intent `json:"intent"`
	// Build counts from 1; a build after the first replaces the previous transaction under the
	// same nonce, with both fee caps raised by at least the pool's replacement bump over Prev.
	Build int `json:"build"`
	// PrevMaxFeePerGas and PrevMaxPriorityFeePerGas are the fees of the transaction replaced, in
	// wei (empty on the first build).
	PrevMaxFeePerGas         string `json:"prevMaxFeePerGas,omitempty"`
	PrevMaxPriorityFeePerGas string `json:"prevMaxPriorityFeePerGas,omitempty"`
}

// BuildResult is an unsigned transaction and the values its builder chose.
type BuildResult struct {
	// UnsignedTransaction is the type-2 transaction's unsigned encoding, 0x hex.
	UnsignedTransaction string `json:"unsignedTransaction"`
	// Intent is the step's intent with the chosen values set (gas, fees, share bounds): what the
	// signer holds the transaction to.
	Intent Intent `json:"intent"`
}

// SignInput is an unsigned transaction and the intent it must match exactly.
type SignInput struct {
	Network             string `json:"network"`
	Intent              Intent `json:"intent"`
	UnsignedTransaction string `json:"unsignedTransaction"`
}

// SignResult is a verified, signed transaction.
type SignResult struct {
	// Hash is the signed transaction's hash, 0x hex.
	Hash string `json:"hash"`
	// SignedTransaction is its signed encoding, 0x hex (endpoint 4's form); empty when the
	// signer kept the bytes in the worker's RawCache and the step names them by Hash only.
	SignedTransaction string `json:"signedTransaction,omitempty"`
	Nonce             uint64 `json:"nonce"`
	// MaxFee is the most it pays if it lands (maxFeePerGas x gas), in wei; MaxFeePerGas and
	// MaxPriorityFeePerGas its fee caps.
	MaxFee               string `json:"maxFee"`
	MaxFeePerGas         string `json:"maxFeePerGas"`
	MaxPriorityFeePerGas string `json:"maxPriorityFeePerGas"`
}

// FreshInput names a signed transaction to check before its first send: its nonce must be the
// address's next (no gap), not consumed by a transaction other than the step's own builds.
type FreshInput struct {
	Network string `json:"network"`
	Staker  string `json:"staker"`
	Nonce   uint64 `json:"nonce"`
	// Hashes are every build of the step under this nonce, the newest last.
	Hashes []string `json:"hashes"`
}

// FreshResult says whether an earlier build under the nonce already landed.
type FreshResult struct {
	// LandedEarlier names the earlier build the chain holds under the nonce, if one did.
	LandedEarlier string `json:"landedEarlier,omitempty"`
}

// BroadcastInput is a signed transaction to send; retries send these same bytes.
type BroadcastInput struct {
	Network string `json:"network"`
	Staker  string `json:"staker"`
	Hash    string `json:"hash"`
	// SignedTransaction is the bytes, 0x hex; empty for EVMSendRPC: Hash's bytes from the
	// worker's RawCache or the node.
	SignedTransaction string `json:"signedTransaction,omitempty"`
	// Chain is the StakeflowChain the broadcast metric counts an EVMSendRPC send under (empty:
	// polygon); EVMBroadcast's are always polygon's.
	Chain string `json:"chain,omitempty"`
}

// BroadcastResult is the hash of the bytes sent, once the service (EVMBroadcast) or the node
// (EVMSendRPC) accepted them.
type BroadcastResult struct {
	Hash string `json:"hash"`
}

// ConfirmInput names a step's transactions under one nonce, to follow until one is final or the
// newest is to be replaced.
type ConfirmInput struct {
	Network string `json:"network"`
	Staker  string `json:"staker"`
	Nonce   uint64 `json:"nonce"`
	// Hashes are every build of the step under Nonce, the newest last; any of them may land.
	Hashes []string `json:"hashes"`
	// SignedTransaction is the newest build's signed bytes, re-sent while it is not mined.
	SignedTransaction string `json:"signedTransaction,omitempty"`
	// ResendRPC re-sends them through the worker's RPC (as EVMSendRPC sent them) instead of
	// the service's endpoint 4; without SignedTransaction, the newest hash's bytes from the
	// worker's RawCache (no re-send when they are not there).
	ResendRPC bool `json:"resendRpc,omitempty"`
	// PollInterval between reads; default one second.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// ReplaceAfter is how long the newest build may stay unmined before Confirm answers
	// "replace" (replace it under the same nonce with higher fees). Default 3 minutes.
	ReplaceAfter time.Duration `json:"replaceAfter,omitempty"`
}

// ConfirmResult is where the step's transaction ended. Outcome is one of activities'
// OutcomeFinalized, OutcomeFailed, OutcomeCannotLand (the nonce was used at finalized depth by a
// transaction none of the step's builds: Other, Error the proof) and OutcomeReplace (the newest
// build was not mined within ReplaceAfter and no build holds the nonce: replace it).
type ConfirmResult struct {
	Outcome string `json:"outcome"`
	// Hash is the build that landed (finalized or failed).
	Hash  string `json:"hash,omitempty"`
	Block uint64 `json:"block,omitempty"`
	// Fee is what it paid (gas used x effective gas price), in wei.
	Fee string `json:"fee,omitempty"`
	// Error is a failed transaction's revert reason, or the proof of a cannot-land outcome.
	Error string `json:"error,omitempty"`
	// Other is the transaction that used the nonce at finalized depth (OutcomeCannotLand), when
	// the node could find it.
	Other string `json:"other,omitempty"`
}
