package signer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// Caps applied when the policy leaves them at zero.
const (
	// DefaultMaxComputeUnitPrice is the unit-price cap, in micro-lamports per compute unit, used
	// when SolanaPolicy.MaxComputeUnitPrice is 0: 1 lamport per unit.
	DefaultMaxComputeUnitPrice uint64 = 1_000_000
	// DefaultMaxComputeUnitLimit is the unit-limit cap used when SolanaPolicy.MaxComputeUnitLimit
	// is 0. A stake (CreateAccountWithSeed, Initialize, DelegateStake), a Deactivate or a Withdraw
	// consumes a few thousand units; 200,000 is what the runtime grants one instruction when no
	// limit is set, so it leaves a wide margin without letting a service buy a
	// 1,400,000-unit limit (the most a transaction may request) at our expense.
	DefaultMaxComputeUnitLimit uint32 = 200_000
	// DefaultMaxFeeLamports is the total-fee cap, in lamports, used when
	// SolanaPolicy.MaxFeeLamports is 0: 100,000 lamports (0.0001 SOL), twenty times the
	// 5,000-lamport base fee of a one-signature transaction. The 95,000 lamports left for priority
	// buy 475,000 micro-lamports per unit at a 200,000-unit limit, or the whole default unit-price
	// cap at a 95,000-unit limit: generous for landing a staking transaction in congestion. Without
	// it, the unit-price cap alone would let a service make one signed transaction pay about
	// 1,400,000 lamports (1 lamport per unit at the largest limit the runtime grants).
	DefaultMaxFeeLamports uint64 = 100_000
)

// SolanaPolicy is what the operator allows beyond any single intent.
type SolanaPolicy struct {
	// AllowedVoteAccounts lists the base58 vote accounts a stake may be delegated to. When set,
	// every delegation must target one of them (also when the intent names a vote account).
	// When empty, the intent must name the vote account.
	AllowedVoteAccounts []string
	// MaxComputeUnitPrice caps SetComputeUnitPrice, in micro-lamports per compute unit.
	// 0 means no cap was configured and DefaultMaxComputeUnitPrice applies.
	MaxComputeUnitPrice uint64
	// MaxComputeUnitLimit caps SetComputeUnitLimit. 0 means DefaultMaxComputeUnitLimit applies.
	MaxComputeUnitLimit uint32
	// MaxFeeLamports caps the most a transaction pays if it lands: 5,000 lamports per signature
	// plus the priority fee, unit price × unit limit (rounded up to whole lamports). Without a
	// SetComputeUnitLimit the runtime's default limit counts: 200,000 units per instruction other
	// than compute budget, at most 1,400,000. 0 means DefaultMaxFeeLamports applies.
	MaxFeeLamports uint64
}

// Solana verifies Solana staking transactions and has a key backend (a SolanaKeyring, say) sign
// the message of those that pass.
type Solana struct {
	keys    keys.Backend
	policy  SolanaPolicy
	allowed map[solana.PublicKey]bool
	badVote []string // allow-list entries that are not addresses; every stake is refused
}

var _ Signer = (*Solana)(nil)

// NewSolana returns a Solana signer using keys and policy. A malformed allow-list entry is not
// dropped: it makes every stake verification fail, naming the entry.
func NewSolana(kr *SolanaKeyring, policy SolanaPolicy) *Solana {
	return NewSolanaBackend(kr, policy)
}

// NewSolanaBackend is NewSolana over any key backend that signs keys.Ed25519.
func NewSolanaBackend(backend keys.Backend, policy SolanaPolicy) *Solana {
	s := &Solana{keys: backend, policy: policy, allowed: make(map[solana.PublicKey]bool)}
	for _, a := range policy.AllowedVoteAccounts {
		pk, err := solana.PublicKeyFromBase58(a)
		if err != nil {
			s.badVote = append(s.badVote, a)
			continue
		}
		s.allowed[pk] = true
	}
	if s.policy.MaxComputeUnitPrice == 0 {
		s.policy.MaxComputeUnitPrice = DefaultMaxComputeUnitPrice
	}
	if s.policy.MaxComputeUnitLimit == 0 {
		s.policy.MaxComputeUnitLimit = DefaultMaxComputeUnitLimit
	}
	if s.policy.MaxFeeLamports == 0 {
		s.policy.MaxFeeLamports = DefaultMaxFeeLamports
	}
	return s
}

// AllowedVoteAccounts returns the allow-list of vote accounts a stake may be delegated to (empty:
// every stake must name its own).
func (s *Solana) AllowedVoteAccounts() []string {
	return append([]string(nil), s.policy.AllowedVoteAccounts...)
}

// Policy returns the effective policy, with defaults applied.
func (s *Solana) Policy() SolanaPolicy { return s.policy }

// Verified describes a Solana transaction that matched its intent.
type Verified struct {
	// Operation is the verified operation.
	Operation Operation
	// Staker is the fee payer and only signer.
	Staker string
	// StakeAccount is the new (stake) or named (unstake, withdraw) stake account.
	StakeAccount string
	// VoteAccount is the delegation target (stake only).
	VoteAccount string
	// Seed is the seed the new stake account is derived from (stake only).
	Seed string
	// Lamports is the amount funded (stake) or withdrawn (withdraw); 0 for unstake.
	Lamports uint64
	// RecentBlockhash is the base58 blockhash the transaction was built on.
	RecentBlockhash string
	// ComputeUnitPrice is the requested unit price in micro-lamports, 0 if not set.
	ComputeUnitPrice uint64
	// ComputeUnitLimit is the requested unit limit, 0 if not set.
	ComputeUnitLimit uint32
	// FeeLamports is the most the transaction pays if it lands, whether it succeeds or fails:
	// 5,000 lamports per signature plus ComputeUnitPrice × the unit limit in force (the requested
	// one, or the runtime's default when none is requested), rounded up to whole lamports. It is
	// at most the policy's MaxFeeLamports.
	FeeLamports uint64
	// Encoding is the encoding the unsigned string was read as ("base64", "base58", "hex", ...).
	Encoding string

	tx *wireTx
}

// Verify decodes unsigned and verifies it against intent and the policy without signing.
func (s *Solana) Verify(unsigned string, intent Intent) (*Verified, error) {
	pi, err := parseIntent(intent)
	if err != nil {
		return nil, err
	}
	return s.decodeVerify(unsigned, &pi)
}

func (s *Solana) decodeVerify(unsigned string, pi *parsedIntent) (*Verified, error) {
	tx, enc, err := decodeSolanaTx(unsigned)
	if err != nil {
		return nil, err
	}
	v, err := s.verify(tx, pi)
	if err != nil {
		return nil, err
	}
	v.Encoding = enc
	return v, nil
}

// Sign decodes unsigned, verifies it against intent and the policy, and only then writes the
// staker's signature into the staker's slot. Nothing is signed when any step fails. When ctx is
// cancelled before the signature is made, Sign returns ctx.Err(), whatever the verification found.
func (s *Solana) Sign(ctx context.Context, unsigned string, intent Intent) (*Signed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The staker is decoded once, for both the key lookup and the intent.
	staker, err := solana.PublicKeyFromBase58(intent.Staker)
	if err != nil {
		return nil, &UnknownKeyError{Address: intent.Staker}
	}
	acct, ok := keys.Find(s.keys, staker.String())
	if !ok {
		return nil, &UnknownKeyError{Address: intent.Staker}
	}
	pi, err := parseIntentFor(intent, staker)
	if err != nil {
		return nil, err
	}
	v, err := s.decodeVerify(unsigned, &pi)
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	t := v.tx
	out := make([]byte, len(t.raw))
	copy(out, t.raw)
	sig, err := keys.Sign(ctx, s.keys, acct, keys.Ed25519, t.message())
	if err != nil {
		return nil, err
	}
	copy(out[t.sigOffset:t.sigOffset+solana.SignatureLength], sig)
	return &Signed{
		Signature:         base58.Encode(sig),
		SignedTransaction: base64.StdEncoding.EncodeToString(out),
		RecentBlockhash:   v.RecentBlockhash,
		StakeAccount:      v.StakeAccount,
		VoteAccount:       v.VoteAccount,
		FeeLamports:       v.FeeLamports,
	}, nil
}

// String describes the signer without key material.
func (s Solana) String() string {
	return fmt.Sprintf("signer.Solana{keys: %v, allowedVoteAccounts: %v, maxComputeUnitPrice: %d, maxComputeUnitLimit: %d, maxFeeLamports: %d}",
		s.keys, s.policy.AllowedVoteAccounts, s.policy.MaxComputeUnitPrice, s.policy.MaxComputeUnitLimit, s.policy.MaxFeeLamports)
}

// GoString is String, so that %#v reveals nothing either.
func (s Solana) GoString() string { return s.String() }

// Format prints String under every verb.
func (s Solana) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// MarshalJSON encodes the policy and key addresses only.
func (s Solana) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Keys   keys.Backend `json:"keys"`
		Policy SolanaPolicy `json:"policy"`
	}{s.keys, s.policy})
}
