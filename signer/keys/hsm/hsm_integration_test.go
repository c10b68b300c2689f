//go:build integration && cgo

package hsm_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	secpecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/keys"
	"github.com/stakeflow/stakeflow/signer/keys/hsm"
	"github.com/stakeflow/stakeflow/signer/keys/hsm/hsmtest"
)

// halfN is half the secp256k1 group order (SEC 2: n = FFFFFFFF FFFFFFFF FFFFFFFF FFFFFFFE
// BAAEDCE6 AF48A03B BFD25E8C D0364141): a low-S signature has S <= halfN.
var halfN = func() *big.Int {
	n, _ := new(big.Int).SetString("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141", 16)
	return n.Rsh(n, 1)
}()

// tokenWithKey opens a new token holding one key of type kt labelled label, and the backend over
// it whose address is addr of its public key.
func tokenWithKey(t *testing.T, kt hsm.KeyType, label string, addr func(pub []byte) (string, error)) (*hsm.Token, *hsm.Backend) {
	t.Helper()
	tok := hsmtest.Open(t, hsmtest.New(t))
	_, err := tok.Generate(kt, label)
	require.NoError(t, err)
	b, err := tok.Backend(kt, addr, []string{label})
	require.NoError(t, err)
	return tok, b
}

func messages(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("stakeflow message %d %s", i, strings.Repeat("x", i)))
	}
	return out
}

func TestEd25519SignaturesVerify(t *testing.T) {
	tok := hsmtest.Open(t, hsmtest.New(t))
	pub, err := tok.Generate(hsm.Ed25519, "sol-1")
	require.NoError(t, err)
	require.Len(t, pub, 32)
	b, err := tok.Backend(hsm.Ed25519, hsm.SolanaAddress, []string{"sol-1"})
	require.NoError(t, err)
	accts := b.Accounts()
	require.Len(t, accts, 1)
	addr, err := hsm.SolanaAddress(pub)
	require.NoError(t, err)
	assert.Equal(t, addr, accts[0].Address)
	for _, m := range messages(40) {
		sig, err := keys.Sign(context.Background(), b, accts[0], keys.Ed25519, m)
		require.NoError(t, err)
		require.True(t, ed25519.Verify(ed25519.PublicKey(pub), m, sig), "signature of %q", m)
	}
	assert.Equal(t, uint64(40), b.Signs())
}

func TestSecp256k1RecoverableSignaturesRecoverTheAddressWithLowS(t *testing.T) {
	tok := hsmtest.Open(t, hsmtest.New(t))
	pub, err := tok.Generate(hsm.Secp256k1, "evm-1")
	require.NoError(t, err)
	require.Len(t, pub, 33)
	b, err := tok.Backend(hsm.Secp256k1, hsm.EVMAddress, []string{"evm-1"})
	require.NoError(t, err)
	acct := b.Accounts()[0]
	require.True(t, common.IsHexAddress(acct.Address))
	for _, m := range messages(64) {
		digest := crypto.Keccak256(m)
		sig, err := keys.Sign(context.Background(), b, acct, keys.Secp256k1Recoverable, digest)
		require.NoError(t, err)
		require.Len(t, sig, 65)
		assert.LessOrEqual(t, new(big.Int).SetBytes(sig[32:64]).Cmp(halfN), 0, "high S")
		assert.Contains(t, []byte{0, 1}, sig[64])
		rec, err := crypto.SigToPub(digest, sig)
		require.NoError(t, err)
		assert.Equal(t, acct.Address, crypto.PubkeyToAddress(*rec).Hex())
	}
}

func TestSecp256k1CosmosSignaturesVerifyWithThePublicKey(t *testing.T) {
	_, b := tokenWithKey(t, hsm.Secp256k1, "tia-1", hsm.CosmosAddress("celestia"))
	acct := b.Accounts()[0]
	require.True(t, strings.HasPrefix(acct.Address, "celestia1"), acct.Address)
	pk, err := secp256k1.ParsePubKey(acct.PublicKey)
	require.NoError(t, err)
	for _, m := range messages(32) {
		digest := sha256.Sum256(m)
		sig, err := keys.Sign(context.Background(), b, acct, keys.Secp256k1, digest[:])
		require.NoError(t, err)
		require.Len(t, sig, 64)
		var r, s secp256k1.ModNScalar
		require.False(t, r.SetByteSlice(sig[:32]))
		require.False(t, s.SetByteSlice(sig[32:]))
		assert.False(t, s.IsOverHalfOrder(), "high S")
		assert.True(t, secpecdsa.NewSignature(&r, &s).Verify(digest[:], pk))
		assert.True(t, crypto.VerifySignature(crypto.FromECDSAPub(mustDecompress(t, acct.PublicKey)), digest[:], sig))
	}
}

func mustDecompress(t *testing.T, pub []byte) *ecdsa.PublicKey {
	t.Helper()
	k, err := crypto.DecompressPubkey(pub)
	require.NoError(t, err)
	return k
}

func TestWrongPINIsErrLoginNamingTheTokenNotThePIN(t *testing.T) {
	tk := hsmtest.New(t)
	wrong := tk.PIN + "9"
	require.NoError(t, os.WriteFile(tk.PINFile, []byte(wrong), 0o600))
	tok, err := hsm.Open(tk.Config())
	if tok != nil {
		_ = tok.Close()
	}
	require.ErrorIs(t, err, hsm.ErrLogin)
	var le *hsm.LoginError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, tk.Label, le.Token)
	assert.Contains(t, err.Error(), tk.Label)
	assert.Contains(t, err.Error(), "CKR_PIN_INCORRECT")
	assert.NotContains(t, err.Error(), wrong)
	assert.NotContains(t, err.Error(), tk.PIN)
}

func TestLoosePINFileRefusedNamingFileAndMode(t *testing.T) {
	tk := hsmtest.New(t)
	require.NoError(t, os.Chmod(tk.PINFile, 0o644))
	_, err := hsm.Open(tk.Config())
	require.ErrorIs(t, err, hsm.ErrConfig)
	assert.Contains(t, err.Error(), tk.PINFile)
	assert.Contains(t, err.Error(), "0644")
	assert.NotContains(t, err.Error(), tk.PIN)
}

func TestUnknownTokenLabelRefusedNamingIt(t *testing.T) {
	tk := hsmtest.New(t)
	cfg := tk.Config()
	cfg.Token = "no-such-token"
	_, err := hsm.Open(cfg)
	require.ErrorIs(t, err, hsm.ErrConfig)
	assert.Contains(t, err.Error(), `"no-such-token"`)
}

func TestUnknownKeyRefusedNamingTheRef(t *testing.T) {
	tok := hsmtest.Open(t, hsmtest.New(t))
	_, err := tok.Generate(hsm.Ed25519, "sol-1")
	require.NoError(t, err)
	_, err = tok.Backend(hsm.Ed25519, hsm.SolanaAddress, []string{"sol-1", "sol-missing"})
	require.ErrorIs(t, err, hsm.ErrConfig)
	assert.Contains(t, err.Error(), `"sol-missing"`)
	_, err = tok.Backend(hsm.Ed25519, hsm.SolanaAddress, []string{"id:00ff"})
	require.ErrorIs(t, err, hsm.ErrConfig)
	assert.Contains(t, err.Error(), `"id:00ff"`)
	// A key of the other type is refused too, naming it.
	_, err = tok.Backend(hsm.Secp256k1, hsm.EVMAddress, []string{"sol-1"})
	require.ErrorIs(t, err, hsm.ErrConfig)
	assert.Contains(t, err.Error(), `"sol-1"`)
}

func TestGenerateRefusesALabelInUse(t *testing.T) {
	tok := hsmtest.Open(t, hsmtest.New(t))
	_, err := tok.Generate(hsm.Secp256k1, "k")
	require.NoError(t, err)
	_, err = tok.Generate(hsm.Ed25519, "k")
	require.ErrorIs(t, err, hsm.ErrConfig)
	assert.Contains(t, err.Error(), `"k"`)
	ks, err := tok.List()
	require.NoError(t, err)
	require.Len(t, ks, 1)
	assert.Equal(t, hsm.Secp256k1, ks[0].Type)
}

func TestListShowsPublicDataAndKeysByID(t *testing.T) {
	tok := hsmtest.Open(t, hsmtest.New(t))
	edPub, err := tok.Generate(hsm.Ed25519, "a-sol")
	require.NoError(t, err)
	kPub, err := tok.Generate(hsm.Secp256k1, "b-evm")
	require.NoError(t, err)
	ks, err := tok.List()
	require.NoError(t, err)
	require.Len(t, ks, 2)
	assert.Equal(t, hsm.KeyInfo{Label: "a-sol", ID: ks[0].ID, Type: hsm.Ed25519, PublicKey: edPub}, ks[0])
	assert.Equal(t, hsm.KeyInfo{Label: "b-evm", ID: ks[1].ID, Type: hsm.Secp256k1, PublicKey: kPub}, ks[1])
	assert.Len(t, ks[1].ID, 16)
	b, err := tok.Backend(hsm.Secp256k1, hsm.EVMAddress, []string{fmt.Sprintf("id:%x", ks[1].ID)})
	require.NoError(t, err)
	want, err := hsm.EVMAddress(kPub)
	require.NoError(t, err)
	acct, ok := b.Account(want)
	require.True(t, ok)
	assert.Equal(t, fmt.Sprintf("id:%x", ks[1].ID), acct.Handle)
}

func TestConcurrentSigning(t *testing.T) {
	tok := hsmtest.Open(t, hsmtest.New(t))
	_, err := tok.Generate(hsm.Secp256k1, "evm-1")
	require.NoError(t, err)
	_, err = tok.Generate(hsm.Secp256k1, "evm-2")
	require.NoError(t, err)
	b, err := tok.Backend(hsm.Secp256k1, hsm.EVMAddress, []string{"evm-1", "evm-2"})
	require.NoError(t, err)
	accts := b.Accounts()
	const workers, each = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			acct := accts[w%2]
			for i := range each {
				digest := crypto.Keccak256([]byte(fmt.Sprintf("%d/%d", w, i)))
				sig, err := b.Sign(context.Background(), acct, keys.Secp256k1Recoverable, digest)
				if err != nil {
					errs <- err
					continue
				}
				rec, err := crypto.SigToPub(digest, sig)
				if err != nil || crypto.PubkeyToAddress(*rec).Hex() != acct.Address {
					errs <- fmt.Errorf("worker %d message %d: signature does not recover %s", w, i, acct.Address)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, uint64(workers*each), b.Signs())
}

func TestSignErrorNamesTheAccount(t *testing.T) {
	_, b := tokenWithKey(t, hsm.Ed25519, "sol-1", hsm.SolanaAddress)
	acct := b.Accounts()[0]
	_, err := b.Sign(context.Background(), acct, keys.Secp256k1, make([]byte, 32))
	var se *keys.SignError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, acct.Address, se.Address)
	assert.Zero(t, b.Signs())
	other := keys.Account{Address: "11111111111111111111111111111111"}
	_, err = b.Sign(context.Background(), other, keys.Ed25519, []byte("m"))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, other.Address, se.Address)
	assert.Zero(t, b.Signs())
	if errors.Is(err, hsm.ErrLogin) {
		t.Fatal("not a login error")
	}
}

func TestSignLogsInAgainAfterTheLoginEnds(t *testing.T) {
	tok, b := tokenWithKey(t, hsm.Ed25519, "sol-1", hsm.SolanaAddress)
	acct := b.Accounts()[0]
	require.NoError(t, hsm.LogoutForTest(tok))
	sig, err := b.Sign(context.Background(), acct, keys.Ed25519, []byte("after logout"))
	require.NoError(t, err)
	assert.True(t, ed25519.Verify(acct.PublicKey, []byte("after logout"), sig))
	// The first attempt was refused (CKR_USER_NOT_LOGGED_IN at C_SignInit, before any C_Sign).
	assert.Equal(t, uint64(1), b.Signs())
}

func TestSignOpensANewSessionAfterTheTokenClosedThem(t *testing.T) {
	tok, b := tokenWithKey(t, hsm.Secp256k1, "evm-1", hsm.EVMAddress)
	acct := b.Accounts()[0]
	require.NoError(t, hsm.CloseSessionsForTest(tok))
	digest := crypto.Keccak256([]byte("after the sessions closed"))
	sig, err := b.Sign(context.Background(), acct, keys.Secp256k1Recoverable, digest)
	require.NoError(t, err)
	rec, err := crypto.SigToPub(digest, sig)
	require.NoError(t, err)
	assert.Equal(t, acct.Address, crypto.PubkeyToAddress(*rec).Hex())
	assert.Equal(t, 1, hsm.IdleSessionsForTest(tok))
}

// TestTwoOpensOfOneTokenInOneProcess: each chain module may open the same token; closing one
// leaves the other logged in and signing (C_Initialize/C_Finalize are the process's, counted).
func TestTwoOpensOfOneTokenInOneProcess(t *testing.T) {
	tk := hsmtest.New(t)
	a := hsmtest.Open(t, tk)
	_, err := a.Generate(hsm.Ed25519, "sol-1")
	require.NoError(t, err)
	b := hsmtest.Open(t, tk)
	bb, err := b.Backend(hsm.Ed25519, hsm.SolanaAddress, []string{"sol-1"})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	acct := bb.Accounts()[0]
	sig, err := bb.Sign(context.Background(), acct, keys.Ed25519, []byte("still open"))
	require.NoError(t, err)
	assert.True(t, ed25519.Verify(acct.PublicKey, []byte("still open"), sig))
}
