package signer

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keypairJSON renders key as a Solana CLI keypair file.
func keypairJSON(key []byte) []byte {
	parts := make([]string, len(key))
	for i, b := range key {
		parts[i] = fmt.Sprint(b)
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

func TestLoadSolanaKeyringFile(t *testing.T) {
	f := newFixture()
	p := writeFile(t, t.TempDir(), "staker.json", keypairJSON(f.stakerKey))
	kr, err := LoadSolanaKeyring(p)
	require.NoError(t, err)
	assert.Equal(t, []string{f.staker.String()}, kr.Addresses())
	assert.True(t, kr.Has(f.staker.String()))
	assert.False(t, kr.Has(f.stranger.String()))
	assert.False(t, kr.Has("not-an-address"))
	assert.Equal(t, 1, kr.Len())
}

func TestLoadSolanaKeyringDir(t *testing.T) {
	f := newFixture()
	dir := t.TempDir()
	writeFile(t, dir, f.staker.String()+".json", keypairJSON(f.stakerKey))
	writeFile(t, dir, "other.json", keypairJSON(f.strangerKey))
	writeFile(t, dir, "README.txt", []byte("not a key"))
	writeFile(t, dir, ".hidden.json", []byte("garbage"))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.json"), 0o700))
	kr, err := LoadSolanaKeyring(dir)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{f.staker.String(), f.stranger.String()}, kr.Addresses())

	// Keys from a directory sign.
	s := NewSolana(kr, SolanaPolicy{})
	_, err = s.Sign(context.Background(), f.tx64(t, f.staker, f.stakeInstrs()...), f.stakeIntent())
	require.NoError(t, err)
}

// TestLoadSolanaKeyringSecretVolume reads keys laid out as a Kubernetes Secret volume mounts them:
// each visible name a symbolic link into a hidden, timestamped data directory.
func TestLoadSolanaKeyringSecretVolume(t *testing.T) {
	f := newFixture()
	dir := t.TempDir()
	data := filepath.Join(dir, "..2026_11_22_00_00_00.000000001")
	require.NoError(t, os.Mkdir(data, 0o700))
	writeFile(t, data, "staker.json", keypairJSON(f.stakerKey))
	require.NoError(t, os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")))
	require.NoError(t, os.Symlink(filepath.Join("..data", "staker.json"), filepath.Join(dir, "staker.json")))
	require.NoError(t, os.Symlink("missing.json", filepath.Join(dir, "dangling.json")))
	kr, err := LoadSolanaKeyring(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{f.staker.String()}, kr.Addresses())
}

func TestLoadSolanaKeyringErrors(t *testing.T) {
	f := newFixture()
	mismatched := append(ed25519.PrivateKey(nil), f.stakerKey...)
	copy(mismatched[32:], f.strangerKey[32:])
	numbers := strings.Trim(string(keypairJSON(f.stakerKey)), "[]")
	cases := []struct {
		name    string
		file    string
		content []byte
		want    string
	}{
		{"mismatched halves", "k.json", keypairJSON(mismatched), "public half of the keypair does not match its private half"},
		{"not JSON", "k.json", []byte("{not json"), "not a JSON array of 64 numbers"},
		{"too short", "k.json", keypairJSON(f.stakerKey[:63]), "has 63 elements, want 64"},
		{"number out of range", "k.json", []byte("[300," + numbers[strings.Index(numbers, ",")+1:] + "]"), "element 0 is not an integer from 0 to 255"},
		{"negative number", "k.json", []byte("[-1," + numbers[strings.Index(numbers, ",")+1:] + "]"), "element 0 is not an integer from 0 to 255"},
		{"trailing data", "k.json", append(keypairJSON(f.stakerKey), []byte(" []")...), "trailing data"},
		{"named for another address", f.stranger.String() + ".json", keypairJSON(f.stakerKey), "named for " + f.stranger.String()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), tc.file, tc.content)
			kr, err := LoadSolanaKeyring(p)
			require.Error(t, err)
			assert.Nil(t, kr)
			assert.ErrorIs(t, err, ErrKeyLoad)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), p, "error names the file")
			assertNoKeyBytes(t, err.Error(), f.stakerKey)
			assertNoKeyBytes(t, err.Error(), f.strangerKey)
		})
	}
	t.Run("missing path", func(t *testing.T) {
		_, err := LoadSolanaKeyring(filepath.Join(t.TempDir(), "absent.json"))
		require.ErrorIs(t, err, ErrKeyLoad)
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("directory without keys", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "notes.txt", []byte("x"))
		_, err := LoadSolanaKeyring(dir)
		require.ErrorIs(t, err, ErrKeyLoad)
		assert.Contains(t, err.Error(), "holds no *.json keypair files")
	})
	t.Run("bad file in a directory", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "good.json", keypairJSON(f.stakerKey))
		bad := writeFile(t, dir, "bad.json", keypairJSON(mismatched))
		_, err := LoadSolanaKeyring(dir)
		require.ErrorIs(t, err, ErrKeyLoad)
		assert.Contains(t, err.Error(), bad)
	})
}

// assertNoKeyBytes fails if s holds key (or its seed) in any common rendering.
func assertNoKeyBytes(t *testing.T, s string, key ed25519.PrivateKey) {
	t.Helper()
	seed := key.Seed()
	forms := map[string]string{
		"hex seed":         hex.EncodeToString(seed),
		"hex key":          hex.EncodeToString(key),
		"base58 key":       base58.Encode(key),
		"base64 key":       base64.StdEncoding.EncodeToString(key),
		"base64 seed":      base64.StdEncoding.EncodeToString(seed),
		"fmt seed":         strings.Trim(fmt.Sprint(seed[:8]), "[]"),
		"json seed":        strings.Trim(string(keypairJSON(seed[:8])), "[]"),
		"fmt hex seed":     fmt.Sprintf("%x", seed[:8]),
		"go syntax seed":   strings.Trim(fmt.Sprintf("%#v", seed[:4]), "[]byte{}"),
		"solana priv key":  solana.PrivateKey(key).String(),
		"upper hex seed":   strings.ToUpper(hex.EncodeToString(seed[:8])),
		"quoted seed text": string(seed[:8]),
	}
	for name, form := range forms {
		assert.NotContains(t, s, form, "output leaks the key as %s", name)
	}
}

func TestNoKeyBytesInOutput(t *testing.T) {
	f := newFixture()
	kr := f.keyring()
	s := NewSolana(kr, SolanaPolicy{AllowedVoteAccounts: []string{f.vote.String()}})
	var outputs []string
	for _, v := range []any{kr, *kr, s, *s} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
			outputs = append(outputs, fmt.Sprintf(verb, v))
		}
		j, err := json.Marshal(v)
		require.NoError(t, err)
		outputs = append(outputs, string(j))
	}
	// Errors from every refusal path and from signing with the key.
	for _, tc := range hostileCases() {
		hs := NewSolana(kr, tc.policy)
		_, err := hs.Sign(context.Background(), tc.tx(t, f), tc.intent(f))
		require.Error(t, err)
		outputs = append(outputs, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
	}
	for _, o := range outputs {
		assertNoKeyBytes(t, o, f.stakerKey)
	}
	assert.Contains(t, fmt.Sprint(kr), f.staker.String(), "the keyring still shows its addresses")
	assert.Contains(t, fmt.Sprint(kr), redacted)
}

// TestLoadSolanaKeyringMode: a key file the group or others may access is refused, whether named
// directly, found in a directory or reached through a symbolic link; the error names the file and
// its mode, never the key.
func TestLoadSolanaKeyringMode(t *testing.T) {
	f := newFixture()
	for _, tc := range []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o600, true}, {0o400, true}, {0o700, true},
		{0o644, false}, {0o640, false}, {0o604, false}, {0o660, false}, {0o620, false}, {0o602, false}, {0o610, false}, {0o601, false},
	} {
		t.Run(fmt.Sprintf("%#o", tc.mode), func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, dir, "staker.json", keypairJSON(f.stakerKey))
			require.NoError(t, os.Chmod(p, tc.mode)) // not subject to the umask
			link := filepath.Join(t.TempDir(), "linked.json")
			require.NoError(t, os.Symlink(p, link))
			for name, path := range map[string]string{"file": p, "directory": dir, "symbolic link": link} {
				kr, err := LoadSolanaKeyring(path)
				if tc.ok {
					require.NoError(t, err, name)
					assert.Equal(t, []string{f.staker.String()}, kr.Addresses(), name)
					continue
				}
				require.ErrorIs(t, err, ErrKeyLoad, name)
				assert.Nil(t, kr, name)
				named := path
				if name == "directory" {
					named = p
				}
				assert.Contains(t, err.Error(), named, "%s: the error names the file", name)
				assert.Contains(t, err.Error(), fmt.Sprintf("mode %#o", tc.mode), name)
				assertNoKeyBytes(t, err.Error(), f.stakerKey)
			}
		})
	}
}
