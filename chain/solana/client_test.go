package solchain

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/chain/endpoint"
)

// rpcCall is one expected JSON-RPC request and the answer to it.
type rpcCall struct {
	method string
	params string // JSON, compared semantically; "" when the request has no params
	result string // JSON result; used when errBody and status are empty
	rpcErr string // JSON-RPC error object
	status int    // HTTP status to answer with a plain-text body
}

// rpcServer answers the expected calls in order and fails the test on any other request.
func rpcServer(t *testing.T, calls ...rpcCall) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	next := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		var req struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		require.NoError(t, json.Unmarshal(body, &req), "request body %s", body)
		if !assert.Less(t, next, len(calls), "unexpected request %s", body) {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		c := calls[next]
		next++
		assert.Equal(t, "2.0", req.JSONRPC)
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, c.method, req.Method)
		if c.params == "" {
			assert.Empty(t, req.Params, "params of %s", c.method)
		} else {
			assert.JSONEq(t, c.params, string(req.Params), "params of %s", c.method)
		}
		switch {
		case c.status != 0:
			w.WriteHeader(c.status)
			_, _ = io.WriteString(w, "upstream unavailable")
		case c.rpcErr != "":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":`+c.rpcErr+`,"id":`+string(req.ID)+`}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":`+c.result+`,"id":`+string(req.ID)+`}`)
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, len(calls), next, "all expected calls made")
	})
	return srv
}

const (
	testSig       = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
	testBlockhash = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N"
)

var ctx = context.Background()

func TestSignatureStatus(t *testing.T) {
	params := `[["` + testSig + `"],{"searchTransactionHistory":true}]`
	cases := []struct {
		name   string
		result string
		want   *SignatureStatus
	}{
		{"confirmed", `{"context":{"slot":82},"value":[{"slot":72,"confirmations":10,"err":null,"status":{"Ok":null},"confirmationStatus":"confirmed"}]}`,
			&SignatureStatus{Found: true, Slot: 72, Confirmations: ptr(uint64(10)), ConfirmationStatus: "confirmed"}},
		{"finalized", `{"context":{"slot":82},"value":[{"slot":48,"confirmations":null,"err":null,"status":{"Ok":null},"confirmationStatus":"finalized"}]}`,
			&SignatureStatus{Found: true, Slot: 48, ConfirmationStatus: "finalized"}},
		{"failed", `{"context":{"slot":82},"value":[{"slot":48,"confirmations":null,"err":{"InstructionError":[0,{"Custom":1}]},"status":{"Err":{"InstructionError":[0,{"Custom":1}]}},"confirmationStatus":"finalized"}]}`,
			&SignatureStatus{Found: true, Slot: 48, ConfirmationStatus: "finalized", Err: `{"InstructionError":[0,{"Custom":1}]}`}},
		{"unknown", `{"context":{"slot":82},"value":[null]}`, &SignatureStatus{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := rpcServer(t, rpcCall{method: "getSignatureStatuses", params: params, result: tc.result})
			got, err := New(srv.URL).SignatureStatus(ctx, testSig)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("finalized helper", func(t *testing.T) {
		assert.True(t, (&SignatureStatus{Found: true, ConfirmationStatus: "finalized"}).Finalized())
		assert.False(t, (&SignatureStatus{Found: true, ConfirmationStatus: "confirmed"}).Finalized())
	})
	t.Run("bad signature", func(t *testing.T) {
		_, err := NewWithRPC(nil).SignatureStatus(ctx, "nope")
		require.ErrorIs(t, err, ErrInvalidArgument)
	})
}

func ptr[T any](v T) *T { return &v }

func TestBlockHeightAndBlockhash(t *testing.T) {
	srv := rpcServer(t,
		rpcCall{method: "getBlockHeight", params: `[{"commitment":"finalized"}]`, result: `1233`},
		rpcCall{method: "isBlockhashValid", params: `["` + testBlockhash + `",{"commitment":"processed"}]`, result: `{"context":{"slot":2483},"value":true}`},
		rpcCall{method: "isBlockhashValid", params: `["` + testBlockhash + `",{"commitment":"processed"}]`, result: `{"context":{"slot":2484},"value":false}`},
	)
	c := New(srv.URL)
	h, err := c.BlockHeight(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(1233), h)
	ok, err := c.IsBlockhashValid(ctx, testBlockhash)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = c.IsBlockhashValid(ctx, testBlockhash)
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = c.IsBlockhashValid(ctx, "0")
	require.ErrorIs(t, err, ErrInvalidArgument)
}

func TestEpochInfo(t *testing.T) {
	srv := rpcServer(t, rpcCall{method: "getEpochInfo", params: `[{"commitment":"confirmed"}]`,
		result: `{"absoluteSlot":166598,"blockHeight":166500,"epoch":27,"slotIndex":2790,"slotsInEpoch":8192,"transactionCount":22661093}`})
	got, err := New(srv.URL).EpochInfo(ctx)
	require.NoError(t, err)
	assert.Equal(t, &EpochInfo{Epoch: 27, SlotIndex: 2790, SlotsInEpoch: 8192, AbsoluteSlot: 166598, BlockHeight: 166500}, got)
	assert.Equal(t, uint64(8192-2790), got.SlotsRemaining())
}

func TestBalance(t *testing.T) {
	addr := staker.String()
	srv := rpcServer(t, rpcCall{method: "getBalance", params: `["` + addr + `",{"commitment":"confirmed"}]`, result: `{"context":{"slot":1},"value":5000000000}`})
	got, err := New(srv.URL).Balance(ctx, addr)
	require.NoError(t, err)
	assert.Equal(t, uint64(5_000_000_000), got)
	_, err = New(srv.URL).Balance(ctx, "not base58!")
	require.ErrorIs(t, err, ErrInvalidArgument)
}

func accountResult(owner solana.PublicKey, lamports uint64, data []byte) string {
	return `{"context":{"apiVersion":"2.1.0","slot":341197},"value":{"data":["` + base64.StdEncoding.EncodeToString(data) +
		`","base64"],"executable":false,"lamports":` + jsonNum(lamports) + `,"owner":"` + owner.String() +
		`","rentEpoch":18446744073709551615,"space":` + jsonNum(uint64(len(data))) + `}}`
}

func jsonNum(v uint64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func accountParams(addr string) string {
	return `["` + addr + `",{"commitment":"confirmed","encoding":"base64"}]`
}

func TestStakeAccount(t *testing.T) {
	addr := key(9).String()
	t.Run("delegated", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(addr), result: accountResult(solana.StakeProgramID, 1_002_282_880, delegatedBytes(NotDeactivating))})
		got, err := New(srv.URL).StakeAccount(ctx, addr)
		require.NoError(t, err)
		assert.Equal(t, addr, got.Address)
		assert.Equal(t, uint64(1_002_282_880), got.Lamports)
		assert.Equal(t, StateStake, got.State)
		assert.Equal(t, voter.String(), got.Stake.Delegation.Voter)
		assert.Equal(t, staker.String(), got.Meta.Staker)
	})
	t.Run("not found", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(addr), result: `{"context":{"slot":1},"value":null}`})
		_, err := New(srv.URL).StakeAccount(ctx, addr)
		require.ErrorIs(t, err, ErrAccountNotFound)
		assert.Contains(t, err.Error(), addr)
	})
	t.Run("not a stake account", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(addr), result: accountResult(solana.SystemProgramID, 5, nil)})
		_, err := New(srv.URL).StakeAccount(ctx, addr)
		require.ErrorIs(t, err, ErrNotStakeAccount)
		assert.Contains(t, err.Error(), "owned by 11111111111111111111111111111111")
	})
	t.Run("malformed", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(addr), result: accountResult(solana.StakeProgramID, 5, []byte{2, 0, 0, 0, 1})})
		_, err := New(srv.URL).StakeAccount(ctx, addr)
		require.ErrorIs(t, err, ErrMalformedStakeAccount)
	})
}

func TestStakeActivation(t *testing.T) {
	addr := key(9).String()
	epochInfo := func(epoch uint64) rpcCall {
		return rpcCall{method: "getEpochInfo", params: `[{"commitment":"confirmed"}]`,
			result: `{"absoluteSlot":1,"blockHeight":1,"epoch":` + jsonNum(epoch) + `,"slotIndex":1,"slotsInEpoch":32}`}
	}
	history := rpcCall{method: "getAccountInfo", params: accountParams(solana.SysVarStakeHistoryPubkey.String()),
		result: accountResult(sysvarOwner, 1, historyBytes(StakeHistoryEntry{Epoch: 120, Effective: 10_000_000_000, Deactivating: 2_000_000_000}))}
	stakeAcct := func(deact uint64) rpcCall {
		return rpcCall{method: "getAccountInfo", params: accountParams(addr), result: accountResult(solana.StakeProgramID, 1_002_282_880, delegatedBytes(deact))}
	}
	cases := []struct {
		name  string
		calls []rpcCall
		want  StakeActivation
	}{
		{"active, no history entries", []rpcCall{stakeAcct(NotDeactivating), epochInfo(101), {method: "getAccountInfo", params: accountParams(solana.SysVarStakeHistoryPubkey.String()), result: accountResult(sysvarOwner, 1, historyBytes())}},
			StakeActivation{ActivationActive, 1_000_000_000, 0, 101}},
		{"deactivating in its epoch", []rpcCall{stakeAcct(120), epochInfo(120), history},
			StakeActivation{ActivationDeactivating, 1_000_000_000, 0, 120}},
		// weight 1e9/2e9 of 9% of 1e10 = 450,000,000 cooled down.
		{"cooling down", []rpcCall{stakeAcct(120), epochInfo(121), history},
			StakeActivation{ActivationDeactivating, 550_000_000, 450_000_000, 121}},
		{"initialized only", []rpcCall{{method: "getAccountInfo", params: accountParams(addr), result: accountResult(solana.StakeProgramID, 1_002_282_880, (&stakeBytes{}).u32(1).meta(2_282_880, staker, withdrawer, 0, 0, solana.PublicKey{}).pad(StakeAccountSize))}, epochInfo(5)},
			StakeActivation{ActivationInactive, 0, 1_000_000_000, 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := rpcServer(t, tc.calls...)
			got, err := New(srv.URL).StakeActivation(ctx, addr)
			require.NoError(t, err)
			assert.Equal(t, &tc.want, got)
		})
	}
}

func TestRPCErrors(t *testing.T) {
	params := `[{"commitment":"finalized"}]`
	cases := []struct {
		name      string
		call      rpcCall
		transient bool
		want      string
	}{
		{"HTTP 503", rpcCall{status: http.StatusServiceUnavailable}, true, "503"},
		{"HTTP 429", rpcCall{status: http.StatusTooManyRequests}, true, "429"},
		{"HTTP 403", rpcCall{status: http.StatusForbidden}, false, "403"},
		{"node unhealthy", rpcCall{rpcErr: `{"code":-32005,"message":"Node is unhealthy","data":{"numSlotsBehind":42}}`}, true, "Node is unhealthy"},
		{"invalid params", rpcCall{rpcErr: `{"code":-32602,"message":"Invalid params"}`}, false, "Invalid params"},
		{"method not found", rpcCall{rpcErr: `{"code":-32601,"message":"Method not found"}`}, false, "Method not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.call.method, tc.call.params = "getBlockHeight", params
			srv := rpcServer(t, tc.call)
			// Hosted endpoints carry tokens in the path and query; errors must not.
			endpoint := srv.URL + "/secret-path-token?api-key=secret-query-token"
			_, err := New(endpoint).BlockHeight(ctx)
			require.Error(t, err)
			var re *RPCError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "getBlockHeight", re.Method)
			assert.Equal(t, tc.transient, IsTransient(err))
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "getBlockHeight")
			assert.NotContains(t, err.Error(), "secret-path-token")
			assert.NotContains(t, err.Error(), "secret-query-token")
		})
	}
	t.Run("network error", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		_, err := New(url + "/tok-in-path?api-key=tok-in-query").EpochInfo(ctx)
		require.Error(t, err)
		assert.True(t, IsTransient(err), "connection refused is transient: %v", err)
		assert.NotContains(t, err.Error(), "tok-in")
	})
	t.Run("canceled", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		_, err := NewWithRPC(fakeRPC{err: context.Canceled}).BlockHeight(c)
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, IsTransient(err))
	})
	t.Run("not an RPC error", func(t *testing.T) {
		assert.False(t, IsTransient(errors.New("x")))
	})
}

// fakeRPC answers every call with err.
type fakeRPC struct {
	RPC
	err error
}

func (f fakeRPC) GetBlockHeight(context.Context, rpc.CommitmentType) (uint64, error) { return 0, f.err }

func TestRedactEndpoint(t *testing.T) {
	assert.Equal(t, "https://rpc.example.com", endpoint.Short("https://user:pw@rpc.example.com/abc/?k=v"))
	assert.Equal(t, "[endpoint]", endpoint.Short("::not a url"))
	assert.False(t, strings.Contains(endpoint.Short("http://h/tok"), "tok"))
}

var sysvarOwner = solana.MustPublicKeyFromBase58("Sysvar1111111111111111111111111111111111111")
