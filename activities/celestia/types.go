package celestia

import (
	"time"

	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
)

// ChainName is the chain name of Celestia operations; Unit the unit of their amounts.
const (
	ChainName = "celestia"
	Unit      = signercosmos.Denom
)

// Error types of the Celestia activities (non-retryable unless said).
const (
	// ErrSequenceConflict: the step's account sequence was consumed by a transaction stakeflow did
	// not send.
	ErrSequenceConflict = "SequenceConflict"
	// ErrWrongHash: the service answered another hash than the signed bytes'; the chain decides.
	ErrWrongHash = "ServiceWrongHash"
)

// DefaultTimeoutBlocks is how many blocks ahead of the chain's height a transaction's timeout
// height is set when the worker names none: about five minutes of Celestia's six-second blocks.
const DefaultTimeoutBlocks = 50

// Intent is what a step must do (signer/cosmos's Intent).
type Intent = signercosmos.Intent

// PolicyInput is what the policy is applied to.
type PolicyInput struct {
	Intent Intent `json:"intent"`
}

// PositionInput names a delegation to read.
type PositionInput struct {
	Network   string `json:"network"`
	Delegator string `json:"delegator"`
	Validator string `json:"validator"`
}

// Position is the delegator's balance, delegation and rewards with a validator, in utia.
type Position struct {
	Balance   string `json:"balance"`
	Delegated string `json:"delegated"`
	Rewards   string `json:"rewards"`
}

// BuildInput asks for a transaction. Sequence, when set, pins the step's account sequence (a
// rebuild reuses it, so that only one build can land). TimeoutHeight, when set, pins the timeout
// height (a replacement of a build whose timeout height has not passed: the same bytes); 0 makes
// the build choose one from the chain's height.
type BuildInput struct {
	Intent        Intent  `json:"intent"`
	Sequence      *uint64 `json:"sequence,omitempty"`
	Build         int     `json:"build"`
	TimeoutHeight uint64  `json:"timeoutHeight,omitempty"`
}

// BuildResult is a built, not yet signed, transaction. Intent.TimeoutHeight is the timeout height
// it carries (the signer signs exactly that one); Height is the chain's height the build read:
// the transaction can be in no block up to it.
type BuildResult struct {
	Height   uint64                 `json:"height,omitempty"`
	Intent   Intent                 `json:"intent"`
	Unsigned signercosmos.Unsigned  `json:"unsigned"`
	Account  signercosmos.Account   `json:"account"`
	Fee      signercosmos.FeeParams `json:"fee"`
}

// SignInput is a built transaction to verify and sign.
type SignInput struct {
	Intent   Intent                `json:"intent"`
	Unsigned signercosmos.Unsigned `json:"unsigned"`
	Account  signercosmos.Account  `json:"account"`
}

// SignResult is a signed transaction.
type SignResult struct {
	TxBase64 string `json:"txBase64"`
	Hash     string `json:"hash"`
	Sequence uint64 `json:"sequence"`
	// MaxFee is the fee in utia.
	MaxFee string `json:"maxFee"`
}

// BroadcastInput is a signed transaction to send through endpoint 3.
type BroadcastInput struct {
	Network  string `json:"network"`
	TxBase64 string `json:"txBase64"`
	Hash     string `json:"hash"`
}

// BroadcastResult is what the service answered.
type BroadcastResult struct {
	Hash    string `json:"hash"`
	BlockID int64  `json:"blockId"`
}

// ConfirmInput follows every build signed under a step's sequence.
type ConfirmInput struct {
	Network   string   `json:"network"`
	Delegator string   `json:"delegator"`
	Sequence  uint64   `json:"sequence"`
	Hashes    []string `json:"hashes"`
	// TimeoutHeights are the builds' timeout heights, in the order of Hashes (0: none, a build
	// signed before timeout heights were set: it can land at any time).
	TimeoutHeights []uint64 `json:"timeoutHeights,omitempty"`
	// FromHeight is the lowest height a build can be in: one past the chain's height at the first
	// build (0: unknown; the blocks are then not read).
	FromHeight uint64 `json:"fromHeight,omitempty"`
	// PollInterval is the time between reads (default 2s).
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// ReplaceAfter is how long a transaction may stay unseen, its sequence unused, before the step
	// builds again under the same sequence (default 1m).
	ReplaceAfter time.Duration `json:"replaceAfter,omitempty"`
}

// ConfirmResult is where the step's transaction ended.
type ConfirmResult struct {
	// Outcome is activities.OutcomeFinalized or OutcomeFailed (Hash, one of the step's builds, is
	// in block Height), OutcomeCannotLand (no build can land anymore: Error says the proof) or
	// OutcomeReplace (unseen, its sequence unused, its timeout height not passed: send it again
	// under the same sequence).
	Outcome string `json:"outcome"`
	Hash    string `json:"hash,omitempty"`
	Height  uint64 `json:"height,omitempty"`
	Fee     string `json:"fee,omitempty"`
	Error   string `json:"error,omitempty"`
	// Holder is, for OutcomeCannotLand, the transaction proven (read in a block, its signer and
	// sequence decoded) to have used the step's sequence, which stakeflow did not send; empty
	// when the proof is the timeout height.
	Holder string `json:"holder,omitempty"`
}

// UnbondingInput names the unbonding entry an undelegation created.
type UnbondingInput struct {
	Network   string `json:"network"`
	Delegator string `json:"delegator"`
	Validator string `json:"validator"`
	// Height is the undelegation's block (the entry's creation height).
	Height uint64 `json:"height"`
}

// Unbonding is the state of that entry.
type Unbonding struct {
	// Pending is true while the entry is in the queue.
	Pending bool `json:"pending"`
	// CompletionTime is when it matures (zero once matured).
	CompletionTime time.Time `json:"completionTime"`
	// ChainTime is the latest block's time.
	ChainTime time.Time `json:"chainTime"`
	// UnbondingTime is the staking params' unbonding period.
	UnbondingTime time.Duration `json:"unbondingTime"`
	// Balance is the delegator's balance in utia.
	Balance string `json:"balance"`
}
