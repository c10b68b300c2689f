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
// rebuild reuses it, so that only one build can land).
type BuildInput struct {
	Intent   Intent  `json:"intent"`
	Sequence *uint64 `json:"sequence,omitempty"`
	Build    int     `json:"build"`
}

// BuildResult is a built, not yet signed, transaction.
type BuildResult struct {
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
	// PollInterval is the time between reads (default 2s).
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// ReplaceAfter is how long a transaction may stay unseen, its sequence unused, before the step
	// builds again under the same sequence (default 1m).
	ReplaceAfter time.Duration `json:"replaceAfter,omitempty"`
}

// ConfirmResult is where the step's transaction ended.
type ConfirmResult struct {
	// Outcome is activities.OutcomeFinalized, OutcomeFailed or OutcomeReplace (unseen, its
	// sequence unused: build again under the same sequence).
	Outcome string `json:"outcome"`
	Hash    string `json:"hash,omitempty"`
	Height  uint64 `json:"height,omitempty"`
	Fee     string `json:"fee,omitempty"`
	Error   string `json:"error,omitempty"`
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
