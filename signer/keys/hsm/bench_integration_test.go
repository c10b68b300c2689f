//go:build integration && cgo

package hsm_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer"
	"github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/signer/keys"
	"github.com/stakeflow/stakeflow/signer/keys/hsm"
	"github.com/stakeflow/stakeflow/signer/keys/hsm/hsmtest"
)

// abandonMnemonic is BIP-39's all-zero-entropy test mnemonic (BIP-39 test vectors,
// github.com/trezor/python-mnemonic vectors.json, first English entry): a file key for the
// Celestia benchmark, never a real account.
const abandonMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

// BenchmarkSign: one signature per chain scheme through SoftHSM2 and through the chain's file
// keyring, as a chain signer asks for it (keys.Sign): Solana ed25519 over a 256-byte message;
// EVM and Hyperliquid recoverable secp256k1 over a 32-byte digest; Celestia secp256k1 over a
// 32-byte digest.
func BenchmarkSign(b *testing.B) {
	tok := hsmtest.Open(b, hsmtest.New(b))
	dir := b.TempDir()

	// Solana.
	_, err := tok.Generate(hsm.Ed25519, "sol")
	require.NoError(b, err)
	solHSM, err := tok.Backend(hsm.Ed25519, hsm.SolanaAddress, []string{"sol"})
	require.NoError(b, err)
	_, solPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(b, err)
	solFile := filepath.Join(dir, "sol.json")
	ints := make([]int, len(solPriv))
	for i, c := range solPriv {
		ints[i] = int(c)
	}
	js, err := json.Marshal(ints)
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(solFile, js, 0o600))
	solKR, err := signer.LoadSolanaKeyring(solFile)
	require.NoError(b, err)

	// EVM / Hyperliquid.
	_, err = tok.Generate(hsm.Secp256k1, "evm")
	require.NoError(b, err)
	evmHSM, err := tok.Backend(hsm.Secp256k1, hsm.EVMAddress, []string{"evm"})
	require.NoError(b, err)
	evmKey, err := crypto.GenerateKey()
	require.NoError(b, err)
	evmKR := evm.KeyringOf(evmKey)

	// Celestia.
	_, err = tok.Generate(hsm.Secp256k1, "tia")
	require.NoError(b, err)
	tiaHSM, err := tok.Backend(hsm.Secp256k1, hsm.CosmosAddress(cosmos.AccountPrefix), []string{"tia"})
	require.NoError(b, err)
	tiaDir := filepath.Join(dir, "tia")
	require.NoError(b, os.Mkdir(tiaDir, 0o700))
	pass := filepath.Join(dir, "pass")
	require.NoError(b, os.WriteFile(pass, []byte("bench"), 0o600))
	_, _, err = cosmos.ImportMnemonic(abandonMnemonic, "bench", tiaDir)
	require.NoError(b, err)
	tiaKR, err := cosmos.LoadKeyring(tiaDir, pass)
	require.NoError(b, err)

	msg := make([]byte, 256)
	digest := sha256.Sum256([]byte("stakeflow benchmark"))
	cases := []struct {
		name    string
		backend keys.Backend
		scheme  keys.Scheme
		payload []byte
	}{
		{"solana-ed25519/softhsm", solHSM, keys.Ed25519, msg},
		{"solana-ed25519/file", solKR, keys.Ed25519, msg},
		{"evm-secp256k1-recoverable/softhsm", evmHSM, keys.Secp256k1Recoverable, digest[:]},
		{"evm-secp256k1-recoverable/file", evmKR, keys.Secp256k1Recoverable, digest[:]},
		{"celestia-secp256k1/softhsm", tiaHSM, keys.Secp256k1, digest[:]},
		{"celestia-secp256k1/file", tiaKR, keys.Secp256k1, digest[:]},
	}
	for _, c := range cases {
		acct := c.backend.Accounts()[0]
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := keys.Sign(ctx, c.backend, acct, c.scheme, c.payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
