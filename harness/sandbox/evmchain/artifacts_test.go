package evmchain

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain/solc"
)

// polygonSelectors are the selectors of Polygon's POL delegation calls, as published for the
// mainnet ValidatorShare and every ERC-20.
var polygonSelectors = []struct {
	contract, signature, selector string
}{
	{ContractToken, "approve(address,uint256)", "095ea7b3"},
	{ContractValidatorShare, "buyVoucherPOL(uint256,uint256)", "e4457a8a"},
	{ContractValidatorShare, "sellVoucher_newPOL(uint256,uint256)", "e570b78b"},
	{ContractValidatorShare, "unstakeClaimTokens_newPOL(uint256)", "8759c234"},
	{ContractValidatorShare, "withdrawRewardsPOL()", "e0db556b"},
	{ContractValidatorShare, "restakePOL()", "9ad5f5a4"},
}

// TestSelectorsArePolygons: each call's selector, computed with go-ethereum's Keccak256 from
// its signature and read from the compiled ABI, is Polygon's.
func TestSelectorsArePolygons(t *testing.T) {
	for _, s := range polygonSelectors {
		assert.Equal(t, s.selector, hex.EncodeToString(crypto.Keccak256([]byte(s.signature))[:4]), "keccak of %s", s.signature)
		a, err := Artifact(s.contract)
		require.NoError(t, err)
		m, err := a.ABI.MethodById(mustHex(t, s.selector))
		if assert.NoError(t, err, "%s has no method with selector %s", s.contract, s.selector) {
			assert.Equal(t, s.signature, m.Sig)
		}
	}
}

// TestABIReturnTypes: the reads and returns a client decodes have Polygon's types.
func TestABIReturnTypes(t *testing.T) {
	a, err := Artifact(ContractValidatorShare)
	require.NoError(t, err)
	want := map[string][]string{
		"buyVoucherPOL":    {"uint256"},
		"restakePOL":       {"uint256", "uint256"},
		"unbondNonces":     {"uint256"},
		"unbonds_new":      {"uint256", "uint256"},
		"getLiquidRewards": {"uint256"},
		"balanceOf":        {"uint256"},
		"exchangeRate":     {"uint256"},
		"getTotalStake":    {"uint256", "uint256"},
	}
	for method, outs := range want {
		m, ok := a.ABI.Methods[method]
		if !assert.True(t, ok, "ValidatorShare lacks %s", method) {
			continue
		}
		var got []string
		for _, o := range m.Outputs {
			got = append(got, o.Type.String())
		}
		assert.Equal(t, outs, got, method)
	}
	assert.Equal(t, "shares", a.ABI.Methods["unbonds_new"].Outputs[0].Name)
	assert.Equal(t, "withdrawEpoch", a.ABI.Methods["unbonds_new"].Outputs[1].Name)
	assert.Equal(t, "unbonds_new(address,uint256)", a.ABI.Methods["unbonds_new"].Sig)
	sm, err := Artifact(ContractStakeManager)
	require.NoError(t, err)
	for _, sig := range []string{"epoch()", "withdrawalDelay()", "currentEpoch()"} {
		_, err := sm.ABI.MethodById(crypto.Keccak256([]byte(sig))[:4])
		assert.NoError(t, err, "StakeManager lacks %s", sig)
	}
	tok, err := Artifact(ContractToken)
	require.NoError(t, err)
	assert.Equal(t, "uint8", tok.ABI.Methods["decimals"].Outputs[0].Type.String())
}

// TestArtifactsAreReproducible compiles contracts/ again with the pinned solc (installed into
// the user cache on first run) and compares with the committed artifacts byte for byte.
func TestArtifactsAreReproducible(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	require.NoError(t, solc.Compile(ctx, "", "contracts", out))
	fresh, err := filepath.Glob(filepath.Join(out, "*.json"))
	require.NoError(t, err)
	committed, err := filepath.Glob(filepath.Join("artifacts", "*.json"))
	require.NoError(t, err)
	var freshNames, committedNames []string
	for _, f := range fresh {
		freshNames = append(freshNames, filepath.Base(f))
	}
	for _, f := range committed {
		committedNames = append(committedNames, filepath.Base(f))
	}
	require.Equal(t, committedNames, freshNames, "artifact files (run go generate ./harness/sandbox/evmchain)")
	for _, name := range committedNames {
		want, err := os.ReadFile(filepath.Join("artifacts", name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		assert.True(t, string(want) == string(got), "%s differs from a fresh compile (run go generate ./harness/sandbox/evmchain)", name)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}
