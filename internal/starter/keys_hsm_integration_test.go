//go:build integration && cgo

package starter

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/mr-tron/base58"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/keys/hsm"
	"github.com/stakeflow/stakeflow/signer/keys/hsm/hsmtest"
)

func tokenArgs(tk *hsmtest.Token) []string {
	return []string{"--pkcs11-module", tk.Module, "--pkcs11-token", tk.Label, "--pkcs11-pin-file", tk.PINFile}
}

// TestKeysGenerateInTokenAndList: keys generate makes each chain's key inside a SoftHSM2 token and
// prints the address of the public key the token holds under that label; keys list shows them
// with their addresses, never the PIN; a label used twice is refused naming it.
func TestKeysGenerateInTokenAndList(t *testing.T) {
	tk := hsmtest.New(t)
	gen := func(chain, label string) (string, error) {
		out := &bytes.Buffer{}
		args := append([]string{"keys", "generate", "--backend", "pkcs11", "--chain", chain, "--label", label, "--json"}, tokenArgs(tk)...)
		if err := Run(context.Background(), args, out, noDial(t)); err != nil {
			return "", err
		}
		var g generated
		require.NoError(t, json.Unmarshal(out.Bytes(), &g))
		assert.Equal(t, chain, g.Chain)
		return g.Address, nil
	}
	solAddr, err := gen("solana", "sol-1")
	require.NoError(t, err)
	evmAddr, err := gen("evm", "evm-1")
	require.NoError(t, err)
	tiaAddr, err := gen("celestia", "tia-1")
	require.NoError(t, err)
	_, err = gen("hyperliquid", "evm-1")
	require.ErrorIs(t, err, hsm.ErrConfig)
	assert.Contains(t, err.Error(), `"evm-1"`)

	// The addresses are those of the public keys in the token (base58 and Keccak by other code).
	tok := hsmtest.Open(t, tk)
	ks, err := tok.List()
	require.NoError(t, err)
	require.Len(t, ks, 3)
	byLabel := map[string]hsm.KeyInfo{}
	for _, k := range ks {
		byLabel[k.Label] = k
	}
	assert.Equal(t, base58.Encode(byLabel["sol-1"].PublicKey), solAddr)
	pk, err := crypto.DecompressPubkey(byLabel["evm-1"].PublicKey)
	require.NoError(t, err)
	assert.Equal(t, crypto.PubkeyToAddress(*pk).Hex(), evmAddr)
	assert.Regexp(t, `^celestia1[02-9ac-hj-np-z]{38}$`, tiaAddr)
	require.NoError(t, tok.Close())

	out := &bytes.Buffer{}
	require.NoError(t, Run(context.Background(), append([]string{"keys", "list"}, tokenArgs(tk)...), out, noDial(t)))
	for _, want := range []string{solAddr, evmAddr, tiaAddr, `"sol-1"`, `"evm-1"`, `"tia-1"`} {
		assert.Contains(t, out.String(), want)
	}
	assert.NotContains(t, out.String(), tk.PIN)
	out.Reset()
	require.NoError(t, Run(context.Background(), append([]string{"keys", "list", "--json"}, tokenArgs(tk)...), out, noDial(t)))
	var listed []listedKey
	require.NoError(t, json.Unmarshal(out.Bytes(), &listed))
	// One ed25519 key (Solana) and two secp256k1 keys (EVM, Hyperliquid, Celestia each).
	assert.Len(t, listed, 1+2*3)
	assert.Contains(t, listed, listedKey{Backend: "pkcs11", Label: "sol-1", ID: listed[indexOf(listed, "sol-1")].ID, KeyType: "ed25519", Chain: "solana", Address: solAddr})
}

func indexOf(ls []listedKey, label string) int {
	for i, l := range ls {
		if l.Label == label {
			return i
		}
	}
	return -1
}

// TestKeysGenerateRefusals: a backend other than pkcs11, an unknown chain, a wrong PIN (ErrLogin
// naming the token, not the PIN) and a PIN file others may read are refused.
func TestKeysGenerateRefusals(t *testing.T) {
	tk := hsmtest.New(t)
	run := func(args ...string) error {
		return Run(context.Background(), append([]string{"keys", "generate"}, args...), &bytes.Buffer{}, noDial(t))
	}
	var ue *UsageError
	err := run(append([]string{"--backend", "file", "--chain", "solana", "--label", "x"}, tokenArgs(tk)...)...)
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "want pkcs11")
	err = run(append([]string{"--backend", "pkcs11", "--chain", "ton", "--label", "x"}, tokenArgs(tk)...)...)
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), `"ton"`)

	require.NoError(t, os.WriteFile(tk.PINFile, []byte("000000"), 0o600))
	err = run(append([]string{"--backend", "pkcs11", "--chain", "solana", "--label", "x"}, tokenArgs(tk)...)...)
	require.ErrorIs(t, err, hsm.ErrLogin)
	assert.Contains(t, err.Error(), tk.Label)
	assert.NotContains(t, err.Error(), "000000")

	require.NoError(t, os.Chmod(tk.PINFile, 0o640))
	err = run(append([]string{"--backend", "pkcs11", "--chain", "solana", "--label", "x"}, tokenArgs(tk)...)...)
	require.ErrorIs(t, err, hsm.ErrConfig)
	assert.Contains(t, err.Error(), "0640")
}
