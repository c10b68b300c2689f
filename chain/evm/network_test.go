package evmchain

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/sha3"
)

// TestNetworkFailedReadWithdrawsProof: an RPC that fails as a lost or replaced node fails (HTTP
// 502) is no longer trusted until its chain id has been read again, and a node that comes back
// serving another chain is refused.
func TestNetworkFailedReadWithdrawsProof(t *testing.T) {
	var down atomic.Bool
	var chainID atomic.Value
	chainID.Store("0x539")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if down.Load() {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var result any
		switch req.Method {
		case "eth_chainId":
			result = chainID.Load()
		default:
			result = nil
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, srv.URL)
	require.NoError(t, err)
	defer c.Close()

	now := time.Unix(1_700_000_000, 0)
	n := NewNetwork("dev", 1337, c, NetworkOptions{Now: func() time.Time { return now }})
	require.NoError(t, n.Verify(ctx))

	down.Store(true)
	_, err = n.Transaction(ctx, [32]byte{1})
	require.Error(t, err)
	assert.True(t, IsTransient(err))
	st := n.Status()
	assert.False(t, st.Verified, "a 502 withdraws the proof")
	assert.Contains(t, st.Reason, ReasonRPCFailed)

	down.Store(false)
	chainID.Store("0x1")
	now = now.Add(DefaultNetworkRetry)
	_, err = n.Transaction(ctx, [32]byte{1})
	assert.ErrorIs(t, err, ErrNetworkUnverified, "the node that came back serves chain 1")
	assert.Contains(t, err.Error(), "expected chain id 1337, last served 1")

	chainID.Store("0x539")
	now = now.Add(DefaultNetworkRetry)
	l, err := n.Transaction(ctx, [32]byte{1})
	require.NoError(t, err, "re-proven inline")
	assert.Equal(t, TxAbsent, l.State)
}

// TestSendRawTransactionChecksAnsweredHash: a node answering another hash than the bytes' own
// is an error wrapping ErrHashMismatch naming both; the bytes' own hash is accepted.
func TestSendRawTransactionChecksAnsweredHash(t *testing.T) {
	raw := []byte{0x02, 0xc0}
	own := "0x" + hex.EncodeToString(sha3Keccak(raw))
	var answer atomic.Value
	answer.Store(own)
	var sent atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		var result any
		switch req.Method {
		case "eth_chainId":
			result = "0x539"
		case "eth_sendRawTransaction":
			sent.Store(string(req.Params[0]))
			result = answer.Load()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, srv.URL)
	require.NoError(t, err)
	defer c.Close()
	n := NewNetwork("dev", 1337, c, NetworkOptions{})

	require.NoError(t, n.SendRawTransaction(ctx, raw))
	assert.Equal(t, `"0x02c0"`, sent.Load(), "the bytes sent as they are")

	lie := "0x" + strings.Repeat("ab", 32)
	answer.Store(lie)
	err = n.SendRawTransaction(ctx, raw)
	require.ErrorIs(t, err, ErrHashMismatch)
	assert.Contains(t, err.Error(), own)
	assert.Contains(t, err.Error(), lie)
}

// sha3Keccak is Keccak-256 from golang.org/x/crypto, independent of go-ethereum's.
func sha3Keccak(b []byte) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	return h.Sum(nil)
}
