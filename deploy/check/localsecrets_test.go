package check

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// base58 encodes b in the Bitcoin alphabet Solana addresses use.
func base58(b []byte) string {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	n := new(big.Int).SetBytes(b)
	var out []byte
	mod := new(big.Int)
	for n.Sign() > 0 {
		n.DivMod(n, big.NewInt(58), mod)
		out = append(out, alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

func TestBase58(t *testing.T) {
	assert.Equal(t, "11111111111111111111111111111111", base58(make([]byte, 32)), "the system program")
	assert.Equal(t, "1112", base58([]byte{0, 0, 0, 1}))
}

// runLocalSecrets runs deploy/local-secrets.sh into dir with a stand-in sandbox binary that
// mints the token, and returns its output.
func runLocalSecrets(t *testing.T, dir, stub string) string {
	t.Helper()
	cmd := exec.Command("sh", deployPath(t, "local-secrets.sh"), dir)
	cmd.Env = append(os.Environ(), "SANDBOX_BIN="+stub)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	require.NoError(t, cmd.Run(), "local-secrets.sh: %s", out.String())
	return out.String()
}

func TestLocalSecrets(t *testing.T) {
	_, err := exec.LookPath("openssl")
	require.NoError(t, err, "local-secrets.sh needs openssl")

	tmp := t.TempDir()
	// The stand-in checks it is asked for a worker token signed with the secret file, and
	// prints a token derived from that secret.
	stub := filepath.Join(tmp, "sandbox")
	require.NoError(t, os.WriteFile(stub, []byte(`#!/bin/sh
set -eu
[ "$*" = "token --subject stakeflow-worker --ttl 0" ] || { echo "unexpected arguments: $*" >&2; exit 2; }
[ -s "$SANDBOX_TOKEN_SECRET_FILE" ] || { echo "no secret file" >&2; exit 2; }
printf 'token-for-%s\n' "$(cut -c1-8 "$SANDBOX_TOKEN_SECRET_FILE")"
`), 0o755))
	dir := filepath.Join(tmp, "local-secrets")
	out := runLocalSecrets(t, dir, stub)

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the directory is private")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		info, err := e.Info()
		require.NoError(t, err)
		switch e.Name() {
		case "solana-staker.json", "payload-keyset.json", "codec-tokens":
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(),
				"%s: its readers refuse a file the group or others can read; a compose service copies it for their user", e.Name())
		case "codec-ui.env":
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "%s: compose reads it as you; it holds a token", e.Name())
		default:
			assert.Equal(t, os.FileMode(0o644), info.Mode().Perm(),
				"%s: compose bind-mounts it into a container running as another user (worker 65532, sandbox 1000), which must read it", e.Name())
		}
	}
	assert.Equal(t, []string{"codec-tokens", "codec-ui.env", "payload-keyset.json", "sandbox-token-secret", "service-token", "solana-staker.json"}, names)

	secret := strings.TrimSpace(string(readFile(t, filepath.Join(dir, "sandbox-token-secret"))))
	raw, err := hex.DecodeString(secret)
	require.NoError(t, err)
	assert.Len(t, raw, 32)
	token := strings.TrimSpace(string(readFile(t, filepath.Join(dir, "service-token"))))
	assert.Equal(t, "token-for-"+secret[:8], token)

	var nums []int
	require.NoError(t, json.Unmarshal(readFile(t, filepath.Join(dir, "solana-staker.json")), &nums))
	require.Len(t, nums, 64)
	key := make([]byte, 64)
	for i, n := range nums {
		require.True(t, n >= 0 && n <= 255, "byte %d is %d", i, n)
		key[i] = byte(n)
	}
	priv := ed25519.NewKeyFromSeed(key[:32])
	assert.Equal(t, []byte(priv.Public().(ed25519.PublicKey)), key[32:], "the public half does not belong to the seed")

	// The payload keyset: one 32-byte key, current, in the shape the codec reads.
	var keyset struct {
		Current string `json:"current"`
		Keys    []struct {
			ID  string `json:"id"`
			Key string `json:"key"`
		} `json:"keys"`
	}
	dec := json.NewDecoder(bytes.NewReader(readFile(t, filepath.Join(dir, "payload-keyset.json"))))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&keyset))
	require.Len(t, keyset.Keys, 1)
	assert.Equal(t, "k1", keyset.Current)
	assert.Equal(t, "k1", keyset.Keys[0].ID)
	aesKey, err := base64.StdEncoding.DecodeString(keyset.Keys[0].Key)
	require.NoError(t, err)
	assert.Len(t, aesKey, 32, "an AES-256 key")

	// Two tokens, hex, 32 bytes each; the UI's endpoint carries the first as its path.
	tokens := strings.Fields(string(readFile(t, filepath.Join(dir, "codec-tokens"))))
	require.Len(t, tokens, 2)
	assert.NotEqual(t, tokens[0], tokens[1])
	for _, tok := range tokens {
		b, err := hex.DecodeString(tok)
		require.NoError(t, err)
		assert.Len(t, b, 32)
		assert.NotContains(t, out, tok)
	}
	assert.Equal(t, "TEMPORAL_CODEC_ENDPOINT=http://127.0.0.1:8082/"+tokens[0]+"\n", string(readFile(t, filepath.Join(dir, "codec-ui.env"))))
	assert.NotContains(t, out, keyset.Keys[0].Key)

	address := base58(key[32:])
	assert.Contains(t, out, "staker address: "+address)
	assert.NotContains(t, out, secret)
	assert.NotContains(t, out, token)
	assert.NotContains(t, out, strings.Trim(strings.ReplaceAll(string(readFile(t, filepath.Join(dir, "solana-staker.json"))), "\n", ""), "[]")[:20])

	// A second run keeps everything.
	before := map[string][]byte{}
	for _, n := range names {
		before[n] = readFile(t, filepath.Join(dir, n))
	}
	again := runLocalSecrets(t, dir, stub)
	assert.NotContains(t, again, "created")
	assert.Contains(t, again, "staker address: "+address)
	for _, n := range names {
		assert.Equal(t, before[n], readFile(t, filepath.Join(dir, n)), "%s changed on the second run", n)
	}
}
