package evm

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

func TestCheckPolicy(t *testing.T) {
	pol := func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }
	tests := []struct {
		name          string
		policy        Policy
		in            func(h *harness) PolicyInput
		wantType      string
		wantApprovals int
		wantOne       uint64
	}{
		{name: "below every threshold", policy: Policy{ApprovalThresholdWei: big.NewInt(10), DualApprovalThresholdWei: big.NewInt(20)},
			in: func(h *harness) PolicyInput {
				return PolicyInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "9"}
			}, wantApprovals: 0, wantOne: 10},
		{name: "at the threshold", policy: Policy{ApprovalThresholdWei: big.NewInt(10), DualApprovalThresholdWei: big.NewInt(20)},
			in: func(h *harness) PolicyInput {
				return PolicyInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "10"}
			}, wantApprovals: 1, wantOne: 10},
		{name: "at the dual threshold", policy: Policy{ApprovalThresholdWei: big.NewInt(10), DualApprovalThresholdWei: big.NewInt(20)},
			in: func(h *harness) PolicyInput {
				return PolicyInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "20"}
			}, wantApprovals: 2, wantOne: 10},
		{name: "thresholds beyond uint64 (100 POL) decide on the full value", policy: Policy{ApprovalThresholdWei: pol(100)},
			in: func(h *harness) PolicyInput {
				return PolicyInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: pol(150).String()}
			}, wantApprovals: 1, wantOne: 0},
		{name: "share off the allow-list", in: func(h *harness) PolicyInput {
			return PolicyInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareOff.Hex()}
		}, wantType: activities.ErrPolicy},
		{name: "no key for the staker", in: func(h *harness) PolicyInput {
			return PolicyInput{Network: "dev", Staker: shareOff.Hex(), ValidatorShare: shareA.Hex()}
		}, wantType: activities.ErrUnknownKey},
		{name: "unknown network", in: func(h *harness) PolicyInput {
			return PolicyInput{Network: "mainnet", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex()}
		}, wantType: activities.ErrInvalidInput},
		{name: "amount not decimal", in: func(h *harness) PolicyInput {
			return PolicyInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "1e18"}
		}, wantType: activities.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, signerevm.Policy{})
			h.a.Policy = tt.policy
			v, err := h.env.ExecuteActivity(h.a.EVMCheckPolicy, tt.in(h))
			if tt.wantType != "" {
				typ, nonRetryable := appErr(t, err)
				assert.Equal(t, tt.wantType, typ)
				assert.True(t, nonRetryable)
				return
			}
			require.NoError(t, err)
			var d activities.PolicyDecision
			require.NoError(t, v.Get(&d))
			assert.Equal(t, tt.wantApprovals, d.ApprovalsRequired)
			assert.Equal(t, tt.wantApprovals > 0, d.ApprovalRequired)
			assert.Equal(t, tt.wantOne, d.ApprovalThreshold)
		})
	}
}

var (
	ourHash   = common.HexToHash("0x1111111111111111111111111111111111111111111111111111111111111111")
	ourNewer  = common.HexToHash("0x2222222222222222222222222222222222222222222222222222222222222222")
	otherHash = common.HexToHash("0xbeefbeefbeefbeefbeefbeefbeefbeefbeefbeefbeefbeefbeefbeefbeefbeef")
)

func lookup(state evmchain.TxState) func() *evmchain.TxLookup {
	return func() *evmchain.TxLookup { return &evmchain.TxLookup{State: state, BlockNumber: 9} }
}

func TestCheckFresh(t *testing.T) {
	tests := []struct {
		name       string
		latest     uint64
		txs        map[common.Hash]func() *evmchain.TxLookup
		consumed   *evmchain.NonceStatus
		wantLanded string
		wantErr    []string
	}{
		{name: "next nonce is ours", latest: 5},
		{name: "gap: the chain's next nonce is below ours", latest: 3, wantErr: []string{"next nonce", "is 3, below this transaction's nonce 5", "nonces 3 to 4"}},
		{name: "an earlier build of the step holds the nonce", latest: 6,
			txs: map[common.Hash]func() *evmchain.TxLookup{ourHash: lookup(evmchain.TxMined)}, wantLanded: ourHash.Hex()},
		{name: "used by another transaction, named", latest: 6,
			consumed: &evmchain.NonceStatus{Use: evmchain.NonceConsumedByOther, Other: otherHash},
			wantErr:  []string{"nonce 5 of", "transaction " + otherHash.Hex()}},
		{name: "used by another transaction not final yet", latest: 6,
			txs:     map[common.Hash]func() *evmchain.TxLookup{ourHash: lookup(evmchain.TxPending)},
			wantErr: []string{"nonce 5 of", "not at finalized depth yet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, signerevm.Policy{})
			h.chain.nonces = func() *evmchain.Nonces { return &evmchain.Nonces{Latest: tt.latest, Pending: tt.latest} }
			h.chain.txs = tt.txs
			if tt.consumed != nil {
				h.chain.consumed = func(common.Hash) *evmchain.NonceStatus { return tt.consumed }
			}
			v, err := h.env.ExecuteActivity(h.a.EVMCheckFresh, FreshInput{Network: "dev", Staker: h.staker.Hex(), Nonce: 5,
				Hashes: []string{ourHash.Hex(), ourNewer.Hex()}})
			if tt.wantErr != nil {
				typ, nonRetryable := appErr(t, err)
				assert.Equal(t, ErrNonceConflict, typ)
				assert.True(t, nonRetryable)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			var r FreshResult
			require.NoError(t, v.Get(&r))
			assert.Equal(t, tt.wantLanded, r.LandedEarlier)
		})
	}
}

// signedTx is a signed type-2 transaction by h's staker.
func signedTx(t *testing.T, h *harness) (*types.Transaction, string) {
	t.Helper()
	to := shareA
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: 3, GasTipCap: gweis(1), GasFeeCap: gweis(3),
		Gas: 60_000, To: &to, Value: new(big.Int)}), types.NewLondonSigner(big.NewInt(1337)), h.key)
	require.NoError(t, err)
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	return tx, hexutil.Encode(raw)
}

func envelopeError(status int, name, message string) (int, string) {
	return status, fmt.Sprintf(`{"error":{"type":"client","code":100400,"name":%q,"message":%q},"result":null,"requestId":"r-1"}`, name, message)
}

// TestBroadcastClassification runs endpoint 4's answers, from an HTTP server, through the real
// apiclient and checks how each is classified.
func TestBroadcastClassification(t *testing.T) {
	ok := func(hash string) (int, string, http.Header) {
		return 200, fmt.Sprintf(`{"error":null,"result":{"transactionHash":%q},"requestId":"r-1"}`, hash), nil
	}
	rejected := func(msg string) func(string) (int, string, http.Header) {
		return func(string) (int, string, http.Header) {
			s, b := envelopeError(400, "TransactionRejectedException", "Rejected: "+msg)
			return s, b, nil
		}
	}
	tests := []struct {
		name      string
		answer    func(hash string) (int, string, http.Header)
		wantType  string
		retryable bool
		wantDelay time.Duration
		wantMsg   string
	}{
		{name: "sent, the bytes' hash answered", answer: ok},
		{name: "another hash answered", answer: func(string) (int, string, http.Header) { return ok(otherHash.Hex()) },
			wantType: ErrWrongHash, wantMsg: otherHash.Hex()},
		{name: "429 with Retry-After", answer: func(string) (int, string, http.Header) {
			s, b := envelopeError(429, "ThrottlerException", "Too Many Requests")
			return s, b, http.Header{"Retry-After": []string{"7"}}
		}, wantType: activities.ErrRateLimited, retryable: true, wantDelay: 7 * time.Second},
		{name: "500", answer: func(string) (int, string, http.Header) {
			s, b := envelopeError(500, "InternalServerErrorException", "boom")
			return s, b, nil
		}, wantType: activities.ErrServiceUnavailable, retryable: true},
		{name: "nonce too low", answer: rejected("nonce too low: next nonce 4, tx nonce 3"), wantType: activities.ErrBroadcastUncertain},
		{name: "already known", answer: rejected("already known"), wantType: activities.ErrBroadcastUncertain},
		{name: "insufficient funds", answer: rejected("insufficient funds for gas * price + value"), wantType: activities.ErrTransactionRejected,
			wantMsg: "insufficient funds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, signerevm.Policy{})
			_, signed := signedTx(t, h)
			var want types.Transaction
			require.NoError(t, want.UnmarshalBinary(hexutil.MustDecode(signed)))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				status, body, hdr := tt.answer(want.Hash().Hex())
				for k, v := range hdr {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(body))
			}))
			defer srv.Close()
			c, err := apiclient.New(srv.URL, apiclient.WithToken("worker-test-token-0123456789"))
			require.NoError(t, err)
			h.a.Service = c
			v, err := h.env.ExecuteActivity(h.a.EVMBroadcast, BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: want.Hash().Hex(), SignedTransaction: signed})
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
			if tt.wantDelay > 0 {
				var ae *temporal.ApplicationError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, tt.wantDelay, ae.NextRetryDelay())
			}
			if tt.wantMsg != "" {
				assert.Contains(t, err.Error(), tt.wantMsg)
			}
		})
	}
}

// TestBroadcastRefusesMismatchedHash: bytes that do not hash to the step's hash are not sent.
func TestBroadcastRefusesMismatchedHash(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	_, signed := signedTx(t, h)
	_, err := h.env.ExecuteActivity(h.a.EVMBroadcast, BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: otherHash.Hex(), SignedTransaction: signed})
	typ, _ := appErr(t, err)
	assert.Equal(t, activities.ErrInvalidInput, typ)
	assert.Zero(t, h.svc.sends())
}

type fakeStarter struct {
	id, signal string
	arg        any
	opts       client.StartWorkflowOptions
	wf         any
	args       []any
}

func (f *fakeStarter) SignalWithStartWorkflow(_ context.Context, id, signal string, arg any, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	f.id, f.signal, f.arg, f.opts, f.wf, f.args = id, signal, arg, opts, wf, args
	return nil, nil
}

// TestRequestLease: the sequencer of (network, address) is signalled with the request and started
// with its state on the worker's task queue.
func TestRequestLease(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	st := &fakeStarter{}
	h.a.Temporal, h.a.TaskQueue = st, "stakeflow"
	req := SequencerRequest{Network: "dev", Address: h.staker.Hex(), WorkflowID: "op-1", RunID: "run-1"}
	_, err := h.env.ExecuteActivity(h.a.EVMRequestLease, req)
	require.NoError(t, err)
	assert.Equal(t, SequencerID("dev", h.staker.Hex()), st.id)
	assert.Equal(t, st.id, st.opts.ID)
	assert.Equal(t, "stakeflow", st.opts.TaskQueue)
	assert.Equal(t, SignalAcquire, st.signal)
	assert.Equal(t, req, st.arg)
	assert.Equal(t, SequencerWorkflowType, st.wf)
	assert.Equal(t, []any{SequencerState{Network: "dev", Address: h.staker.Hex()}}, st.args)

	h.a.TaskQueue = ""
	_, err = h.env.ExecuteActivity(h.a.EVMRequestLease, req)
	typ, _ := appErr(t, err)
	assert.Equal(t, activities.ErrInvalidInput, typ)
}
