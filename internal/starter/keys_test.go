package starter

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mr-tron/base58"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	celDelegator = "celestia1pkptre7fdkl6gfrzlesjjvhxhlc3r4gm2ukn2h"
	celValidator = "celestiavaloper1u3drplq4vr90nnwz0tvnrhetc82heq8halazeh"
)

func TestKeysImportRefusesAnotherChain(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"keys other chain", []string{"keys", "import", "--chain", "solana", "--dir", "x", "--passphrase-file", "y"}, "want celestia"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.args, &bytes.Buffer{}, noDial(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseUtia(t *testing.T) {
	// Expected values by hand: 1 TIA = 10^6 utia.
	for tia, want := range map[string]string{"1": "1000000", "0.5": "500000", "2.000001": "2000001", "0.000001": "1"} {
		got, err := ParseUtia("", tia)
		require.NoError(t, err)
		assert.Equal(t, want, got, tia)
	}
	got, err := ParseUtia("2000001", "")
	require.NoError(t, err)
	assert.Equal(t, "2000001", got)
}

// The key cosmjs derives from its faucet mnemonic (cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6)
// is imported under the celestia prefix; the mnemonic appears in neither the output nor the file.
func TestKeysImportCelestia(t *testing.T) {
	mnemonic := "economy stock theory fatal elder harbor betray wasp final emotion task crumble siren bottom lizard educate guess current outdoor pair theory focus wife stone"
	dir := t.TempDir()
	pass := filepath.Join(t.TempDir(), "pass")
	require.NoError(t, os.WriteFile(pass, []byte("secret phrase\n"), 0o600))
	out := &bytes.Buffer{}
	r := &Session{out: out}
	fs := newFlagSet()
	run, err := r.keysCmd(fs, "import", bytes.NewBufferString(mnemonic+"\n"))
	require.NoError(t, err)
	require.NoError(t, fs.Parse([]string{"--chain", "celestia", "--dir", dir, "--passphrase-file", pass}))
	require.NoError(t, run(context.Background()))
	assert.Contains(t, out.String(), celDelegator)
	assert.NotContains(t, out.String(), "economy")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	raw, err := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "economy")
	assert.Equal(t, celDelegator+".json", entries[0].Name())
}

func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("test", flag.ContinueOnError) }

// TestKeysListFileKeys: keys list --solana-keys shows the keypair file's address (the base58 of
// its public half, by another library) and nothing of its private half.
func TestKeysListFileKeys(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	ints := make([]int, len(priv))
	for i, c := range priv {
		ints[i] = int(c)
	}
	js, err := json.Marshal(ints)
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "id.json")
	require.NoError(t, os.WriteFile(f, js, 0o600))
	out := &bytes.Buffer{}
	require.NoError(t, Run(context.Background(), []string{"keys", "list", "--solana-keys", f}, out, noDial(t)))
	assert.Contains(t, out.String(), base58.Encode(pub))
	assert.Contains(t, out.String(), "solana")
	assert.NotContains(t, out.String(), base58.Encode(priv.Seed()))
	assert.NotContains(t, out.String(), string(js[:20]))

	err = Run(context.Background(), []string{"keys", "list"}, &bytes.Buffer{}, noDial(t))
	var ue *UsageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "give a backend")
}
