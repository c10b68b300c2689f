package hyperliquid

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/chain/networks"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/signer/keys"
)

// DefaultSignatureChainID is the signatureChainId the official SDK signs with (Arbitrum Sepolia's
// id, 421614): the only one accepted unless the policy lists others.
const DefaultSignatureChainID = "0x66eee"

// Policy bounds what the signer signs. Zero values take the defaults.
type Policy struct {
	// SignatureChainIDs lists the accepted signatureChainId values (hex); default
	// [DefaultSignatureChainID].
	SignatureChainIDs []string
	// MaxNonceAge is how old a nonce may be (default 24h); MaxNonceAhead how far ahead of the
	// signer's clock (default 1m).
	MaxNonceAge, MaxNonceAhead time.Duration
}

func (p Policy) chainIDs() []string {
	if len(p.SignatureChainIDs) == 0 {
		return []string{DefaultSignatureChainID}
	}
	return p.SignatureChainIDs
}

func (p Policy) maxAge() time.Duration {
	if p.MaxNonceAge > 0 {
		return p.MaxNonceAge
	}
	return 24 * time.Hour
}

func (p Policy) maxAhead() time.Duration {
	if p.MaxNonceAhead > 0 {
		return p.MaxNonceAhead
	}
	return time.Minute
}

// Intent is what the operation asked: Amount HYPE (a decimal number's text, as sent to the
// service) from Delegator's staking balance to its spot balance on Network.
type Intent struct {
	Network   string
	Delegator common.Address
	Amount    string
	// EchoedAmount is the amount endpoint 6's answer named beside its request (HYPE, decimal
	// text); empty when the answer named none. An answer whose amount and action's wei disagree
	// contradicts itself and is refused whole, whichever of the two matches the intent.
	EchoedAmount string
	// UsedNonces are nonces this operation already had signed for earlier requests: none may
	// come back.
	UsedNonces []uint64
}

// VerificationError names what differs between the request and the intent. It wraps
// ErrVerification.
type VerificationError struct {
	Field, Want, Got string
}

func (e *VerificationError) Error() string {
	return fmt.Sprintf("%v: %s: want %s, got %s; nothing was signed", ErrVerification, e.Field, e.Want, e.Got)
}

// Unwrap returns ErrVerification.
func (e *VerificationError) Unwrap() error { return ErrVerification }

// ContradictionError: the service's answer contradicts itself, its echoed amount against its
// action's wei; both values are named. It wraps ErrVerification.
type ContradictionError struct {
	// Amount is the answer's amount field as written; Wei the action's wei.
	Amount string
	Wei    uint64
	// Reason says why they disagree.
	Reason string
}

func (e *ContradictionError) Error() string {
	return fmt.Sprintf("%v: the answer contradicts itself: its amount %q against its action's wei %d (%s HYPE): %s; nothing was signed",
		ErrVerification, e.Amount, e.Wei, formatWei(e.Wei), e.Reason)
}

// Unwrap returns ErrVerification.
func (e *ContradictionError) Unwrap() error { return ErrVerification }

// Decimals: 1 HYPE = 10^8 wei on HyperCore, HYPE's weiDecimals in Hyperliquid's token list
// (the info endpoint's spotMeta): the cWithdraw action's wei is HYPE × 10^8.
const Decimals = 8

// formatWei renders wei as HYPE, exactly.
func formatWei(wei uint64) string { return amount.FromUint64(wei).Format(Decimals) }

// Signature is an ECDSA signature as the exchange takes it.
type Signature struct {
	R string `json:"r"`
	S string `json:"s"`
	V uint8  `json:"v"`
}

// Signed is a verified and signed action.
type Signed struct {
	Action    Action    `json:"action"`
	Nonce     uint64    `json:"nonce"`
	Signature Signature `json:"signature"`
	// Digest is the EIP-712 hash signed, 0x hex.
	Digest string `json:"-"`
}

// Signer verifies cWithdraw actions and has a key backend (the EVM keyring, say) sign the
// EIP-712 digest of those that pass.
type Signer struct {
	keys   keys.Backend
	policy Policy
	now    func() time.Time

	mu sync.Mutex
	// signed records, per key, the digest signed under each nonce.
	signed map[common.Address]map[uint64]common.Hash
}

// New returns a signer over keys under policy.
func New(kr *signerevm.Keyring, policy Policy) *Signer { return NewBackend(kr, policy) }

// NewBackend is New over any key backend that signs keys.Secp256k1Recoverable.
func NewBackend(backend keys.Backend, policy Policy) *Signer {
	return &Signer{keys: backend, policy: policy, now: time.Now, signed: map[common.Address]map[uint64]common.Hash{}}
}

// Has reports whether the signer holds a key for addr.
func (s *Signer) Has(addr common.Address) bool {
	_, ok := keys.Find(s.keys, addr.Hex())
	return ok
}

// Verify checks u against the intent and the policy; the error names the first difference.
func (s *Signer) Verify(in Intent, u *Unsigned) error {
	chain, ok := networks.Hyperliquid.ID(in.Network)
	if !ok {
		return fmt.Errorf("%w: network %q is not mainnet or testnet", ErrIntent, in.Network)
	}
	wei, err := WeiOf(in.Amount)
	if err != nil {
		return err
	}
	a := u.Action
	if a.Type != TypeCWithdraw {
		return &VerificationError{Field: "type", Want: TypeCWithdraw + " (staking balance to spot)", Got: fmt.Sprintf("%q", a.Type)}
	}
	if in.EchoedAmount != "" {
		echoed, err := WeiOf(in.EchoedAmount)
		switch {
		case err != nil:
			return &ContradictionError{Amount: in.EchoedAmount, Wei: a.Wei, Reason: "the amount is not an exact HYPE amount"}
		case echoed != a.Wei:
			return &ContradictionError{Amount: in.EchoedAmount, Wei: a.Wei, Reason: fmt.Sprintf("the amount is %d wei", echoed)}
		}
	}
	if a.HyperliquidChain != chain {
		return &VerificationError{Field: "hyperliquidChain", Want: chain + " (network " + in.Network + ")", Got: fmt.Sprintf("%q", a.HyperliquidChain)}
	}
	if a.Wei != wei {
		return &VerificationError{Field: "wei", Want: fmt.Sprintf("%d (%s HYPE × 10^8)", wei, in.Amount), Got: fmt.Sprintf("%d", a.Wei)}
	}
	if !s.chainAllowed(a.SignatureChainID) {
		return &VerificationError{Field: "signatureChainId", Want: "one of " + strings.Join(s.policy.chainIDs(), ", "), Got: fmt.Sprintf("%q", a.SignatureChainID)}
	}
	if u.Nonce != 0 && u.Nonce != a.Nonce {
		return &VerificationError{Field: "nonce", Want: fmt.Sprintf("the action's, %d", a.Nonce), Got: fmt.Sprintf("%d in the envelope", u.Nonce)}
	}
	now := s.now()
	at := time.UnixMilli(int64(min(a.Nonce, uint64(1)<<62)))
	if at.Before(now.Add(-s.policy.maxAge())) || at.After(now.Add(s.policy.maxAhead())) {
		return &VerificationError{Field: "nonce",
			Want: fmt.Sprintf("a millisecond timestamp between %s and %s", now.Add(-s.policy.maxAge()).UTC().Format(time.RFC3339), now.Add(s.policy.maxAhead()).UTC().Format(time.RFC3339)),
			Got:  fmt.Sprintf("%d (%s)", a.Nonce, at.UTC().Format(time.RFC3339))}
	}
	for _, n := range in.UsedNonces {
		if n == a.Nonce {
			return &VerificationError{Field: "nonce", Want: "one this operation has not signed before", Got: fmt.Sprintf("%d again", a.Nonce)}
		}
	}
	return nil
}

func (s *Signer) chainAllowed(id string) bool {
	got, err := chainID(id)
	if err != nil {
		return false
	}
	for _, c := range s.policy.chainIDs() {
		if want, err := chainID(c); err == nil && want.Cmp(got) == 0 {
			return true
		}
	}
	return false
}

// chainID reads a 0x hex chain id.
func chainID(s string) (*big.Int, error) {
	v, err := hexutil.DecodeBig(s)
	if err != nil || v.Sign() <= 0 {
		return nil, fmt.Errorf("%q is not a 0x hex chain id", s)
	}
	return v, nil
}

// Sign verifies u against the intent and the policy, then signs its action with the delegator's
// key. A nonce this key signed for another action is refused. When ctx is cancelled before the
// signature is made, Sign returns ctx.Err().
func (s *Signer) Sign(ctx context.Context, in Intent, u *Unsigned) (*Signed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.Verify(in, u); err != nil {
		return nil, err
	}
	acct, ok := keys.Find(s.keys, in.Delegator.Hex())
	if !ok {
		return nil, &signerevm.UnknownKeyError{Address: in.Delegator.Hex()}
	}
	digest, err := Digest(u.Action)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	book := s.signed[in.Delegator]
	if prev, ok := book[u.Action.Nonce]; ok && prev != digest {
		return nil, &VerificationError{Field: "nonce", Want: "one this key has not signed for another action", Got: fmt.Sprintf("%d, signed before", u.Action.Nonce)}
	}
	sig, err := keys.Sign(ctx, s.keys, acct, keys.Secp256k1Recoverable, digest[:])
	if err != nil {
		return nil, err
	}
	if book == nil {
		book = map[uint64]common.Hash{}
		s.signed[in.Delegator] = book
	}
	s.forget(book)
	book[u.Action.Nonce] = digest
	return &Signed{Action: u.Action, Nonce: u.Action.Nonce, Digest: digest.Hex(),
		Signature: Signature{R: hexutil.Encode(sig[:32]), S: hexutil.Encode(sig[32:64]), V: sig[64] + 27}}, nil
}

// forget drops the nonces too old to be accepted anywhere any more.
func (s *Signer) forget(book map[uint64]common.Hash) {
	oldest := uint64(max(s.now().Add(-2*s.policy.maxAge()).UnixMilli(), 0))
	for n := range book {
		if n < oldest {
			delete(book, n)
		}
	}
}

// DomainType is the EIP-712 domain type of every Hyperliquid user-signed action.
var DomainType = []apitypes.Type{
	{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
	{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"},
}

// Domain is the EIP-712 domain of Hyperliquid's user-signed actions under signatureChainID.
func Domain(signatureChainID string) (apitypes.TypedDataDomain, error) {
	id, err := chainID(signatureChainID)
	if err != nil {
		return apitypes.TypedDataDomain{}, fmt.Errorf("%w: signatureChainId %v", ErrVerification, err)
	}
	return apitypes.TypedDataDomain{
		Name: "HyperliquidSignTransaction", Version: "1",
		ChainId: (*math.HexOrDecimal256)(id), VerifyingContract: "0x0000000000000000000000000000000000000000",
	}, nil
}

// TypedData is the EIP-712 typed data of a cWithdraw action.
func TypedData(a Action) (apitypes.TypedData, error) {
	d, err := Domain(a.SignatureChainID)
	if err != nil {
		return apitypes.TypedData{}, err
	}
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": DomainType,
			"HyperliquidTransaction:CWithdraw": {
				{Name: "hyperliquidChain", Type: "string"}, {Name: "wei", Type: "uint64"}, {Name: "nonce", Type: "uint64"},
			},
		},
		PrimaryType: "HyperliquidTransaction:CWithdraw",
		Domain:      d,
		Message: apitypes.TypedDataMessage{
			"hyperliquidChain": a.HyperliquidChain,
			"wei":              new(big.Int).SetUint64(a.Wei),
			"nonce":            new(big.Int).SetUint64(a.Nonce),
		},
	}, nil
}

// Digest is the EIP-712 hash of a cWithdraw action.
func Digest(a Action) (common.Hash, error) {
	td, err := TypedData(a)
	if err != nil {
		return common.Hash{}, err
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return common.Hash{}, fmt.Errorf("%w: typed data: %v", ErrVerification, err)
	}
	return common.BytesToHash(h), nil
}

// Recover returns the address that signed a with sig (the exchange's check).
func Recover(a Action, sig Signature) (common.Address, error) {
	digest, err := Digest(a)
	if err != nil {
		return common.Address{}, err
	}
	r, err1 := hexutil.Decode(sig.R)
	s, err2 := hexutil.Decode(sig.S)
	if err1 != nil || err2 != nil || len(r) > 32 || len(s) > 32 || (sig.V != 27 && sig.V != 28) {
		return common.Address{}, fmt.Errorf("malformed signature")
	}
	raw := make([]byte, 65)
	copy(raw[32-len(r):32], r)
	copy(raw[64-len(s):64], s)
	raw[64] = sig.V - 27
	pub, err := crypto.SigToPub(digest[:], raw)
	if err != nil {
		return common.Address{}, fmt.Errorf("signature does not recover: %w", err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}
