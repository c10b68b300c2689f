package solchain

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// How the client classifies and names what went wrong: the edges of the retry classification, an
// endpoint never shown, a failed read never taken for a missing account, and the network proof's
// refusals naming what was served.

// TestRPCErrorBoundaries: the edges of the classification. HTTP 500 is a server failure like any
// 5xx (retried), 408 a timeout (retried), other 4xx refusals are not; of the JSON-RPC 2.0 error
// codes, the reserved request errors from -32700 (parse error) to -32600 (invalid request) are
// permanent, and codes outside that range, such as the server errors from -32000, are transient.
func TestRPCErrorBoundaries(t *testing.T) {
	params := `[{"commitment":"finalized"}]`
	cases := []struct {
		name      string
		call      rpcCall
		transient bool
	}{
		{"HTTP 500", rpcCall{status: http.StatusInternalServerError}, true},
		{"HTTP 499", rpcCall{status: 499}, false},
		{"HTTP 408", rpcCall{status: http.StatusRequestTimeout}, true},
		{"parse error -32700", rpcCall{rpcErr: `{"code":-32700,"message":"Parse error"}`}, false},
		{"-32701, below the request errors", rpcCall{rpcErr: `{"code":-32701,"message":"server defined"}`}, true},
		{"invalid request -32600", rpcCall{rpcErr: `{"code":-32600,"message":"Invalid Request"}`}, false},
		{"-32599, above the request errors", rpcCall{rpcErr: `{"code":-32599,"message":"server defined"}`}, true},
		{"server error -32000", rpcCall{rpcErr: `{"code":-32000,"message":"Server error"}`}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.call.method, tc.call.params = "getBlockHeight", params
			srv := rpcServer(t, tc.call)
			_, err := New(srv.URL).BlockHeight(ctx)
			require.Error(t, err)
			assert.Equal(t, tc.transient, IsTransient(err), "%v", err)
		})
	}
}

// TestRPCErrorHidesEndpointAsGoSpellsIt: Go's HTTP client names the URL it failed on in its
// normalised spelling (a lower-case scheme), not as the operator wrote it; the token in the path
// stays out of the error either way.
func TestRPCErrorHidesEndpointAsGoSpellsIt(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	endpoint := fmt.Sprintf("HTTP://%s/path-token-123", host)
	_, err := New(endpoint).EpochInfo(ctx)
	require.Error(t, err)
	assert.True(t, IsTransient(err), "connection refused is transient: %v", err)
	assert.NotContains(t, err.Error(), "path-token-123")
	assert.Contains(t, err.Error(), "http://"+host)
}

// TestFailedReadIsNotAMissingAccount: an RPC that fails to answer says nothing about whether an
// account or a transaction exists. The failure stays a transient RPC error, never "not found"
// (a stake account "not found" is what proves a transaction new, and a transaction "not found"
// what lets confirmation go on waiting).
func TestFailedReadIsNotAMissingAccount(t *testing.T) {
	addr := key(9).String()
	t.Run("account", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(addr), status: http.StatusServiceUnavailable})
		_, err := New(srv.URL).AccountInfo(ctx, addr)
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrAccountNotFound)
		assert.True(t, IsTransient(err), "%v", err)
	})
	t.Run("transaction", func(t *testing.T) {
		params := `["` + testSig + `",{"commitment":"finalized","encoding":"base64","maxSupportedTransactionVersion":0}]`
		srv := rpcServer(t, rpcCall{method: "getTransaction", params: params, status: http.StatusServiceUnavailable})
		_, err := New(srv.URL).TransactionFee(ctx, testSig)
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrTransactionNotFound)
		assert.True(t, IsTransient(err), "%v", err)
	})
}

// TestUnverifiedErrorNamesServedHash: the refusal of an unproven network names the genesis hash
// the RPC served, or says it has served none yet.
func TestUnverifiedErrorNamesServedHash(t *testing.T) {
	n := NewNetwork("testnet", "E", New("http://127.0.0.1:1"), NetworkOptions{})
	none := n.Refusal(NetworkStatus{Network: "testnet", Expected: "E", Reason: ReasonUnchecked}).Error()
	assert.True(t, strings.HasPrefix(none, "solana network testnet: "), none)
	assert.Contains(t, none, "expected genesis hash E, served none yet")
	other := n.Refusal(NetworkStatus{Network: "testnet", Expected: "E", Served: "S", Reason: ReasonMismatch}).Error()
	assert.Contains(t, other, "expected genesis hash E, last served S")
	assert.NotContains(t, other, "none yet")
}

// TestGenesisCheckOutcomes: a genesis check the RPC fails is recorded as such (the reason says
// the hash could not be read), while a check ended by its caller's context changes nothing.
func TestGenesisCheckOutcomes(t *testing.T) {
	t.Run("RPC failure is recorded", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getGenesisHash", status: http.StatusServiceUnavailable})
		n := NewNetwork("testnet", testnetGenesis, New(srv.URL), NetworkOptions{})
		require.ErrorIs(t, n.Verify(ctx), ErrNetworkUnverified)
		st := n.Status()
		assert.False(t, st.Verified)
		assert.True(t, strings.HasPrefix(st.Reason, ReasonCheckFail), "reason %q", st.Reason)
		assert.False(t, st.CheckedAt.IsZero())
	})
	t.Run("cancelled check changes nothing", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			t.Error("a check whose context is already cancelled reached the RPC")
		}))
		defer srv.Close()
		n := NewNetwork("testnet", testnetGenesis, New(srv.URL), NetworkOptions{})
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, n.Verify(cancelled), ErrNetworkUnverified)
		st := n.Status()
		assert.Equal(t, ReasonUnchecked, st.Reason)
		assert.True(t, st.CheckedAt.IsZero())
	})
}
