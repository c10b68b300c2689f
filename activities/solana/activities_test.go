package solana

import (
	"context"
	"errors"
	"fmt"
	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/approval"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/signer"
)

const (
	staker   = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	vote     = "CertusDeBmqN8ZawdkxK5kFGMwBXdudvWHYwtNgNhvLu"
	sig      = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
	hash     = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N"
	tokenVal = "test-token-value"
)

// service answers every request with one canned response and counts requests.
func service(t *testing.T, status int, header map[string]string, body string) (*apiclient.Client, *int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-request-id", "req-1")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c, err := apiclient.New(srv.URL, apiclient.WithToken(tokenVal))
	require.NoError(t, err)
	return c, &n
}

func errorEnvelope(name string, code int, typ, msg string) string {
	return fmt.Sprintf(`{"error":{"type":%q,"code":%d,"message":%q,"name":%q},"result":null,"requestId":"req-1","timestamp":"2026-11-22T00:00:00Z"}`,
		typ, code, msg, name)
}

func appErr(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	require.Error(t, err)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "want an application error, got %T %v", err, err)
	return ae
}

func TestBuildClassifiesServiceErrors(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		header       map[string]string
		body         string
		wantType     string
		nonRetryable bool
		wantDelay    time.Duration
	}{
		{"validation", 400, nil, errorEnvelope("ValidationException", 100101, "client", "amount must be an integer"), activities.ErrServiceRejected, true, 0},
		// A 401 reaches the activity only once the client has re-read its token and been refused
		// again: retried, so that a token rotated mid-operation does not fail it.
		{"no token", 401, nil, errorEnvelope("NoTokenException", 101111, "authentication", "no token"), activities.ErrServiceUnauthorized, false, 0},
		{"wrong token", 401, nil, errorEnvelope("WrongTokenException", 101109, "authentication", "bad token"), activities.ErrServiceUnauthorized, false, 0},
		{"401 without envelope", 401, nil, "Unauthorized", activities.ErrServiceUnauthorized, false, 0},
		{"forbidden", 403, nil, errorEnvelope("ForbiddenException", 0, "authentication", "not for you"), activities.ErrServiceRejected, true, 0},
		{"throttled", 429, map[string]string{"Retry-After": "7", "RateLimit-Policy": "10;w=1,100;w=60"},
			errorEnvelope("ThrottlerException", 0, "", "ThrottlerException"), activities.ErrRateLimited, false, 7 * time.Second},
		{"server error", 500, nil, errorEnvelope("GetDelegatorAutostakingDataException", 115406, "server", "boom"), activities.ErrServiceUnavailable, false, 0},
		{"unavailable with Retry-After", 503, map[string]string{"Retry-After": "11"}, errorEnvelope("ServiceUnavailableException", 0, "server", "maintenance"), activities.ErrServiceUnavailable, false, 11 * time.Second},
		{"proxy html", 502, nil, "<html>bad gateway</html>", activities.ErrServiceUnavailable, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := service(t, tt.status, tt.header, tt.body)
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			acts := &Activities{Service: c}
			env.RegisterActivity(acts)
			_, err := env.ExecuteActivity(acts.Build, Intent{Operation: OpStake, Chain: "solana", Network: "testnet", Staker: staker, Lamports: 5})
			ae := appErr(t, err)
			require.Equal(t, tt.wantType, ae.Type())
			require.Equal(t, tt.nonRetryable, ae.NonRetryable())
			require.Equal(t, tt.wantDelay, ae.NextRetryDelay())
			require.NotContains(t, err.Error(), tokenVal)
		})
	}
}

func TestBuildReturnsServiceClaims(t *testing.T) {
	c, n := service(t, 200, nil, `{"error":null,"result":{"amount":5,"stakerAddress":"`+staker+`","unsignedTransactionData":"AQID","createdAt":"2026-11-22T00:00:00Z","extraData":{"network":"testnet","feePayer":"`+staker+`","voteAccount":"`+vote+`"}}}`)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Service: c}
	env.RegisterActivity(acts)
	v, err := env.ExecuteActivity(acts.Build, Intent{Operation: OpStake, Chain: "solana", Network: "testnet", Staker: staker, Lamports: 5})
	require.NoError(t, err)
	var res BuildResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, "AQID", res.UnsignedTransaction)
	require.Equal(t, vote, res.VoteAccount)
	require.Equal(t, "req-1", res.RequestID)
	require.Equal(t, 1, *n)
}

func TestBroadcastReadsRefusals(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		wantType  string // "" = success
		processed bool
	}{
		{"sent", 200, `{"error":null,"result":{"extraData":{"transactionId":"` + sig + `","slot":12,"signerAccounts":["` + staker + `"],"createdAt":"2026-11-22T00:00:00Z"}}}`, "", false},
		{"already processed", 400, errorEnvelope("TransactionRejectedException", 100400, "client", "AlreadyProcessed: This transaction has already been processed"), "", true},
		{"blockhash", 400, errorEnvelope("TransactionRejectedException", 100400, "client", "BlockhashNotFound: Blockhash not found"), activities.ErrBlockhashExpired, false},
		{"instruction error", 400, errorEnvelope("TransactionRejectedException", 100400, "client", "InstructionError: insufficient funds"), activities.ErrTransactionRejected, false},
		{"server error", 503, errorEnvelope("ServiceUnavailable", 0, "server", "down"), activities.ErrServiceUnavailable, false},
		{"wrong token", 401, errorEnvelope("WrongTokenException", 101109, "authentication", "bad token"), activities.ErrServiceUnauthorized, false},
		// The service's request timeout and a conflict while it is busy say nothing about the
		// transaction: the same bytes are sent again.
		{"request timeout", 408, errorEnvelope("RequestTimeoutException", 0, "server", "timed out"), activities.ErrServiceUnavailable, false},
		{"conflict", 409, errorEnvelope("ConflictException", 0, "client", "busy with the same request"), activities.ErrServiceUnavailable, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := service(t, tt.status, nil, tt.body)
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			acts := &Activities{Service: c}
			env.RegisterActivity(acts)
			v, err := env.ExecuteActivity(acts.Broadcast, BroadcastInput{
				Intent: Intent{Chain: "solana", Network: "testnet", Staker: staker}, Signature: sig, SignedTransaction: "AQID"})
			if tt.wantType != "" {
				require.Equal(t, tt.wantType, appErr(t, err).Type())
				return
			}
			require.NoError(t, err)
			var res BroadcastResult
			require.NoError(t, v.Get(&res))
			require.Equal(t, sig, res.Signature)
			require.Equal(t, tt.processed, res.AlreadyProcessed)
		})
	}
}

// fakeSigner signs whatever it is given, or fails with err; allowed is its vote-account allow-list.
type fakeSigner struct {
	err     error
	allowed []string
}

func (f fakeSigner) AllowedVoteAccounts() []string { return f.allowed }

func (f fakeSigner) Sign(_ context.Context, _ string, in signer.Intent) (*signer.Signed, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &signer.Signed{Signature: sig, SignedTransaction: "signed", RecentBlockhash: hash, VoteAccount: in.VoteAccount}, nil
}

func TestSignRefusalsAreNonRetryableAndTyped(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("fee payer: %w", signer.ErrVerification), activities.ErrVerificationFailed},
		{fmt.Errorf("garbage: %w", signer.ErrDecode), activities.ErrVerificationFailed},
		{fmt.Errorf("staker: %w", signer.ErrUnknownKey), activities.ErrUnknownKey},
		{fmt.Errorf("lamports: %w", signer.ErrIntent), activities.ErrInvalidInput},
	}
	for _, tt := range tests {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestActivityEnvironment()
		acts := &Activities{Signer: fakeSigner{err: tt.err}}
		env.RegisterActivity(acts)
		_, err := env.ExecuteActivity(acts.Sign, SignInput{Intent: Intent{Operation: OpStake}, UnsignedTransaction: "x"})
		ae := appErr(t, err)
		require.Equal(t, tt.want, ae.Type())
		require.True(t, ae.NonRetryable())
		require.Contains(t, err.Error(), "refused to sign")
	}
}

type keys map[string]bool

func (k keys) Has(a string) bool { return k[a] }

// policy is the worker's policy and the signer's vote-account allow-list.
type policy struct {
	Policy
	allowed []string
}

func TestCheckPolicy(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	run := func(p policy, in Intent) (activities.PolicyDecision, error) {
		acts := &Activities{Keys: keys{staker: true}, Chains: map[string]SolanaReader{"testnet": &fakeChain{}}, Policy: p.Policy,
			Signer: fakeSigner{allowed: p.allowed}}
		env := s.NewTestActivityEnvironment()
		env.RegisterActivity(acts)
		v, err := env.ExecuteActivity(acts.CheckPolicy, in)
		if err != nil {
			return activities.PolicyDecision{}, err
		}
		var d activities.PolicyDecision
		require.NoError(t, v.Get(&d))
		return d, nil
	}
	allowList := policy{Policy{ApprovalThreshold: 100}, []string{vote}}
	stake := func(lamports uint64, voteAccount string) Intent {
		return Intent{Operation: OpStake, Network: "testnet", Staker: staker, Lamports: lamports, VoteAccount: voteAccount}
	}

	t.Run("refusals", func(t *testing.T) {
		_, err := run(allowList, Intent{Operation: OpStake, Network: "testnet", Staker: vote, Lamports: 1})
		require.Equal(t, activities.ErrUnknownKey, appErr(t, err).Type())
		_, err = run(allowList, stake(1, staker))
		require.Equal(t, activities.ErrPolicy, appErr(t, err).Type(), "a vote account off the allow-list")
		_, err = run(allowList, Intent{Operation: OpStake, Network: "mainnet-beta", Staker: staker, Lamports: 1})
		require.Equal(t, activities.ErrInvalidInput, appErr(t, err).Type())
	})

	t.Run("a stake must name its validator unless the worker has an allow-list", func(t *testing.T) {
		_, err := run(policy{}, stake(1, ""))
		ae := appErr(t, err)
		require.Equal(t, activities.ErrPolicy, ae.Type())
		require.True(t, ae.NonRetryable())
		require.Contains(t, err.Error(), "--vote-account")
		require.Contains(t, err.Error(), "--allowed-vote-accounts")
		_, err = run(policy{}, stake(1, vote))
		require.NoError(t, err, "named")
		_, err = run(allowList, stake(1, ""))
		require.NoError(t, err, "the service chooses from the allow-list")
		_, err = run(policy{}, Intent{Operation: OpUnstake, Network: "testnet", Staker: staker, Lamports: 1, StakeAccount: vote})
		require.NoError(t, err, "only stakes delegate")
	})

	t.Run("approvals", func(t *testing.T) {
		dual := policy{Policy: Policy{ApprovalThreshold: 100, DualApprovalThreshold: 1000}}
		for _, tc := range []struct {
			policy   policy
			lamports uint64
			want     activities.PolicyDecision
		}{
			{allowList, 99, activities.PolicyDecision{ApprovalThreshold: 100}},
			{allowList, 100, activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 1, ApprovalThreshold: 100}},
			{allowList, 1_000_000, activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 1, ApprovalThreshold: 100}},
			{dual, 99, activities.PolicyDecision{ApprovalThreshold: 100, DualApprovalThreshold: 1000}},
			{dual, 999, activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 1, ApprovalThreshold: 100, DualApprovalThreshold: 1000}},
			{dual, 1000, activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 2, ApprovalThreshold: 100, DualApprovalThreshold: 1000}},
			{policy{Policy: Policy{DualApprovalThreshold: 1000}}, 999, activities.PolicyDecision{DualApprovalThreshold: 1000}},
			{policy{Policy: Policy{DualApprovalThreshold: 1000}}, 1000, activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 2, DualApprovalThreshold: 1000}},
		} {
			d, err := run(tc.policy, stake(tc.lamports, vote))
			require.NoError(t, err)
			require.Equal(t, tc.want, d, "%+v at %d lamports", tc.policy, tc.lamports)
		}
	})

	t.Run("approvers", func(t *testing.T) {
		// The worker's approvers travel with every decision, so that the workflow verifies
		// signed decisions against them.
		who := []approval.Approver{{Name: "bob", PublicKey: make([]byte, 32), Fingerprint: "SHA256:x"}}
		p := allowList
		p.Approvers = who
		d, err := run(p, stake(100, vote))
		require.NoError(t, err)
		require.Equal(t, who, d.Approvers)
	})
}

func TestValidatorStatusForms(t *testing.T) {
	tests := []struct {
		statuses string
		want     string // "" = refused
	}{
		{`{"` + vote + `":"active"}`, "active"},
		{`"{\"` + vote + `\":\"active\"}"`, "active"},
		{`"active"`, "active"},
		{`["active"]`, "active"},
		{`{"` + vote + `":"delinquent"}`, ""},
		{`{"someoneElse":"active"}`, ""},
		{`"{\"` + vote + `\":\"unknown\"}"`, ""},
	}
	for _, tt := range tests {
		c, _ := service(t, 200, nil, `{"error":null,"result":{"statuses":`+tt.statuses+`}}`)
		var s testsuite.WorkflowTestSuite
		env := s.NewTestActivityEnvironment()
		acts := &Activities{Service: c, Chains: map[string]SolanaReader{"testnet": &fakeChain{votes: map[string]*solchain.VoteAccountStatus{vote: currentVote}}},
			Policy: Policy{MaxCommission: 10}}
		env.RegisterActivity(acts)
		_, err := env.ExecuteActivity(acts.CheckValidator, ValidatorCheckInput{Network: "testnet", VoteAccount: vote})
		if tt.want == "" {
			require.Equal(t, activities.ErrValidatorNotHealthy, appErr(t, err).Type(), tt.statuses)
			continue
		}
		require.NoError(t, err, tt.statuses)
	}
}

// fakeChain plays back a scripted cluster: the signature status, blockhash validity and block
// height each read returns, in turn (the last value repeats); accounts and vote accounts by
// address; the fee of every transaction; and whether the RPC is proven (unverified: every read
// but Verified succeeds anyway, as a reader that does not check would).
type fakeChain struct {
	// clock is the cluster time UnixTime reports; stake, when set, is the stake account
	// StakeAccount returns (initialized, not delegated).
	clock    int64
	stake    *solchain.StakeAccount
	mu       sync.Mutex
	statuses []*solchain.SignatureStatus
	valid    []bool
	heights  []uint64
	reads    int
	// heightReads counts block height reads.
	heightReads int
	accounts    map[string]*solchain.AccountInfo
	votes       map[string]*solchain.VoteAccountStatus
	fee         uint64
	feeErrs     []error // returned by the first fee reads, in turn
	feeReads    int
	unverified  error
	// readErr, when set, is returned by every read.
	readErr error
	// balance is every address's balance; rent the rent-exempt minimum of any size.
	balance uint64
	rent    uint64
	// minDelegation is the chain's minimum delegation (getStakeMinimumDelegation).
	minDelegation uint64
	// programs and programsErr are what InstructionPrograms returns.
	programs    []string
	programsErr error
}

func (f *fakeChain) Balance(context.Context, string) (uint64, error) {
	if f.readErr != nil {
		return 0, f.readErr
	}
	return f.balance, nil
}

func (f *fakeChain) MinimumDelegation(context.Context) (uint64, error) {
	if f.readErr != nil {
		return 0, f.readErr
	}
	return f.minDelegation, nil
}

func (f *fakeChain) RentExemptMinimum(context.Context, uint64) (uint64, error) {
	if f.readErr != nil {
		return 0, f.readErr
	}
	return f.rent, nil
}

func next[T any](s *[]T) T {
	v := (*s)[0]
	if len(*s) > 1 {
		*s = (*s)[1:]
	}
	return v
}

func (f *fakeChain) SignatureStatus(context.Context, string) (*solchain.SignatureStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.readErr != nil {
		return nil, f.readErr
	}
	f.reads++
	return next(&f.statuses), nil
}
func (f *fakeChain) BlockHeight(context.Context) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heightReads++
	return next(&f.heights), nil
}
func (f *fakeChain) IsBlockhashValid(context.Context, string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return next(&f.valid), nil
}
func (f *fakeChain) EpochInfo(context.Context) (*solchain.EpochInfo, error) {
	return &solchain.EpochInfo{Epoch: 5, SlotIndex: 10, SlotsInEpoch: 64}, nil
}
func (f *fakeChain) StakeAccount(context.Context, string) (*solchain.StakeAccount, error) {
	if f.readErr != nil {
		return nil, f.readErr
	}
	if f.stake != nil {
		return f.stake, nil
	}
	return nil, solchain.ErrAccountNotFound
}
func (f *fakeChain) StakeActivation(context.Context, string) (*solchain.StakeActivation, error) {
	return nil, errors.New("unused")
}
func (f *fakeChain) AccountInfo(_ context.Context, addr string) (*solchain.AccountInfo, error) {
	if a, ok := f.accounts[addr]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w: %s", solchain.ErrAccountNotFound, addr)
}
func (f *fakeChain) VoteAccount(_ context.Context, v string) (*solchain.VoteAccountStatus, error) {
	if f.readErr != nil {
		return nil, f.readErr
	}
	if st, ok := f.votes[v]; ok {
		return st, nil
	}
	return &solchain.VoteAccountStatus{VoteAccount: v}, nil
}
func (f *fakeChain) TransactionFee(context.Context, string) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.feeReads++
	if len(f.feeErrs) > 0 {
		err := f.feeErrs[0]
		f.feeErrs = f.feeErrs[1:]
		return 0, err
	}
	return f.fee, nil
}
func (f *fakeChain) InstructionPrograms(context.Context, string) ([]string, error) {
	return f.programs, f.programsErr
}
func (f *fakeChain) Verified() error { return f.unverified }

func (f *fakeChain) UnixTime(context.Context) (int64, error) { return f.clock, nil }

var currentVote = &solchain.VoteAccountStatus{VoteAccount: vote, Found: true, Commission: 10, ActivatedStake: 5}

var (
	absent          = &solchain.SignatureStatus{}
	confirmed       = &solchain.SignatureStatus{Found: true, Slot: 9, ConfirmationStatus: "confirmed"}
	finalized       = &solchain.SignatureStatus{Found: true, Slot: 9, ConfirmationStatus: "finalized"}
	failedConfirmed = &solchain.SignatureStatus{Found: true, Slot: 9, ConfirmationStatus: "confirmed", Err: `{"InstructionError":[0,"Custom"]}`}
	failedFinalized = &solchain.SignatureStatus{Found: true, Slot: 9, ConfirmationStatus: "finalized", Err: `{"InstructionError":[0,"Custom"]}`}
)

func confirm(t *testing.T, f *fakeChain) (ConfirmResult, error) {
	t.Helper()
	res, _, err := confirmWith(t, &Activities{Chains: map[string]SolanaReader{"testnet": f}})
	return res, err
}

// confirmWith runs Confirm on acts and returns its result and the progress of every heartbeat.
func confirmWith(t *testing.T, acts *Activities) (ConfirmResult, []confirmProgress, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	var mu sync.Mutex
	var beats []confirmProgress
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var p confirmProgress
		require.NoError(t, details.Get(&p))
		mu.Lock()
		beats = append(beats, p)
		mu.Unlock()
	})
	v, err := env.ExecuteActivity(acts.Confirm, ConfirmInput{Network: "testnet", Signature: sig, RecentBlockhash: hash,
		PollInterval: time.Millisecond, ExpiryMarginBlocks: 10})
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		return ConfirmResult{}, beats, err
	}
	var res ConfirmResult
	require.NoError(t, v.Get(&res))
	return res, beats, nil
}

func TestConfirm(t *testing.T) {
	t.Run("final at the first look: one status read, its fee, no height, no heartbeat", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{finalized}, fee: 5000}
		res, beats, err := confirmWith(t, &Activities{Chains: map[string]SolanaReader{"testnet": f}})
		require.NoError(t, err)
		require.Equal(t, ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 9, Fee: 5000}, res)
		require.Equal(t, 1, f.reads)
		require.Equal(t, 1, f.feeReads)
		require.Zero(t, f.heightReads)
		require.Empty(t, beats)
	})
	t.Run("a short confirmation sends no heartbeat", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{absent, confirmed, finalized}, valid: []bool{true}, heights: []uint64{100}}
		res, beats, err := confirmWith(t, &Activities{Chains: map[string]SolanaReader{"testnet": f}})
		require.NoError(t, err)
		require.Equal(t, activities.OutcomeFinalized, res.Outcome)
		require.Equal(t, 1, f.heightReads, "the start height is read once, when the signature is first absent")
		require.Empty(t, beats)
	})
	t.Run("a landed transaction is followed without reading the height", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{confirmed, confirmed, finalized}}
		res, _, err := confirmWith(t, &Activities{Chains: map[string]SolanaReader{"testnet": f}})
		require.NoError(t, err)
		require.Equal(t, activities.OutcomeFinalized, res.Outcome)
		require.Equal(t, 3, f.reads)
		require.Zero(t, f.heightReads)
	})
	t.Run("a lasting confirmation heartbeats its start height", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{absent, confirmed, finalized}, valid: []bool{true}, heights: []uint64{100}}
		res, beats, err := confirmWith(t, &Activities{Chains: map[string]SolanaReader{"testnet": f}, ConfirmHeartbeatAfter: time.Nanosecond})
		require.NoError(t, err)
		require.Equal(t, activities.OutcomeFinalized, res.Outcome)
		// The SDK sends the first heartbeat at once and throttles the next ones.
		require.NotEmpty(t, beats)
		require.Equal(t, confirmProgress{StartHeight: 100}, beats[0])
	})
	t.Run("finalized after confirmed", func(t *testing.T) {
		res, err := confirm(t, &fakeChain{statuses: []*solchain.SignatureStatus{absent, confirmed, confirmed, finalized}, valid: []bool{true}, heights: []uint64{100}, fee: 7000})
		require.NoError(t, err)
		require.Equal(t, ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 9, Fee: 7000}, res)
	})
	t.Run("failed only once the failure is finalized", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{failedConfirmed, failedConfirmed, failedConfirmed, failedFinalized}, fee: 5000}
		res, err := confirm(t, f)
		require.NoError(t, err)
		require.Equal(t, ConfirmResult{Outcome: activities.OutcomeFailed, Slot: 9, Error: `{"InstructionError":[0,"Custom"]}`, Fee: 5000}, res)
		require.Equal(t, 4, f.reads, "kept polling while the failure was only confirmed")
		require.Equal(t, 1, f.feeReads)
	})
	t.Run("a failure at confirmed that is dropped and then lands is finalized", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{failedConfirmed, absent, confirmed, finalized}, valid: []bool{true}, heights: []uint64{100}, fee: 5000}
		res, err := confirm(t, f)
		require.NoError(t, err)
		require.Equal(t, ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 9, Fee: 5000}, res)
	})
	t.Run("the fee is asked for again while the node cannot serve it", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{finalized}, fee: 5000, feeErrs: []error{solchain.ErrTransactionNotFound}}
		res, err := confirm(t, f)
		require.NoError(t, err)
		require.Equal(t, ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 9, Fee: 5000}, res)
		require.Equal(t, 2, f.feeReads)
	})
	t.Run("a fee the node never serves is reported as 0", func(t *testing.T) {
		nf := solchain.ErrTransactionNotFound
		f := &fakeChain{statuses: []*solchain.SignatureStatus{finalized}, fee: 5000, feeErrs: []error{nf, nf, nf, nf}}
		res, err := confirm(t, f)
		require.NoError(t, err)
		require.Equal(t, ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 9}, res)
		require.Equal(t, feeReadTries, f.feeReads)
	})
	t.Run("expired only once blockhash invalid and height past margin", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{absent}, valid: []bool{true, true, false},
			heights: []uint64{100, 105, 110, 111}}
		res, err := confirm(t, f)
		require.NoError(t, err)
		require.Equal(t, activities.OutcomeCannotLand, res.Outcome)
		// start height read, then: valid, valid, invalid at 105 (not past 110), invalid at 110 (not past),
		// invalid at 111 -> re-check status -> expired.
		require.GreaterOrEqual(t, f.reads, 6)
	})
	t.Run("a transaction landing at the last moment is not called expired", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{absent, confirmed, finalized}, valid: []bool{false}, heights: []uint64{100, 200}}
		res, err := confirm(t, f)
		require.NoError(t, err)
		require.Equal(t, activities.OutcomeFinalized, res.Outcome)
	})
	t.Run("invalid blockhash alone is not proof", func(t *testing.T) {
		// The blockhash reads invalid (a lagging node) but the height never moves past the margin;
		// the transaction then lands.
		statuses := []*solchain.SignatureStatus{}
		for i := 0; i < 20; i++ {
			statuses = append(statuses, absent)
		}
		statuses = append(statuses, finalized)
		f := &fakeChain{statuses: statuses, valid: []bool{false}, heights: []uint64{100}}
		res, err := confirm(t, f)
		require.NoError(t, err)
		require.Equal(t, activities.OutcomeFinalized, res.Outcome)
	})
}

// TestReadStakeStateReadsTheLockup: a lockup is in force while the cluster's clock or epoch is
// before it (the fake's epoch is 5), whatever the worker's clock says.
func TestReadStakeStateReadsTheLockup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lockup  solchain.Lockup
		clock   int64
		want    bool
		present bool
	}{
		{"none", solchain.Lockup{}, 1_800_000_000, false, false},
		{"until a time still ahead", solchain.Lockup{UnixTimestamp: 4_102_444_800, Custodian: staker}, 1_800_000_000, true, true},
		{"until a time passed", solchain.Lockup{UnixTimestamp: 1_700_000_000, Custodian: staker}, 1_800_000_000, false, true},
		{"until an epoch ahead", solchain.Lockup{Epoch: 6}, 1_800_000_000, true, true},
		{"until the current epoch", solchain.Lockup{Epoch: 5}, 1_800_000_000, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			chain := &fakeChain{clock: tc.clock, stake: &solchain.StakeAccount{Lamports: 2_000_000_000, State: solchain.StateInitialized,
				Meta: &solchain.StakeMeta{Staker: staker, Withdrawer: staker, Lockup: tc.lockup}}}
			acts := &Activities{Chains: map[string]SolanaReader{"testnet": chain}}
			env.RegisterActivity(acts)
			v, err := env.ExecuteActivity(acts.ReadStakeState, StakeStateInput{Network: "testnet", StakeAccount: vote})
			require.NoError(t, err)
			var st StakeState
			require.NoError(t, v.Get(&st))
			if !tc.present {
				require.Nil(t, st.Lockup)
				return
			}
			require.NotNil(t, st.Lockup)
			require.Equal(t, tc.want, st.Lockup.InForce)
			require.Equal(t, tc.lockup.UnixTimestamp, st.Lockup.UnixTimestamp)
			require.Equal(t, tc.lockup.Epoch, st.Lockup.Epoch)
			require.Equal(t, tc.clock, st.Lockup.ClusterTime)
		})
	}
}

func TestReadStakeStateMissingAccountIsNonRetryable(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Chains: map[string]SolanaReader{"testnet": &fakeChain{}}}
	env.RegisterActivity(acts)
	_, err := env.ExecuteActivity(acts.ReadStakeState, StakeStateInput{Network: "testnet", StakeAccount: vote})
	ae := appErr(t, err)
	require.Equal(t, activities.ErrStakeAccountState, ae.Type())
	require.True(t, ae.NonRetryable())
}
