package evm

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// Signer verifies Polygon staking transactions (EIP-1559, on the chain of its policy) and has a
// key backend (a Keyring, say) sign the signing hash of those that pass.
type Signer struct {
	backend keys.Backend // signs: the file keyring New was given, or another key backend
	policy  Policy
	shares  map[common.Address]uint64 // allow-listed ValidatorShare -> validator id
}

// New returns a Signer using keys and policy, with the policy's defaults applied. An incomplete
// or malformed policy is refused with an error wrapping ErrPolicy.
func New(kr *Keyring, policy Policy) (*Signer, error) { return NewBackend(kr, policy) }

// NewBackend is New over any key backend that signs keys.Secp256k1Recoverable.
func NewBackend(backend keys.Backend, policy Policy) (*Signer, error) {
	p, shares, err := policy.validate()
	if err != nil {
		return nil, err
	}
	return &Signer{backend: backend, policy: p, shares: shares}, nil
}

// Policy returns the effective policy, with defaults applied.
func (s *Signer) Policy() Policy {
	p := s.policy
	p.ValidatorShares = append([]ValidatorShare(nil), p.ValidatorShares...)
	p.MaxFeePerGas = new(big.Int).Set(p.MaxFeePerGas)
	p.MaxTotalFee = new(big.Int).Set(p.MaxTotalFee)
	return p
}

// Verified describes a transaction that matched its intent.
type Verified struct {
	// Operation is the verified operation.
	Operation Operation
	// Sender is the staker, who signs.
	Sender common.Address
	// To is the contract called: the POL token for approve, the validator share otherwise.
	To common.Address
	// ValidatorID is the validator of the validator share called (0 for approve).
	ValidatorID uint64
	// Nonce is the sender's nonce the transaction uses.
	Nonce uint64
	// GasLimit is the transaction's gas limit.
	GasLimit uint64
	// MaxFeePerGas is the transaction's maxFeePerGas, in wei.
	MaxFeePerGas *big.Int
	// MaxPriorityFeePerGas is the transaction's maxPriorityFeePerGas, in wei.
	MaxPriorityFeePerGas *big.Int
	// MaxFee is the most the transaction can pay, MaxFeePerGas × GasLimit, in wei.
	MaxFee *big.Int
	// SharesBound is a delegate's minSharesToMint or an unstake's maximumSharesToBurn; nil
	// otherwise.
	SharesBound *big.Int

	tx *types.Transaction
}

// Verify decodes unsigned and verifies it against intent and the policy without signing.
func (s *Signer) Verify(intent Intent, unsigned []byte) (*Verified, error) {
	if err := s.checkIntent(&intent); err != nil {
		return nil, err
	}
	d, err := decodeUnsigned(unsigned)
	if err != nil {
		return nil, err
	}
	return s.verify(&intent, d)
}

// Signed is a transaction that passed verification and carries the staker's signature.
type Signed struct {
	// Transaction is the signed transaction's binary encoding as 0x-prefixed hex, as
	// POST /api/v1/polygon/transaction/send takes it.
	Transaction string
	// Hash is the transaction hash.
	Hash common.Hash
	// Sender is the address that signed: the intent's staker.
	Sender common.Address
	// Nonce is the sender's nonce the transaction uses.
	Nonce uint64
	// MaxFee is the most the transaction can pay, maxFeePerGas × gas limit, in wei.
	MaxFee *big.Int
}

// Sign decodes unsigned (the binary encoding of an unsigned EIP-1559 transaction: the 9-field
// signing payload or the 12-field transaction with an empty signature), verifies it against
// intent and the policy, and only then signs it with the staker's key under the London signer of
// the policy's chain. Nothing is signed when any step fails. When ctx is cancelled before the
// signature is made, Sign returns ctx.Err(), whatever the verification found.
func (s *Signer) Sign(ctx context.Context, intent Intent, unsigned []byte) (*Signed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	acct, err := account(s.backend, intent.Staker)
	if err != nil {
		return nil, err
	}
	v, err := s.Verify(intent, unsigned)
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	return signTx(ctx, s.backend, acct, v.Sender, v.tx)
}

// String describes the signer without key material.
func (s Signer) String() string {
	return fmt.Sprintf("evm.Signer{keys: %v, chainId: %d, polToken: %s, stakeManager: %s, validatorShares: %s, maxGasLimit: %d, maxFeePerGas: %s, maxTotalFee: %s, slippageBps: %d}",
		s.backend, s.policy.ChainID, s.policy.POLToken.Hex(), s.policy.StakeManager.Hex(), (&s).allowList(),
		s.policy.MaxGasLimit, s.policy.MaxFeePerGas, s.policy.MaxTotalFee, s.policy.SlippageBps)
}

// GoString is String, so that %#v reveals nothing either.
func (s Signer) GoString() string { return s.String() }

// Format prints String under every verb.
func (s Signer) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// MarshalJSON encodes the policy and key addresses only.
func (s Signer) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Keys   keys.Backend `json:"keys"`
		Policy Policy       `json:"policy"`
	}{s.backend, s.policy})
}
