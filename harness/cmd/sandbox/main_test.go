package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestFlagsAndEnvTwins checks that the environment fills flags not given
// and that a command-line flag wins.
func TestFlagsAndEnvTwins(t *testing.T) {
	var cfg Config
	fs := newServeFlags(&cfg, io.Discard)
	err := parse(fs, []string{"--addr", "127.0.0.1:9999"}, env(map[string]string{
		"SANDBOX_ADDR":            "127.0.0.1:1",
		"SANDBOX_SLOT_DURATION":   "50ms",
		"SANDBOX_SLOTS_PER_EPOCH": "32",
		"SANDBOX_RATE_LIMIT":      "10;w=1",
		"SANDBOX_HOSTILE":         "other-fee-payer",
		"SANDBOX_GENESIS_SEED":    "elsewhere",
	}))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9999", cfg.Addr, "the flag wins over its twin")
	assert.Equal(t, 50*time.Millisecond, cfg.SlotDuration)
	assert.EqualValues(t, 32, cfg.SlotsPerEpoch)
	assert.Equal(t, "10;w=1", cfg.RateLimit)
	assert.Equal(t, "other-fee-payer", cfg.Hostile)
	assert.Equal(t, "elsewhere", cfg.GenesisSeed)
	sc, err := cfg.sandboxConfig([]byte("s"))
	require.NoError(t, err)
	assert.Equal(t, "elsewhere", sc.Runtime.GenesisSeed)

	err = parse(newServeFlags(&cfg, io.Discard), nil, env(map[string]string{"SANDBOX_SLOTS_PER_EPOCH": "many"}))
	assert.ErrorContains(t, err, "SANDBOX_SLOTS_PER_EPOCH")
}

func TestSandboxConfig(t *testing.T) {
	cfg := Config{Faults: `{"seed":3,"endpoints":{"stake":{"next500":2}}}`, RateLimit: "5;w=1"}
	sc, err := cfg.sandboxConfig([]byte("s"))
	require.NoError(t, err)
	assert.Equal(t, 2, sc.Faults.Endpoints[sandbox.EndpointStake].Next500)
	assert.EqualValues(t, 3, sc.Faults.Seed)
	_, err = Config{Faults: `{"bogus":1}`}.sandboxConfig([]byte("s"))
	assert.Error(t, err)
	_, err = Config{RateLimit: "fast"}.sandboxConfig([]byte("s"))
	assert.Error(t, err)
}

// TestTokenCommand mints a token with the secret from a file.
func TestTokenCommand(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte("file-secret\n"), 0o600))
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"token", "--subject", "ops", "--token-secret-file", secretFile}, &out, env(nil)))
	tok := strings.TrimSpace(out.String())
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return []byte("file-secret"), nil })
	require.NoError(t, err)
	assert.Equal(t, "ops", claims.Subject)
	assert.NotNil(t, claims.ExpiresAt)

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"token", "--subject", "ops"}, &out, env(map[string]string{"SANDBOX_TOKEN_SECRET": "env-secret"})))
	_, err = jwt.Parse(strings.TrimSpace(out.String()), func(*jwt.Token) (any, error) { return []byte("env-secret"), nil })
	require.NoError(t, err)

	assert.Error(t, run(context.Background(), []string{"token"}, io.Discard, env(map[string]string{"SANDBOX_TOKEN_SECRET": "x"})), "subject is required")
	assert.Error(t, run(context.Background(), []string{"token", "--subject", "a"}, io.Discard, env(nil)), "a secret is required")
}
