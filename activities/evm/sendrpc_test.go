package evm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// rpcAnswer is one answer of the fake JSON-RPC node to eth_sendRawTransaction: an HTTP status
// other than 200, a JSON-RPC error, or a result.
type rpcAnswer struct {
	status  int
	code    int
	message string
	result  string
}

// fakeNode is a JSON-RPC server serving chain id 1337 and answering eth_sendRawTransaction with
// answer(n) for the n-th send (from 1); it records the params sent.
type fakeNode struct {
	mu     sync.Mutex
	sent   []string
	answer func(n int, hash string) rpcAnswer
}

func (f *fakeNode) sends() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent...)
}

// useFakeNode points h's network "dev" at a chain/evm Network over a fake JSON-RPC node.
func useFakeNode(t *testing.T, h *harness, answer func(n int, hash string) rpcAnswer) *fakeNode {
	t.Helper()
	f := &fakeNode{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []string        `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "eth_chainId":
			reply["result"] = "0x539"
		case "eth_sendRawTransaction":
			f.mu.Lock()
			f.sent = append(f.sent, req.Params[0])
			n := len(f.sent)
			f.mu.Unlock()
			var tx types.Transaction
			_ = tx.UnmarshalBinary(hexutil.MustDecode(req.Params[0]))
			a := f.answer(n, tx.Hash().Hex())
			if a.status != 0 {
				http.Error(w, http.StatusText(a.status), a.status)
				return
			}
			if a.message != "" {
				reply["error"] = map[string]any{"code": a.code, "message": a.message}
			} else {
				reply["result"] = a.result
			}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
	}))
	t.Cleanup(srv.Close)
	c, err := evmchain.Dial(context.Background(), srv.URL)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	n := h.a.Networks["dev"]
	n.Chain = evmchain.NewNetwork("dev", 1337, c, evmchain.NetworkOptions{Retry: time.Nanosecond}) // re-proven at once after a failure
	h.a.Networks["dev"] = n
	return f
}

// TestSendRPCClassification runs a node's answers to eth_sendRawTransaction, over HTTP, through
// chain/evm's Network into EVMSendRPC and checks how each is classified; the bytes sent are the
// signed bytes, unchanged.
func TestSendRPCClassification(t *testing.T) {
	refused := func(msg string) func(int, string) rpcAnswer {
		return func(int, string) rpcAnswer { return rpcAnswer{code: -32000, message: msg} }
	}
	tests := []struct {
		name      string
		answer    func(n int, hash string) rpcAnswer
		wantType  string
		retryable bool
		wantMsg   string
	}{
		{name: "sent, the bytes' hash answered", answer: func(_ int, h string) rpcAnswer { return rpcAnswer{result: h} }},
		{name: "another hash answered", answer: func(int, string) rpcAnswer { return rpcAnswer{result: otherHash.Hex()} },
			wantType: ErrWrongHash, wantMsg: otherHash.Hex()},
		{name: "already known", answer: refused("already known"), wantType: activities.ErrBroadcastUncertain},
		{name: "nonce too low", answer: refused("nonce too low: address 0x01, tx: 3 state: 4"), wantType: activities.ErrBroadcastUncertain},
		{name: "insufficient funds", answer: refused("insufficient funds for gas * price + value: balance 0, tx cost 180000000000000"),
			wantType: activities.ErrTransactionRejected, wantMsg: "insufficient funds"},
		{name: "HTTP 502", answer: func(int, string) rpcAnswer { return rpcAnswer{status: http.StatusBadGateway} },
			wantType: activities.ErrChainUnavailable, retryable: true},
		{name: "HTTP 429", answer: func(int, string) rpcAnswer { return rpcAnswer{status: http.StatusTooManyRequests} },
			wantType: activities.ErrChainUnavailable, retryable: true},
		{name: "provider rate limit", answer: func(int, string) rpcAnswer { return rpcAnswer{code: -32005, message: "limit exceeded"} },
			wantType: activities.ErrChainUnavailable, retryable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, signerevm.Policy{})
			node := useFakeNode(t, h, tt.answer)
			want, signed := signedTx(t, h)
			v, err := h.env.ExecuteActivity(h.a.EVMSendRPC, BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: want.Hash().Hex(), SignedTransaction: signed})
			assert.Equal(t, []string{signed}, node.sends(), "the signed bytes, unchanged, once")
			if tt.wantType == "" {
				require.NoError(t, err)
				var r BroadcastResult
				require.NoError(t, v.Get(&r))
				assert.Equal(t, want.Hash().Hex(), r.Hash)
				return
			}
			typ, nonRetryable := appErr(t, err)
			assert.Equal(t, tt.wantType, typ)
			assert.Equal(t, tt.retryable, !nonRetryable)
			if tt.wantMsg != "" {
				assert.Contains(t, err.Error(), tt.wantMsg)
			}
		})
	}
}

// TestSendRPCRefusedAtRetryIsUncertain: the first send fails with a 503 (its answer lost, it may
// have reached the node), the re-send of the same bytes is refused: uncertain, for the chain to
// decide, not a rejected transaction; not retried after the refusal.
func TestSendRPCRefusedAtRetryIsUncertain(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	node := useFakeNode(t, h, func(n int, _ string) rpcAnswer {
		if n == 1 {
			return rpcAnswer{status: http.StatusServiceUnavailable}
		}
		return rpcAnswer{code: -32000, message: "insufficient funds for gas * price + value"}
	})
	tx, signed := signedTx(t, h)
	in := BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: tx.Hash().Hex(), SignedTransaction: signed, Chain: "eigenlayer"}
	wf := func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Millisecond, MaximumAttempts: 5, NonRetryableErrorTypes: activities.NonRetryable}})
		return workflow.ExecuteActivity(ctx, h.a.EVMSendRPC, in).Get(ctx, nil)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(h.a)
	env.RegisterWorkflow(wf)
	env.ExecuteWorkflow(wf)
	require.True(t, env.IsWorkflowCompleted())
	typ, nonRetryable := appErr(t, env.GetWorkflowError())
	assert.Equal(t, activities.ErrBroadcastUncertain, typ)
	assert.True(t, nonRetryable)
	assert.Contains(t, env.GetWorkflowError().Error(), "attempt 2")
	assert.Equal(t, []string{signed, signed}, node.sends(), "the same bytes twice, not retried after the refusal")
}

// TestSendRPCRefusesBadInput: bytes that do not hash to the step's hash, or are for another
// chain, are not sent.
func TestSendRPCRefusesBadInput(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	tx, signed := signedTx(t, h)
	_, err := h.env.ExecuteActivity(h.a.EVMSendRPC, BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: otherHash.Hex(), SignedTransaction: signed})
	typ, _ := appErr(t, err)
	assert.Equal(t, activities.ErrInvalidInput, typ)

	h2 := newHarness(t, signerevm.Policy{ChainID: 1})
	h2.chain = h.chain
	n := h2.a.Networks["dev"]
	n.Chain = h.chain
	h2.a.Networks["dev"] = n
	_, err = h2.env.ExecuteActivity(h2.a.EVMSendRPC, BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: tx.Hash().Hex(), SignedTransaction: signed})
	typ, _ = appErr(t, err)
	assert.Equal(t, activities.ErrInvalidInput, typ)
	assert.Contains(t, err.Error(), "chain id 1337")
	assert.Empty(t, h.chain.RawSends())
	assert.Zero(t, h.svc.sends(), "nothing through endpoint 4 either")
}

// TestConfirmResendsThroughRPC: with ResendRPC, Confirm re-sends the newest bytes through the
// worker's RPC, never through endpoint 4.
func TestConfirmResendsThroughRPC(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.a.ResendEvery = time.Millisecond
	h.chain.NonceState = func() *evmchain.Nonces { return &evmchain.Nonces{Latest: 5, Pending: 5, Finalized: 5} }
	in := confirmInput(h)
	in.ReplaceAfter = 30 * time.Millisecond
	in.ResendRPC = true
	r, err := runConfirm(t, h, in)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeReplace, r.Outcome)
	sent := h.chain.RawSends()
	require.NotEmpty(t, sent, "re-sent through the RPC")
	for _, s := range sent {
		assert.Equal(t, strings.ToLower(in.SignedTransaction), s, "only the newest build's bytes")
	}
	assert.Zero(t, h.svc.sends(), "nothing through endpoint 4")
}

// broadcastCounts is a metrics handler counting MetricBroadcasts by chain/outcome/reason.
type broadcastCounts struct {
	client.MetricsHandler
	mu     *sync.Mutex
	tags   map[string]string
	counts map[string]int64
}

func newBroadcastCounts() *broadcastCounts {
	return &broadcastCounts{MetricsHandler: client.MetricsNopHandler, mu: &sync.Mutex{}, counts: map[string]int64{}}
}

func (b *broadcastCounts) WithTags(tags map[string]string) client.MetricsHandler {
	merged := map[string]string{}
	for k, v := range b.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return &broadcastCounts{MetricsHandler: b.MetricsHandler, mu: b.mu, tags: merged, counts: b.counts}
}

func (b *broadcastCounts) Counter(name string) client.MetricsCounter {
	if name != activities.MetricBroadcasts {
		return b.MetricsHandler.Counter(name)
	}
	key := b.tags[activities.LabelChain] + "/" + b.tags[activities.LabelNetwork] + "/" + b.tags[activities.LabelOutcome] + "/" + b.tags[activities.LabelReason]
	return counterFunc(func(n int64) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.counts[key] += n
	})
}

type counterFunc func(int64)

func (f counterFunc) Inc(n int64) { f(n) }

// TestSendRPCRecordsBroadcastMetric: each send is counted under the chain it names, its network,
// outcome and reason.
func TestSendRPCRecordsBroadcastMetric(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	counts := newBroadcastCounts()
	var suite testsuite.WorkflowTestSuite
	suite.SetMetricsHandler(counts)
	h.env = suite.NewTestActivityEnvironment()
	h.env.RegisterActivity(h.a)
	tx, signed := signedTx(t, h)
	in := BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: tx.Hash().Hex(), SignedTransaction: signed, Chain: "eigenlayer"}
	_, err := h.env.ExecuteActivity(h.a.EVMSendRPC, in)
	require.NoError(t, err)
	h.chain.SendErr = &evmchain.RPCError{Method: "eth_sendRawTransaction", Transient: true, Err: rpcRefusalErr("insufficient funds for gas * price + value")}
	_, err = h.env.ExecuteActivity(h.a.EVMSendRPC, in)
	require.Error(t, err)
	in.Chain = ""
	h.chain.SendErr = nil
	_, err = h.env.ExecuteActivity(h.a.EVMSendRPC, in)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{
		"eigenlayer/dev/sent/none":        1,
		"eigenlayer/dev/refused/rejected": 1,
		"polygon/dev/sent/none":           1,
	}, counts.counts)
}

// rpcRefusalErr is a node's JSON-RPC error answer (code -32000), as go-ethereum's rpc.Error.
type rpcRefusalErr string

func (e rpcRefusalErr) Error() string  { return string(e) }
func (e rpcRefusalErr) ErrorCode() int { return -32000 }
