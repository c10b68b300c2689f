//go:build integration

package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
)

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
