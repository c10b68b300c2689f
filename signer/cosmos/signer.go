package cosmos

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
	"github.com/stakeflow/stakeflow/signer/keys"
)

// Account is what the chain reports for the delegator's account.
type Account struct {
	AccountNumber uint64 `json:"accountNumber"`
	Sequence      uint64 `json:"sequence"`
}

// FeeParams are the gas limit and fee a transaction is built with.
type FeeParams struct {
	GasLimit uint64 `json:"gasLimit"`
	// Fee is in utia.
	Fee uint64 `json:"fee"`
}

// Unsigned is a built transaction: the body and auth info bytes that will be signed.
type Unsigned struct {
	BodyBytes     []byte `json:"bodyBytes"`
	AuthInfoBytes []byte `json:"authInfoBytes"`
}

// Signed is a verified and signed transaction.
type Signed struct {
	// TxBase64 is the TxRaw, base64: what endpoint 3 sends.
	TxBase64 string `json:"txBase64"`
	// Hash is the transaction hash, upper-case hex SHA-256 of the TxRaw bytes.
	Hash string `json:"hash"`
	// Sequence is the account sequence the transaction consumes.
	Sequence uint64 `json:"sequence"`
}

// TxHash returns the hash of TxRaw bytes as the chain names it: upper-case hex SHA-256.
func TxHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// message returns the one message of an intent.
func message(in Intent) tx.Any {
	amount := tx.Coin{Denom: Denom, Amount: in.Amount}
	switch in.Operation {
	case OpDelegate:
		return tx.MsgDelegate{DelegatorAddress: in.Delegator, ValidatorAddress: in.Validator, Amount: amount}.Any()
	case OpUndelegate:
		return tx.MsgUndelegate{DelegatorAddress: in.Delegator, ValidatorAddress: in.Validator, Amount: amount}.Any()
	case OpRedelegate:
		return tx.MsgBeginRedelegate{DelegatorAddress: in.Delegator, ValidatorSrcAddress: in.Validator,
			ValidatorDstAddress: in.DstValidator, Amount: amount}.Any()
	default:
		return tx.MsgWithdrawDelegatorReward{DelegatorAddress: in.Delegator, ValidatorAddress: in.Validator}.Any()
	}
}

// Build returns the transaction for intent from the account's public key, the chain-reported
// sequence, the fee parameters and the policy's memo; its timeout height is the intent's.
func Build(in Intent, pubKey []byte, acct Account, fee FeeParams, memo string) (Unsigned, error) {
	if err := in.Validate(); err != nil {
		return Unsigned{}, err
	}
	body := tx.TxBody{Messages: []tx.Any{message(in)}, Memo: memo, TimeoutHeight: in.TimeoutHeight}
	pk := tx.PubKey{Key: pubKey}.Any()
	ai := tx.AuthInfo{
		SignerInfos: []tx.SignerInfo{{PublicKey: &pk, SignMode: tx.SignModeDirect, Sequence: acct.Sequence}},
		Fee:         tx.Fee{Amount: []tx.Coin{{Denom: Denom, Amount: strconv.FormatUint(fee.Fee, 10)}}, GasLimit: fee.GasLimit},
	}
	return Unsigned{BodyBytes: body.Marshal(), AuthInfoBytes: ai.Marshal()}, nil
}

func mismatch(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMismatch, fmt.Sprintf(format, args...))
}

// Verify checks an unsigned transaction against the intent, the account, the signer's public
// key and the policy: exactly one message, of the operation's type, with the intent's delegator,
// validators (on the allow-list) and exact amount; no extension options; the policy's memo only;
// exactly the intent's timeout height (which must be set); one signer, SIGN_MODE_DIRECT, whose public key is pubKey and
// maps to the delegator, at the chain's sequence; a fee in utia under the cap and at least the
// minimum gas price; gas under the cap; no fee payer or granter. It returns the fee parameters read.
func Verify(u Unsigned, in Intent, pubKey []byte, acct Account, p Policy) (FeeParams, error) {
	if err := in.Validate(); err != nil {
		return FeeParams{}, err
	}
	for _, v := range in.validators() {
		if !p.allows(v) {
			return FeeParams{}, mismatch("validator %s is not on the allow-list", v)
		}
	}
	addr, err := tx.Address(AccountPrefix, pubKey)
	if err != nil || addr != in.Delegator {
		return FeeParams{}, mismatch("the signing key's address %s is not the delegator %s", addr, in.Delegator)
	}
	body, err := tx.UnmarshalTxBody(u.BodyBytes)
	if err != nil {
		return FeeParams{}, mismatch("body: %v", err)
	}
	if len(body.Messages) != 1 {
		return FeeParams{}, mismatch("%d messages, want 1", len(body.Messages))
	}
	got, err := tx.DecodeMsg(body.Messages[0])
	if err != nil {
		return FeeParams{}, mismatch("%v", err)
	}
	want, err := tx.DecodeMsg(message(in))
	if err != nil {
		return FeeParams{}, err
	}
	if got != want {
		return FeeParams{}, mismatch("message %+v, want %+v", got, want)
	}
	if len(body.ExtensionOptions)+len(body.NonCriticalExtensionOptions) > 0 {
		return FeeParams{}, mismatch("extension options are not accepted")
	}
	if body.Memo != p.Memo {
		return FeeParams{}, mismatch("memo %q, want %q", body.Memo, p.Memo)
	}
	if in.TimeoutHeight == 0 {
		return FeeParams{}, mismatch("the intent names no timeout height; every Celestia transaction must carry one")
	}
	if body.TimeoutHeight != in.TimeoutHeight {
		return FeeParams{}, mismatch("timeout height %d, the build chose %d", body.TimeoutHeight, in.TimeoutHeight)
	}
	ai, err := tx.UnmarshalAuthInfo(u.AuthInfoBytes)
	if err != nil {
		return FeeParams{}, mismatch("auth info: %v", err)
	}
	if len(ai.SignerInfos) != 1 {
		return FeeParams{}, mismatch("%d signers, want 1", len(ai.SignerInfos))
	}
	si := ai.SignerInfos[0]
	if si.SignMode != tx.SignModeDirect {
		return FeeParams{}, mismatch("sign mode %d, want SIGN_MODE_DIRECT", si.SignMode)
	}
	if si.PublicKey == nil || si.PublicKey.TypeURL != tx.TypeSecp256k1PubKey {
		return FeeParams{}, mismatch("signer public key is not a secp256k1 key")
	}
	pk, err := tx.UnmarshalPubKey(si.PublicKey.Value)
	if err != nil || !bytes.Equal(pk.Key, pubKey) {
		return FeeParams{}, mismatch("signer public key is not the delegator's key")
	}
	if si.Sequence != acct.Sequence {
		return FeeParams{}, mismatch("sequence %d, the chain reports %d", si.Sequence, acct.Sequence)
	}
	fee := ai.Fee
	if fee.Payer != "" || fee.Granter != "" {
		return FeeParams{}, mismatch("fee payer or granter set")
	}
	if len(fee.Amount) != 1 || fee.Amount[0].Denom != Denom {
		return FeeParams{}, mismatch("fee %v, want one amount in %s", fee.Amount, Denom)
	}
	amount, err := strconv.ParseUint(fee.Amount[0].Amount, 10, 64)
	if err != nil || strconv.FormatUint(amount, 10) != fee.Amount[0].Amount {
		return FeeParams{}, mismatch("fee amount %q is not a whole number", fee.Amount[0].Amount)
	}
	if amount > p.MaxFee {
		return FeeParams{}, mismatch("fee %d utia above the cap %d", amount, p.MaxFee)
	}
	if fee.GasLimit == 0 || fee.GasLimit > p.MaxGas {
		return FeeParams{}, mismatch("gas limit %d not in 1..%d", fee.GasLimit, p.MaxGas)
	}
	if amount < MinFee(fee.GasLimit) {
		return FeeParams{}, mismatch("fee %d utia below the minimum gas price (%d for gas %d)", amount, MinFee(fee.GasLimit), fee.GasLimit)
	}
	// Nothing else may hide in the bytes: the expected encoding must be exactly what was given.
	exp, err := Build(in, pubKey, acct, FeeParams{GasLimit: fee.GasLimit, Fee: amount}, p.Memo)
	if err != nil {
		return FeeParams{}, err
	}
	if !bytes.Equal(exp.BodyBytes, u.BodyBytes) || !bytes.Equal(exp.AuthInfoBytes, u.AuthInfoBytes) {
		return FeeParams{}, mismatch("the encoding is not the canonical encoding of the expected transaction")
	}
	return FeeParams{GasLimit: fee.GasLimit, Fee: amount}, nil
}

// MinGasPriceMilli is Celestia's minimum gas price in thousandths of a utia (0.002 utia).
const MinGasPriceMilli = 2

// MinFee is the lowest fee in utia the minimum gas price allows for gas (rounded up).
func MinFee(gas uint64) uint64 { return (gas*MinGasPriceMilli + 999) / 1000 }

// Signer verifies Celestia transactions and has a key backend (a Keyring, say) sign the SHA-256
// of the sign doc of those that pass.
type Signer struct {
	keys   keys.Backend
	policy Policy
}

// NewSigner returns a signer over keys bounded by policy.
func NewSigner(kr *Keyring, policy Policy) *Signer { return NewSignerBackend(kr, policy) }

// NewSignerBackend is NewSigner over any key backend that signs keys.Secp256k1 and reports each
// account's compressed public key.
func NewSignerBackend(backend keys.Backend, policy Policy) *Signer {
	return &Signer{keys: backend, policy: policy}
}

// account is the backend's account for a delegator.
func (s *Signer) account(delegator string) (keys.Account, error) {
	a, ok := keys.Find(s.keys, delegator)
	if !ok {
		return keys.Account{}, fmt.Errorf("%w: %s", ErrUnknownKey, delegator)
	}
	return a, nil
}

// Policy returns the signer's policy.
func (s *Signer) Policy() Policy { return s.policy }

// PubKey returns the compressed public key of the delegator's key.
func (s *Signer) PubKey(delegator string) ([]byte, error) {
	a, err := s.account(delegator)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(a.PublicKey), nil
}

// Sign verifies u against the intent, the account and the policy (Verify) and only then has the
// key backend sign SHA-256 of its sign doc. When ctx is cancelled before the signature is made,
// Sign returns ctx.Err().
func (s *Signer) Sign(ctx context.Context, u Unsigned, in Intent, acct Account) (*Signed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ka, err := s.account(in.Delegator)
	if err != nil {
		return nil, err
	}
	pub := ka.PublicKey
	if _, err := Verify(u, in, pub, acct, s.policy); err != nil {
		return nil, err
	}
	chainID, err := ChainID(in.Network)
	if err != nil {
		return nil, err
	}
	raw := tx.TxRaw{BodyBytes: u.BodyBytes, AuthInfoBytes: u.AuthInfoBytes}
	sum := sha256.Sum256(raw.SignDoc(chainID, acct.AccountNumber).Marshal())
	sig, err := keys.Sign(ctx, s.keys, ka, keys.Secp256k1, sum[:])
	if err != nil {
		return nil, err
	}
	raw.Signatures = [][]byte{sig}
	b := raw.Marshal()
	return &Signed{TxBase64: base64.StdEncoding.EncodeToString(b), Hash: TxHash(b), Sequence: acct.Sequence}, nil
}

// SignBytes signs SHA-256(signBytes) with key: RFC 6979, low S, 64 bytes r||s.
func SignBytes(key *secp256k1.PrivateKey, signBytes []byte) []byte {
	sum := sha256.Sum256(signBytes)
	compact := ecdsa.SignCompact(key, sum[:], true)
	return compact[1:]
}

// VerifySignature checks a 64-byte r||s signature over SHA-256(signBytes) by a compressed
// public key, refusing a high S as the Cosmos SDK does.
func VerifySignature(pubKey, signBytes, sig []byte) bool {
	if len(sig) != 64 {
		return false
	}
	pk, err := secp256k1.ParsePubKey(pubKey)
	if err != nil {
		return false
	}
	var r, s secp256k1.ModNScalar
	if r.SetByteSlice(sig[:32]) || s.SetByteSlice(sig[32:]) || r.IsZero() || s.IsZero() || s.IsOverHalfOrder() {
		return false
	}
	sum := sha256.Sum256(signBytes)
	return ecdsa.NewSignature(&r, &s).Verify(sum[:], pk)
}
