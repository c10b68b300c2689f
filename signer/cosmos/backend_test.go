package cosmos

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
	"github.com/stakeflow/stakeflow/signer/keys"
	"github.com/stakeflow/stakeflow/signer/keys/keystest"
)

// TestKeyringSignsCosmjsVector: the keyring as a key backend, given SHA-256 of cosmjs' sign
// bytes under keys.Secp256k1, returns cosmjs' signature.
func TestKeyringSignsCosmjsVector(t *testing.T) {
	k, err := keyFromMnemonic(faucetMnemonic)
	require.NoError(t, err)
	addr, err := tx.Address(AccountPrefix, k.PubKey().SerializeCompressed())
	require.NoError(t, err)
	kr := &Keyring{keys: map[string]*secp256k1.PrivateKey{addr: k}}
	acct, ok := keys.Find(kr, addr)
	require.True(t, ok)
	sb, err := hex.DecodeString(cosmjsSignBytes)
	require.NoError(t, err)
	sum := sha256.Sum256(sb)
	sig, err := kr.Sign(context.Background(), acct, keys.Secp256k1, sum[:])
	require.NoError(t, err)
	assert.Equal(t, cosmjsSignature, hex.EncodeToString(sig))
}

// TestSignHandsTheBackendTheSignDocDigest: the signer hands its key backend SHA-256 of the
// transaction's SIGN_MODE_DIRECT sign doc (chain id mocha-4, the account number) under
// keys.Secp256k1 for the delegator's account, once, and places the backend's signature, which
// verifies over the sign doc.
func TestSignHandsTheBackendTheSignDocDigest(t *testing.T) {
	s, in, pub := testSigner(t)
	rec := &keystest.Recorder{Inner: s.keys}
	rs := NewSignerBackend(rec, s.Policy())
	acct := Account{AccountNumber: 7, Sequence: 3}
	u, err := Build(in, pub, acct, FeeParams{GasLimit: 200_000, Fee: 400}, "stakeflow")
	require.NoError(t, err)
	signed, err := rs.Sign(context.Background(), u, in, acct)
	require.NoError(t, err)
	doc := tx.TxRaw{BodyBytes: u.BodyBytes, AuthInfoBytes: u.AuthInfoBytes}.SignDoc("mocha-4", 7).Marshal()
	sum := sha256.Sum256(doc)
	calls := rec.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, in.Delegator, calls[0].Account.Address)
	assert.Equal(t, keys.Secp256k1, calls[0].Scheme)
	assert.Equal(t, sum[:], calls[0].Payload)
	b, err := base64.StdEncoding.DecodeString(signed.TxBase64)
	require.NoError(t, err)
	raw, err := tx.UnmarshalTxRaw(b)
	require.NoError(t, err)
	require.Len(t, raw.Signatures, 1)
	assert.True(t, VerifySignature(pub, doc, raw.Signatures[0]))
}

// TestSignSurfacesABackendError: a backend that does not sign makes Sign fail with a
// *keys.SignError naming the delegator and the backend's reason, and return nothing signed.
func TestSignSurfacesABackendError(t *testing.T) {
	s, in, pub := testSigner(t)
	rec := &keystest.Recorder{Inner: s.keys, Err: errors.New("token removed")}
	rs := NewSignerBackend(rec, s.Policy())
	acct := Account{AccountNumber: 7, Sequence: 3}
	u, err := Build(in, pub, acct, FeeParams{GasLimit: 200_000, Fee: 400}, "stakeflow")
	require.NoError(t, err)
	signed, err := rs.Sign(context.Background(), u, in, acct)
	require.ErrorIs(t, err, keys.ErrSign)
	var se *keys.SignError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, in.Delegator, se.Address)
	assert.Contains(t, err.Error(), in.Delegator)
	assert.Contains(t, err.Error(), "token removed")
	assert.Nil(t, signed, "nothing signed")
	assert.Len(t, rec.Calls(), 1)
}
