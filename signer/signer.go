package signer

import (
	"context"
	"errors"
	"fmt"
)

// Signer verifies an unsigned transaction against what the caller intended and signs it.
// Implementations exist per chain; they share the Intent and Signed shapes.
type Signer interface {
	// Sign decodes unsigned, verifies it against intent and policy, and only then adds the key's signature.
	Sign(ctx context.Context, unsigned string, intent Intent) (*Signed, error)
}

// Operation names a staking operation.
type Operation string

// Staking operations a Signer can verify.
const (
	// OpStake creates and delegates a new stake account.
	OpStake Operation = "stake"
	// OpUnstake deactivates an existing stake account.
	OpUnstake Operation = "unstake"
	// OpWithdraw withdraws lamports from a deactivated stake account to the staker.
	OpWithdraw Operation = "withdraw"
)

// Intent is what the caller asked for. The transaction must do exactly this, nothing more. It is
// the one definition of an operation's intent: workflows carry it (as JSON) from step to step.
type Intent struct {
	// Operation is the staking operation asked for.
	Operation Operation `json:"operation"`
	// Chain is the chain name, "solana" for the Solana signer.
	Chain string `json:"chain"`
	// Network is the network name (for example "mainnet-beta" or "testnet"). It is carried for
	// the record; a Solana transaction does not name its network, so it is not checked against it.
	Network string `json:"network"`
	// Staker is the base58 address of the staker: the fee payer and the only signer added.
	Staker string `json:"staker"`
	// Lamports is, for stake, the exact lamports funding the new stake account and, for withdraw,
	// the exact lamports withdrawn. For unstake a workflow carries the stake account's balance,
	// but the signer takes 0: Deactivate always covers the whole stake account, so a partial
	// amount could not be verified (the activities zero it before signing).
	Lamports uint64 `json:"lamports"`
	// VoteAccount is, for stake, the vote account asked for; empty means any vote account on the
	// policy allow-list (and is refused when no allow-list is configured).
	VoteAccount string `json:"voteAccount,omitempty"`
	// StakeAccount is, for unstake and withdraw, the stake account named.
	StakeAccount string `json:"stakeAccount,omitempty"`
}

// Signed is a transaction that passed verification and carries the staker's signature.
type Signed struct {
	// Signature is the base58 staker signature, which is also the transaction id.
	Signature string
	// SignedTransaction is the base64 wire transaction with the staker's signature in place.
	SignedTransaction string
	// RecentBlockhash is the base58 blockhash the transaction was built on.
	RecentBlockhash string
	// StakeAccount is, for stake, the new stake account found in the transaction and, for
	// unstake and withdraw, the stake account named.
	StakeAccount string
	// VoteAccount is, for stake, the delegation target found in the transaction.
	VoteAccount string
	// FeeLamports is the most the transaction pays if it lands: the base fee of its signatures
	// plus the priority fee of its compute budget (see Verified.FeeLamports).
	FeeLamports uint64
}

// Sentinel errors. Every error returned by this package wraps exactly one of them, except the
// context's own error when Sign is cancelled and a *keys.SignError (wrapping keys.ErrSign and
// naming the account) when the key backend does not sign.
var (
	// ErrVerification means the transaction does not match the intent or the policy.
	ErrVerification = errors.New("transaction verification failed")
	// ErrUnknownKey means no key is loaded for the staker.
	ErrUnknownKey = errors.New("no key for address")
	// ErrDecode means the unsigned transaction could not be decoded.
	ErrDecode = errors.New("cannot decode transaction")
	// ErrIntent means the intent itself is incomplete or malformed.
	ErrIntent = errors.New("invalid intent")
	// ErrKeyLoad means a key file could not be loaded.
	ErrKeyLoad = errors.New("cannot load key")
)

// VerificationError reports one check that the transaction failed.
type VerificationError struct {
	// Check names what was compared, for example "fee payer" or "vote account".
	Check string
	// Want is what the intent or policy requires.
	Want string
	// Got is what the transaction contains.
	Got string
}

// Error implements error.
func (e *VerificationError) Error() string {
	return fmt.Sprintf("%s: %s: want %s, got %s", ErrVerification.Error(), e.Check, e.Want, e.Got)
}

// Is reports whether target is ErrVerification.
func (e *VerificationError) Is(target error) bool { return target == ErrVerification }

func mismatch(check, want, got string) error {
	return &VerificationError{Check: check, Want: want, Got: got}
}

// UnknownKeyError names an address for which no key is loaded.
type UnknownKeyError struct {
	// Address is the base58 address asked for.
	Address string
}

// Error implements error.
func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("%s %s", ErrUnknownKey.Error(), e.Address)
}

// Is reports whether target is ErrUnknownKey.
func (e *UnknownKeyError) Is(target error) bool { return target == ErrUnknownKey }
