package solana

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/chain/rpcproof"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
)

const (
	testnetGenesis = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"
	devnetGenesis  = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"
	newStake       = "5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1"
)

func execute[T any](t *testing.T, acts *Activities, activityName string, in any) (T, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	var out T
	v, err := env.ExecuteActivity(activityName, in)
	if err != nil {
		return out, err
	}
	require.NoError(t, v.Get(&out))
	return out, nil
}

func TestCheckFresh(t *testing.T) {
	landed := &solchain.SignatureStatus{Found: true, Slot: 4242, ConfirmationStatus: "finalized"}
	existing := map[string]*solchain.AccountInfo{newStake: {Address: newStake, Owner: "Stake11111111111111111111111111111111111111", Lamports: 2_000_000_000}}
	tests := []struct {
		name  string
		chain *fakeChain
		in    FreshInput
		want  string // "" = fresh; otherwise a part of the refusal
	}{
		{"fresh stake", &fakeChain{statuses: []*solchain.SignatureStatus{absent}},
			FreshInput{Network: "testnet", Signature: sig, NewStakeAccount: newStake}, ""},
		{"fresh unstake", &fakeChain{statuses: []*solchain.SignatureStatus{absent}, accounts: existing},
			FreshInput{Network: "testnet", Signature: sig}, ""},
		{"signature already on chain", &fakeChain{statuses: []*solchain.SignatureStatus{landed}},
			FreshInput{Network: "testnet", Signature: sig, NewStakeAccount: newStake},
			"signature " + sig + " already on chain at slot 4242 (finalized): the service served a transaction that is not new"},
		{"stake account already exists", &fakeChain{statuses: []*solchain.SignatureStatus{absent}, accounts: existing},
			FreshInput{Network: "testnet", Signature: sig, NewStakeAccount: newStake},
			"stake account " + newStake + " already exists (owner Stake11111111111111111111111111111111111111, 2000000000 lamports)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := execute[FreshResult](t, &Activities{Chains: map[string]SolanaReader{"testnet": tt.chain}}, "CheckFresh", tt.in)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, FreshResult{Signature: tt.in.Signature, NewStakeAccount: tt.in.NewStakeAccount}, res)
				return
			}
			ae := appErr(t, err)
			assert.Equal(t, activities.ErrStaleTransaction, ae.Type())
			assert.True(t, ae.NonRetryable())
			assert.Contains(t, activities.NonRetryable, activities.ErrStaleTransaction)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestCheckValidator(t *testing.T) {
	active := `{"error":null,"result":{"statuses":{"` + vote + `":"active"}}}`
	tests := []struct {
		name     string
		statuses string
		vote     *solchain.VoteAccountStatus // nil: unknown to the RPC
		want     string                      // "" = accepted; otherwise a part of the refusal
	}{
		{"healthy on both", active, &solchain.VoteAccountStatus{VoteAccount: vote, Found: true, Commission: 10, ActivatedStake: 9}, ""},
		{"the service says inactive", `{"error":null,"result":{"statuses":{"` + vote + `":"inactive"}}}`,
			&solchain.VoteAccountStatus{VoteAccount: vote, Found: true, Commission: 0}, "is inactive, not active"},
		{"delinquent on our RPC", active, &solchain.VoteAccountStatus{VoteAccount: vote, Found: true, Delinquent: true, LastVote: 77},
			"delinquent on testnet (last vote at slot 77), though the service reports it active"},
		{"unknown to our RPC", active, nil, "unknown to the worker's testnet RPC"},
		{"commission above the policy", active, &solchain.VoteAccountStatus{VoteAccount: vote, Found: true, Commission: 11},
			"charges 11% commission, above the worker's --max-commission of 10%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := service(t, 200, nil, tt.statuses)
			f := &fakeChain{votes: map[string]*solchain.VoteAccountStatus{}}
			if tt.vote != nil {
				f.votes[vote] = tt.vote
			}
			acts := &Activities{Service: c, Chains: map[string]SolanaReader{"testnet": f}, Policy: Policy{MaxCommission: 10}}
			res, err := execute[ValidatorCheckResult](t, acts, "CheckValidator", ValidatorCheckInput{Network: "testnet", VoteAccount: vote})
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, ValidatorCheckResult{VoteAccount: vote, Status: "active", Commission: 10, ActivatedStake: 9}, res)
				return
			}
			ae := appErr(t, err)
			assert.Equal(t, activities.ErrValidatorNotHealthy, ae.Type())
			assert.True(t, ae.NonRetryable())
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("our RPC unproven: retried, not refused", func(t *testing.T) {
		c, _ := service(t, 200, nil, active)
		f := &fakeChain{readErr: &rpcproof.UnverifiedError{Chain: "solana", What: "genesis hash", Network: "testnet", Expected: testnetGenesis, Served: devnetGenesis, Reason: solchain.ReasonMismatch}}
		acts := &Activities{Service: c, Chains: map[string]SolanaReader{"testnet": f}, Policy: Policy{MaxCommission: 10}}
		_, err := execute[ValidatorCheckResult](t, acts, "CheckValidator", ValidatorCheckInput{Network: "testnet", VoteAccount: vote})
		ae := appErr(t, err)
		assert.Equal(t, activities.ErrChainUnverified, ae.Type())
		assert.False(t, ae.NonRetryable())
	})
}

// TestExpiryProofNeedsAProvenReader: every read of the proof succeeds, but the reader is not
// proven to serve the network; no expiry is reported, so no rebuild can follow.
func TestExpiryProofNeedsAProvenReader(t *testing.T) {
	expiredChain := func() *fakeChain {
		return &fakeChain{statuses: []*solchain.SignatureStatus{absent}, valid: []bool{false}, heights: []uint64{100, 200}}
	}
	f := expiredChain()
	f.unverified = &rpcproof.UnverifiedError{Chain: "solana", What: "genesis hash", Network: "testnet", Expected: testnetGenesis, Served: devnetGenesis, Reason: solchain.ReasonMismatch}
	_, err := confirm(t, f)
	ae := appErr(t, err)
	assert.Equal(t, activities.ErrChainUnverified, ae.Type())
	assert.False(t, ae.NonRetryable())
	assert.Contains(t, err.Error(), "expected genesis hash "+testnetGenesis)
	assert.Contains(t, err.Error(), "served "+devnetGenesis)

	res, err := confirm(t, expiredChain())
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeCannotLand, res.Outcome, "the same reads from a proven reader are proof")
}

// rpcStub is a Solana JSON-RPC server: getGenesisHash answers genesis; every other method the
// answer scripted for it (status and body; 200 and a result when status is 0), or
// getSignatureStatuses of an unknown signature. It counts requests by method.
type rpcStub struct {
	mu      sync.Mutex
	genesis string
	answers map[string]stubAnswer
	calls   map[string]int
}

type stubAnswer struct {
	status int
	body   string // JSON result, or the whole body when status is set
	rpcErr string // JSON-RPC error object
}

func newRPCStub(t *testing.T, genesis string, answers map[string]stubAnswer) (*rpcStub, string) {
	t.Helper()
	s := &rpcStub{genesis: genesis, answers: answers, calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(body, &req))
		s.mu.Lock()
		s.calls[req.Method]++
		a, ok := s.answers[req.Method]
		s.mu.Unlock()
		switch {
		case req.Method == "getGenesisHash":
			a = stubAnswer{body: `"` + s.genesis + `"`}
		case !ok:
			a = stubAnswer{body: `{"context":{"slot":1},"value":[null]}`}
		}
		if a.status != 0 {
			w.WriteHeader(a.status)
			_, _ = io.WriteString(w, a.body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if a.rpcErr != "" {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":`+a.rpcErr+`,"id":`+string(req.ID)+`}`)
			return
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":`+a.body+`,"id":`+string(req.ID)+`}`)
	}))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func (s *rpcStub) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// TestChainErrorClassification reads through the worker's real reader (a solchain.Network over a
// JSON-RPC server) and checks the type each failure enters the workflow as.
func TestChainErrorClassification(t *testing.T) {
	tests := []struct {
		name         string
		genesis      string
		answer       *stubAnswer // of getSignatureStatuses
		wantType     string
		nonRetryable bool
		want         string
	}{
		{"provider refuses credentials (403)", testnetGenesis, &stubAnswer{status: 403, body: `{"jsonrpc":"2.0","error":{"code":-32052,"message":"API key not allowed"},"id":1}`},
			activities.ErrChainRejected, true, "Forbidden"},
		{"provider refuses credentials (401)", testnetGenesis, &stubAnswer{status: 401, body: "Unauthorized"}, activities.ErrChainRejected, true, "Unauthorized"},
		{"invalid params", testnetGenesis, &stubAnswer{rpcErr: `{"code":-32602,"message":"Invalid params: invalid type"}`}, activities.ErrChainRejected, true, "Invalid params"},
		{"method not found", testnetGenesis, &stubAnswer{rpcErr: `{"code":-32601,"message":"Method not found"}`}, activities.ErrChainRejected, true, "Method not found"},
		{"RPC down (503)", testnetGenesis, &stubAnswer{status: 503, body: "unavailable"}, activities.ErrChainUnavailable, false, "503"},
		{"node behind", testnetGenesis, &stubAnswer{rpcErr: `{"code":-32005,"message":"Node is behind by 42 slots"}`}, activities.ErrChainUnavailable, false, "Node is behind"},
		{"another network", devnetGenesis, nil, activities.ErrChainUnverified, false, "solana network testnet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answers := map[string]stubAnswer{}
			if tt.answer != nil {
				answers["getSignatureStatuses"] = *tt.answer
			}
			stub, url := newRPCStub(t, tt.genesis, answers)
			n := solchain.NewNetwork("testnet", testnetGenesis, solchain.New(url), solchain.NetworkOptions{})
			acts := &Activities{Chains: map[string]SolanaReader{"testnet": n}}
			_, err := execute[FreshResult](t, acts, "CheckFresh", FreshInput{Network: "testnet", Signature: sig})
			ae := appErr(t, err)
			assert.Equal(t, tt.wantType, ae.Type())
			assert.Equal(t, tt.nonRetryable, ae.NonRetryable())
			assert.Equal(t, tt.nonRetryable, containsType(activities.NonRetryable, tt.wantType))
			assert.Contains(t, err.Error(), tt.want)
			if tt.wantType == activities.ErrChainUnverified {
				assert.Contains(t, err.Error(), "expected genesis hash "+testnetGenesis)
				assert.Contains(t, err.Error(), "served "+devnetGenesis)
				assert.Zero(t, stub.count("getSignatureStatuses"), "nothing is read from an RPC of another network")
			}
		})
	}
}

func containsType(types []string, typ string) bool {
	for _, t := range types {
		if t == typ {
			return true
		}
	}
	return false
}

// TestConfirmThroughUnprovenRPC: Confirm against an RPC that serves another network reads nothing
// from it and reports no outcome, however expired the transaction looks there.
func TestConfirmThroughUnprovenRPC(t *testing.T) {
	stub, url := newRPCStub(t, devnetGenesis, map[string]stubAnswer{
		"isBlockhashValid": {body: `{"context":{"slot":1},"value":false}`},
		"getBlockHeight":   {body: `1000000`},
	})
	n := solchain.NewNetwork("testnet", testnetGenesis, solchain.New(url), solchain.NetworkOptions{})
	_, _, err := confirmWith(t, &Activities{Chains: map[string]SolanaReader{"testnet": n}})
	assert.Equal(t, activities.ErrChainUnverified, appErr(t, err).Type())
	for _, m := range []string{"getSignatureStatuses", "isBlockhashValid", "getBlockHeight"} {
		assert.Zero(t, stub.count(m), m)
	}
	assert.Equal(t, 1, stub.count("getGenesisHash"))
}

func TestSignCancelledIsNotARefusal(t *testing.T) {
	for _, cause := range []error{context.Canceled, context.DeadlineExceeded} {
		h := newCounting()
		var s testsuite.WorkflowTestSuite
		s.SetMetricsHandler(h)
		env := s.NewTestActivityEnvironment()
		acts := &Activities{Signer: fakeSigner{err: cause}}
		env.RegisterActivity(acts)
		_, err := env.ExecuteActivity(acts.Sign, SignInput{Intent: Intent{Operation: OpStake, Chain: "solana"}, UnsignedTransaction: "x"})
		require.Error(t, err)
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) {
			assert.NotEqual(t, activities.ErrVerificationFailed, ae.Type(), "%v", cause)
			assert.False(t, ae.NonRetryable(), "%v", cause)
		}
		assert.NotContains(t, err.Error(), "refused to sign")
		assert.Zero(t, h.total(activities.MetricSignerRefusals), "no refusal is counted")
	}
}

func TestConfirmRecordsFee(t *testing.T) {
	h := newCounting()
	var s testsuite.WorkflowTestSuite
	s.SetMetricsHandler(h)
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Chains: map[string]SolanaReader{"testnet": &fakeChain{statuses: []*solchain.SignatureStatus{failedFinalized}, fee: 5200}}}
	env.RegisterActivity(acts)
	v, err := env.ExecuteActivity(acts.Confirm, ConfirmInput{Network: "testnet", Operation: OpUnstake, Signature: sig, RecentBlockhash: hash, PollInterval: time.Millisecond})
	require.NoError(t, err)
	var res ConfirmResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, uint64(5200), res.Fee)
	labels := map[string]string{activities.LabelChain: "solana", activities.LabelNetwork: "testnet", activities.LabelOperation: "unstake"}
	assert.Equal(t, int64(5200), h.get(activities.MetricFeeLamports, labels))
	assert.Equal(t, int64(1), h.get(activities.MetricFeeTransactions, labels))
}

// counting is a metrics handler that keeps counter totals by name and labels.
type counting struct {
	mu     sync.Mutex
	counts map[string]int64
	tags   map[string]string
}

func newCounting() *counting { return &counting{counts: map[string]int64{}} }

func (c *counting) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(c.tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	return &countingView{root: c, tags: merged}
}
func (c *counting) Counter(name string) client.MetricsCounter {
	return (&countingView{root: c}).Counter(name)
}
func (c *counting) Gauge(string) client.MetricsGauge { return client.MetricsNopHandler.Gauge("") }
func (c *counting) Timer(string) client.MetricsTimer { return client.MetricsNopHandler.Timer("") }

type countingView struct {
	root *counting
	tags map[string]string
}

func (v *countingView) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(v.tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	return &countingView{root: v.root, tags: merged}
}
func (v *countingView) Counter(name string) client.MetricsCounter {
	k := metricKey(name, v.tags)
	return counterFunc(func(n int64) {
		v.root.mu.Lock()
		defer v.root.mu.Unlock()
		v.root.counts[k] += n
	})
}
func (v *countingView) Gauge(string) client.MetricsGauge { return client.MetricsNopHandler.Gauge("") }
func (v *countingView) Timer(string) client.MetricsTimer { return client.MetricsNopHandler.Timer("") }

type counterFunc func(int64)

func (f counterFunc) Inc(n int64) { f(n) }

func metricKey(name string, tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("," + k + "=" + tags[k])
	}
	return b.String()
}

// get returns the total of the counter whose labels include want (the SDK adds its own).
func (c *counting) get(name string, want map[string]string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum int64
	for k, v := range c.counts {
		parts := strings.Split(k, ",")
		if parts[0] != name {
			continue
		}
		have := map[string]string{}
		for _, p := range parts[1:] {
			kv := strings.SplitN(p, "=", 2)
			have[kv[0]] = kv[1]
		}
		match := true
		for wk, wv := range want {
			match = match && have[wk] == wv
		}
		if match {
			sum += v
		}
	}
	return sum
}

func (c *counting) total(name string) int64 { return c.get(name, nil) }

// TestRefusedResendIsUncertain: the first send fails with a 503 (its answer lost, it may have
// landed), the re-send of the same bytes is refused: the refusal is reported as uncertain, for the
// chain to decide, not as a rejected transaction.
func TestRefusedResendIsUncertain(t *testing.T) {
	var mu sync.Mutex
	sends := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sends++
		n := sends
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, errorEnvelope("ServiceUnavailableException", 0, "server", "upstream timeout"))
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, errorEnvelope("TransactionRejectedException", 100400, "client", "InstructionError: custom program error 0x0"))
	}))
	t.Cleanup(srv.Close)
	c, err := apiclient.New(srv.URL, apiclient.WithToken(tokenVal))
	require.NoError(t, err)
	acts := &Activities{Service: c}
	in := BroadcastInput{Intent: Intent{Chain: "solana", Network: "testnet", Staker: staker}, Signature: sig, SignedTransaction: "AQID"}
	wf := func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Millisecond, MaximumAttempts: 5, NonRetryableErrorTypes: activities.NonRetryable}})
		return workflow.ExecuteActivity(ctx, acts.Broadcast, in).Get(ctx, nil)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(acts)
	env.RegisterWorkflow(wf)
	env.ExecuteWorkflow(wf)
	require.True(t, env.IsWorkflowCompleted())
	ae := appErr(t, env.GetWorkflowError())
	assert.Equal(t, activities.ErrBroadcastUncertain, ae.Type())
	assert.Contains(t, ae.Error(), "attempt 2")
	assert.Equal(t, 2, sends, "not retried after the refusal")
}
