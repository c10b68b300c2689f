package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
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
	"github.com/stakeflow/stakeflow/approval"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	"github.com/stakeflow/stakeflow/chain/rpcproof"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// evmApprovers are approvers as the worker's --approvers gives them.
var evmApprovers = []approval.Approver{{Name: "bob", PublicKey: make([]byte, 32), Fingerprint: "SHA256:x"}}

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
		{name: "the worker's approvers travel with the decision", policy: Policy{ApprovalThresholdWei: big.NewInt(10), Approvers: evmApprovers},
			in: func(h *harness) PolicyInput {
				return PolicyInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "10"}
			}, wantApprovals: 1, wantOne: 10},
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
			assert.Equal(t, tt.policy.Approvers, d.Approvers)
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
		{name: "used by another transaction the node can no longer name", latest: 6,
			consumed: &evmchain.NonceStatus{Use: evmchain.NonceConsumedByOther},
			wantErr:  []string{"nonce 5 of", "no longer holds the state to name it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, signerevm.Policy{})
			h.chain.NonceState = func() *evmchain.Nonces { return &evmchain.Nonces{Latest: tt.latest, Pending: tt.latest} }
			h.chain.Txs = tt.txs
			if tt.consumed != nil {
				h.chain.Consumed = func(common.Hash) *evmchain.NonceStatus { return tt.consumed }
			}
			v, err := h.env.ExecuteActivity(h.a.EVMCheckFresh, FreshInput{Network: "dev", Staker: h.staker.Hex(), Nonce: 5,
				Hashes: []string{ourHash.Hex(), ourNewer.Hex()}})
			if tt.wantErr != nil {
				typ, nonRetryable := appErr(t, err)
				assert.Equal(t, lease.ErrNonceConflict, typ)
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
		// A refusal goes through the worker's RPC (TestBroadcastRefusalIsCheckedOnTheRPC), which
		// here takes the bytes: sent, whatever the service said.
		{name: "nonce too low, the RPC takes the bytes", answer: rejected("nonce too low: next nonce 4, tx nonce 3")},
		{name: "already known, the RPC takes the bytes", answer: rejected("already known")},
		{name: "insufficient funds, the RPC takes the bytes", answer: rejected("insufficient funds for gas * price + value")},
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
			if status, _, _ := tt.answer(want.Hash().Hex()); status >= 400 && status < 500 && status != 429 {
				assert.Equal(t, []string{signed}, h.chain.RawSends(), "the refused bytes, unchanged, through the worker's RPC")
			} else {
				assert.Empty(t, h.chain.RawSends(), "nothing through the worker's RPC")
			}
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

// TestRequestLease: the EVM lease of (network, address) is signalled with the request and
// started with its chain, network and address on the worker's task queue; a worker without a task
// queue or an unknown network is refused.
func TestRequestLease(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	st := &fakeStarter{}
	h.a.Temporal, h.a.TaskQueue = st, "stakeflow"
	req := lease.Request{Network: "dev", Address: h.staker.Hex(), WorkflowID: "op-1", RunID: "run-1"}
	_, err := h.env.ExecuteActivity(h.a.EVMRequestLease, req)
	require.NoError(t, err)
	assert.Equal(t, "nonce-lease/evm/dev/"+strings.ToLower(h.staker.Hex()), st.id)
	assert.Equal(t, st.id, st.opts.ID)
	assert.Equal(t, "stakeflow", st.opts.TaskQueue)
	assert.Equal(t, "acquire", st.signal)
	want := req
	want.Chain = lease.EVM
	assert.Equal(t, want, st.arg)
	assert.Equal(t, "NonceLeaseWorkflow", st.wf)
	assert.Equal(t, []any{lease.State{Chain: lease.EVM, Network: "dev", Address: h.staker.Hex()}}, st.args)

	h.a.TaskQueue = ""
	_, err = h.env.ExecuteActivity(h.a.EVMRequestLease, req)
	typ, _ := appErr(t, err)
	assert.Equal(t, activities.ErrInvalidInput, typ)

	h.a.TaskQueue = "stakeflow"
	req.Network = "mainnet"
	_, err = h.env.ExecuteActivity(h.a.EVMRequestLease, req)
	typ, _ = appErr(t, err)
	assert.Equal(t, activities.ErrInvalidInput, typ)
}

// refusedByService is endpoint 4's 400 for bytes it may well have forwarded: a hostile service.
var refusedByService = &apiclient.APIError{Method: http.MethodPost, Path: "/api/v1/polygon/transaction/send", StatusCode: 400,
	Name: "TransactionRejectedException", Message: "Rejected: forwarded, then refused"}

// nodeRefusal is the worker's node refusing eth_sendRawTransaction with msg, as chain/evm returns it.
func nodeRefusal(msg string) error {
	return &evmchain.RPCError{Method: "eth_sendRawTransaction", Transient: true, Err: rpcRefusalErr(msg)}
}

// TestBroadcastRefusalIsCheckedOnTheRPC: endpoint 4 answering 400 is not trusted alone. The same
// signed bytes go through the worker's RPC, whose answer decides: sent (taken, known, in the pool,
// landed), can never land (nonce consumed at final depth by another, identified call; invalid
// signature or sender; intrinsically invalid): ErrTransactionRejected, uncertain otherwise
// (ErrBroadcastUncertain: the chain decides), retried while the RPC gives no answer. Every error
// names what the service said and what the RPC said.
func TestBroadcastRefusalIsCheckedOnTheRPC(t *testing.T) {
	const finalBlock = 40
	byOther := func(other common.Hash) func(common.Hash) *evmchain.NonceStatus {
		return func(common.Hash) *evmchain.NonceStatus {
			return &evmchain.NonceStatus{Use: evmchain.NonceConsumedByOther, FinalizedBlock: finalBlock, FinalizedNonce: 4, Other: other}
		}
	}
	// holding answers a lookup of hash with tx at state.
	holding := func(tx *types.Transaction, state evmchain.TxState) func() *evmchain.TxLookup {
		return func() *evmchain.TxLookup { return &evmchain.TxLookup{State: state, Tx: tx, BlockNumber: 30} }
	}
	tests := []struct {
		name string
		// setup scripts the worker's node for h, whose signed bytes are ours.
		setup     func(h *harness, ours *types.Transaction)
		wantType  string // "" for sent
		retryable bool
		wantMsg   []string
	}{
		{name: "the RPC takes the bytes: sent", setup: func(*harness, *types.Transaction) {}},
		{name: "already known: sent", setup: func(h *harness, _ *types.Transaction) { h.chain.SendErr = nodeRefusal("already known") }},
		{name: "replacement underpriced with our own bytes in the pool: sent", setup: func(h *harness, ours *types.Transaction) {
			h.chain.SendErr = nodeRefusal("replacement transaction underpriced")
			h.chain.Txs = map[common.Hash]func() *evmchain.TxLookup{ours.Hash(): holding(ours, evmchain.TxPending)}
		}},
		{name: "replacement underpriced, another transaction in the pool: uncertain", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("replacement transaction underpriced")
		}, wantType: activities.ErrBroadcastUncertain, wantMsg: []string{"replacement transaction underpriced", "does not hold these bytes"}},
		{name: "nonce too low, consumed at final depth by our bytes: sent", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("nonce too low: address x, tx: 3 state: 4")
			h.chain.Consumed = func(common.Hash) *evmchain.NonceStatus {
				return &evmchain.NonceStatus{Use: evmchain.NonceConsumedByTx, FinalizedBlock: finalBlock, FinalizedNonce: 4}
			}
		}},
		{name: "nonce too low, consumed at final depth by another identified call: rejected", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("nonce too low: address x, tx: 3 state: 4")
			self := h.staker
			stranger := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: 3, GasTipCap: gweis(2), GasFeeCap: gweis(9), Gas: 21_000, To: &self, Value: big.NewInt(1)})
			h.chain.Consumed = byOther(otherHash)
			h.chain.Txs = map[common.Hash]func() *evmchain.TxLookup{otherHash: holding(stranger, evmchain.TxMined)}
		}, wantType: activities.ErrTransactionRejected, wantMsg: []string{"nonce too low", "finalized block 40", "transaction " + otherHash.Hex(), "another call"}},
		{name: "nonce too low, consumed at final depth by the same call (an earlier build): uncertain", setup: func(h *harness, ours *types.Transaction) {
			h.chain.SendErr = nodeRefusal("nonce too low: address x, tx: 3 state: 4")
			earlier := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: 3, GasTipCap: gweis(1), GasFeeCap: gweis(2), Gas: 60_000, To: ours.To(), Value: new(big.Int), Data: ours.Data()})
			h.chain.Consumed = byOther(otherHash)
			h.chain.Txs = map[common.Hash]func() *evmchain.TxLookup{otherHash: holding(earlier, evmchain.TxMined)}
		}, wantType: activities.ErrBroadcastUncertain, wantMsg: []string{"nonce too low", otherHash.Hex(), "the same call under the same nonce"}},
		{name: "nonce too low, consumed by a transaction not identified: uncertain", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("nonce too low: address x, tx: 3 state: 4")
			h.chain.Consumed = byOther(common.Hash{})
		}, wantType: activities.ErrBroadcastUncertain, wantMsg: []string{"nonce too low", "could not identify"}},
		{name: "nonce too low, not at final depth yet: uncertain", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("nonce too low: address x, tx: 3 state: 4")
			h.chain.Consumed = func(common.Hash) *evmchain.NonceStatus {
				return &evmchain.NonceStatus{Use: evmchain.NonceNotConsumed, FinalizedBlock: finalBlock, FinalizedNonce: 3}
			}
		}, wantType: activities.ErrBroadcastUncertain, wantMsg: []string{"nonce too low", "not at finalized depth yet"}},
		{name: "invalid sender: rejected", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("invalid sender: invalid chain id for signer")
		}, wantType: activities.ErrTransactionRejected, wantMsg: []string{"invalid sender", "signature or sender is invalid"}},
		{name: "invalid signature values: rejected", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("invalid transaction v, r, s values")
		}, wantType: activities.ErrTransactionRejected, wantMsg: []string{"invalid transaction v, r, s values"}},
		{name: "intrinsic gas too low: rejected", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("intrinsic gas too low: gas 21000, minimum needed 53000")
		}, wantType: activities.ErrTransactionRejected, wantMsg: []string{"intrinsic gas too low", "invalid in themselves"}},
		{name: "tip above the fee cap: rejected", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("max priority fee per gas higher than max fee per gas: address x, maxPriorityFeePerGas: 3, maxFeePerGas: 2")
		}, wantType: activities.ErrTransactionRejected, wantMsg: []string{"max priority fee per gas higher than max fee per gas"}},
		{name: "insufficient funds: uncertain (the balance may change)", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("insufficient funds for gas * price + value: balance 0, tx cost 180000000000000")
		}, wantType: activities.ErrBroadcastUncertain, wantMsg: []string{"insufficient funds", "does not prove they cannot land"}},
		{name: "fee cap below the base fee: uncertain (the base fee moves)", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = nodeRefusal("max fee per gas less than block base fee: address x, maxFeePerGas: 3000000000, baseFee: 4000000000")
		}, wantType: activities.ErrBroadcastUncertain, wantMsg: []string{"less than block base fee"}},
		{name: "the node answers another hash: uncertain", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = &evmchain.RPCError{Method: "eth_sendRawTransaction", Err: fmt.Errorf("%w: sent a, answered b", evmchain.ErrHashMismatch)}
		}, wantType: activities.ErrBroadcastUncertain, wantMsg: []string{"answered for other bytes"}},
		{name: "the RPC cannot be reached: retried", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = &evmchain.RPCError{Method: "eth_sendRawTransaction", Transient: true, Err: errors.New("dial tcp 127.0.0.1:8545: connection refused")}
		}, wantType: activities.ErrChainUnavailable, retryable: true, wantMsg: []string{"could not be asked", "connection refused"}},
		{name: "the RPC rate-limits: retried", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = &evmchain.RPCError{Method: "eth_sendRawTransaction", Transient: true, Err: rpcLimitErr("limit exceeded")}
		}, wantType: activities.ErrChainUnavailable, retryable: true, wantMsg: []string{"could not be asked", "limit exceeded"}},
		{name: "the RPC is not proven to serve the network: retried", setup: func(h *harness, _ *types.Transaction) {
			h.chain.SendErr = &rpcproof.UnverifiedError{Network: "dev", Expected: "1337", Reason: "not read yet"}
		}, wantType: activities.ErrChainUnverified, retryable: true, wantMsg: []string{"could not be asked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, signerevm.Policy{})
			ours, signed := signedTx(t, h)
			tt.setup(h, ours)
			h.svc.answer = func(string) ([]byte, error) { return nil, refusedByService }
			v, err := h.env.ExecuteActivity(h.a.EVMBroadcast, BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: ours.Hash().Hex(), SignedTransaction: signed})
			assert.Equal(t, 1, h.svc.sends())
			assert.Equal(t, []string{signed}, h.chain.RawSends(), "the refused bytes, unchanged, once through the worker's RPC")
			if tt.wantType == "" {
				require.NoError(t, err)
				var r BroadcastResult
				require.NoError(t, v.Get(&r))
				assert.Equal(t, ours.Hash().Hex(), r.Hash)
				return
			}
			typ, nonRetryable := appErr(t, err)
			assert.Equal(t, tt.wantType, typ, "%v", err)
			assert.Equal(t, tt.retryable, !nonRetryable)
			// What the service said, and what the RPC said.
			assert.Contains(t, err.Error(), "the service refused it")
			assert.Contains(t, err.Error(), "Rejected: forwarded, then refused")
			for _, w := range tt.wantMsg {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestBroadcastThrottledIsNotCheckedOnTheRPC: answers that are not about the bytes (401, 403,
// 429, 5xx) are the service's trouble, classified as before (never a rejected transaction);
// nothing goes through the worker's RPC.
func TestBroadcastThrottledIsNotCheckedOnTheRPC(t *testing.T) {
	for _, status := range []int{401, 403, 429, 500, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			h := newHarness(t, signerevm.Policy{})
			ours, signed := signedTx(t, h)
			h.svc.answer = func(string) ([]byte, error) {
				return nil, &apiclient.APIError{Method: http.MethodPost, Path: "/api/v1/polygon/transaction/send", StatusCode: status, Name: "X", Message: "busy"}
			}
			_, err := h.env.ExecuteActivity(h.a.EVMBroadcast, BroadcastInput{Network: "dev", Staker: h.staker.Hex(), Hash: ours.Hash().Hex(), SignedTransaction: signed})
			typ, _ := appErr(t, err)
			assert.NotEqual(t, activities.ErrTransactionRejected, typ, "never a proof that the bytes cannot land: %v", err)
			assert.Empty(t, h.chain.RawSends())
		})
	}
}

// rpcLimitErr is a provider's rate-limit answer (JSON-RPC code -32005).
type rpcLimitErr string

func (e rpcLimitErr) Error() string  { return string(e) }
func (e rpcLimitErr) ErrorCode() int { return codeLimitExceeded }
