package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
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

// syncBuffer is a goroutine-safe writer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServeStartsAndStops runs the serve command on free ports, calls the
// API, then cancels the context as SIGINT would.
func TestServeStartsAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--solana-addr", "127.0.0.1:0", "--slot-duration", "50ms", "--log-level", "error"},
			out, env(map[string]string{"SANDBOX_TOKEN_SECRET": "serve-secret"}))
	}()
	var apiURL string
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(out.String(), "\n") {
			if u, ok := strings.CutPrefix(line, "sandbox API: "); ok {
				apiURL = u
			}
		}
		return apiURL != "" && strings.Contains(out.String(), "solana RPC: http://127.0.0.1:") &&
			strings.Contains(out.String(), "solana genesis hash: "+solanart.DefaultGenesisHash)
	}, 2*time.Minute, 50*time.Millisecond)
	tok, err := sandbox.MintToken([]byte("serve-secret"), "cli", time.Minute)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, apiURL+"/api/v1/eth/staking/ssv/request", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop after cancellation")
	}
}
