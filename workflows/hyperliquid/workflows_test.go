package hyperliquid

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ethereum/go-ethereum/common"

	"github.com/stakeflow/stakeflow/activities"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
	"github.com/stakeflow/stakeflow/lease"
	hlsigner "github.com/stakeflow/stakeflow/signer/hyperliquid"
	"github.com/stakeflow/stakeflow/workflows"
)

const delegator = "0x1111111111111111111111111111111111111111"

// exchange fakes the activities: an account whose pending withdrawals the fake exchange fills, and
// a script of submission outcomes (the last repeats).
type exchange struct {
	pending   []hlchain.Withdrawal
	finalized []hlchain.Withdrawal
	spot      uint64
	outcomes  []string
	requests  int
	signs     []acthl.SignInput
	submits   []acthl.SubmitInput
	// reads counts account reads; settleAfter reads, pending withdrawals reach spot.
	reads, settleAfter int
	// signErr, when set, is the signer's refusal; submitErrs fail the first submissions.
	signErr    error
	submitErrs []error
	// lag is how many reads after a sent submission the history does not show it yet.
	lag    int
	hidden []hlchain.Withdrawal
	// clock is the test environment's (ReadAt of each read).
	clock func() time.Time
	// others are withdrawals of other operations of the delegator, each landing in the history
	// at the read of number landsAt (0: never), or when landed() is called.
	others []other
	// events records what happened, in order: "lease", "granted", "read", "sign", "submit",
	// "release".
	events []string
}

type other struct {
	w       hlchain.Withdrawal
	landsAt int
	landed  bool
}

// land puts the other operations' withdrawals that have not landed yet into the history.
func (e *exchange) land() {
	for i := range e.others {
		if !e.others[i].landed {
			e.others[i].landed = true
			e.pending = append(e.pending, e.others[i].w)
		}
	}
}

func (e *exchange) read(_ context.Context, _ acthl.AccountInput) (acthl.Account, error) {
	e.reads++
	e.events = append(e.events, "read")
	for i := range e.others {
		if o := &e.others[i]; !o.landed && o.landsAt > 0 && e.reads >= o.landsAt {
			o.landed = true
			e.pending = append(e.pending, o.w)
		}
	}
	if len(e.hidden) > 0 {
		if e.lag > 0 {
			e.lag--
		} else {
			e.pending, e.hidden = append(e.pending, e.hidden...), nil
		}
	}
	if e.settleAfter > 0 && e.reads > e.settleAfter {
		for _, p := range e.pending {
			e.spot += p.Wei
			e.finalized = append(e.finalized, p)
		}
		e.pending = nil
	}
	acc := acthl.Account{Account: hlchain.Account{Spot: e.spot, Pending: append([]hlchain.Withdrawal{}, e.pending...), Finalized: append([]hlchain.Withdrawal{}, e.finalized...)}}
	if e.clock != nil {
		acc.ReadAt = e.clock()
	}
	return acc, nil
}

func (e *exchange) request(_ context.Context, _ acthl.RequestInput) (acthl.Request, error) {
	e.requests++
	return acthl.Request{Unsigned: "request"}, nil
}

func (e *exchange) sign(_ context.Context, in acthl.SignInput) (acthl.Signed, error) {
	e.signs = append(e.signs, in)
	e.events = append(e.events, "sign")
	if e.signErr != nil {
		return acthl.Signed{}, e.signErr
	}
	n := uint64(1764000000000 + len(e.signs))
	return acthl.Signed{Action: hlsigner.Action{Type: hlsigner.TypeCWithdraw, Wei: 250000000, Nonce: n}, Nonce: n, Digest: "0xdigest"}, nil
}

func (e *exchange) submit(_ context.Context, in acthl.SubmitInput) (acthl.SubmitResult, error) {
	e.submits = append(e.submits, in)
	e.events = append(e.events, "submit")
	if len(e.submits) <= len(e.submitErrs) {
		return acthl.SubmitResult{}, e.submitErrs[len(e.submits)-1]
	}
	o := e.outcomes[min(len(e.submits), len(e.outcomes))-1]
	if o == acthl.OutcomeSent {
		// The history names it by its L1 hash and block time, a little after the nonce.
		at := time.UnixMilli(int64(in.Signed.Nonce)).Add(2 * time.Second)
		e.hidden = append(e.hidden, hlchain.Withdrawal{Hash: fmt.Sprintf("0xtx%d", in.Signed.Nonce), Time: at, Wei: in.Signed.Action.Wei, CompletesAt: e.clock().Add(7 * 24 * time.Hour)})
	}
	return acthl.SubmitResult{Outcome: o}, nil
}

// signedAt is the time of the fake signer's nonces; the test environment's clock starts there.
var signedAt = time.UnixMilli(1764000000000)

// newEnv runs the workflow over e; the delegator's lease is granted at once.
func newEnv(e *exchange) *testsuite.TestWorkflowEnvironment {
	return newEnvLease(e, 0, nil)
}

// newEnvLease runs the workflow over e with the delegator's lease granted grantAfter after it was
// asked for, once held() ran (another operation finishing).
func newEnvLease(e *exchange, grantAfter time.Duration, held func()) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(signedAt)
	e.clock = env.Now
	Register(env)
	env.OnActivity(ha.HLRequestLease, mock.Anything, mock.Anything).Return(func(_ context.Context, req lease.Request) error {
		e.events = append(e.events, "lease")
		if req.Chain != lease.Hyperliquid || (req.Network != "testnet" && req.Network != "mainnet") {
			return fmt.Errorf("lease asked of %q on %q", req.Chain, req.Network)
		}
		env.RegisterDelayedCallback(func() {
			if held != nil {
				held()
			}
			e.events = append(e.events, "granted")
			env.SignalWorkflow(lease.SignalGrant, lease.Grant{})
		}, grantAfter)
		return nil
	})
	env.OnSignalExternalWorkflow(mock.Anything, lease.ID(lease.Hyperliquid, "testnet", common.HexToAddress(delegator).Hex()), "", lease.SignalRelease, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			e.events = append(e.events, "release")
			return nil
		})
	env.OnSignalExternalWorkflow(mock.Anything, lease.ID(lease.Hyperliquid, "mainnet", common.HexToAddress(delegator).Hex()), "", lease.SignalRelease, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			e.events = append(e.events, "release")
			return nil
		})
	env.RegisterActivity(ha)
	env.OnActivity(ha.HLReadAccount, mock.Anything, mock.Anything).Return(e.read)
	env.OnActivity(ha.HLRequest, mock.Anything, mock.Anything).Return(e.request)
	env.OnActivity(ha.HLSign, mock.Anything, mock.Anything).Return(e.sign)
	env.OnActivity(ha.HLSubmit, mock.Anything, mock.Anything).Return(e.submit)
	return env
}

// TestWithdrawWaitsThenReportsSpot: a nonce refused gets one new request (the refused nonce
// passed on as used); the sent action waits in the queue with durable timers and the result
// reports the spot balance before and after.
func TestWithdrawWaitsThenReportsSpot(t *testing.T) {
	e := &exchange{spot: 7, outcomes: []string{acthl.OutcomeNonceRefused, acthl.OutcomeSent}, settleAfter: 3}
	env := newEnv(e)
	start := env.Now()
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res WithdrawResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, 2, res.Requests)
	assert.Equal(t, 2, e.requests)
	require.Len(t, e.signs, 2)
	assert.Empty(t, e.signs[0].UsedNonces)
	assert.Equal(t, []uint64{1764000000001}, e.signs[1].UsedNonces)
	assert.Equal(t, uint64(1764000000002), res.Nonce)
	assert.Equal(t, "0xtx1764000000002", res.Hash)
	assert.Equal(t, "250000000", res.Wei)
	assert.Equal(t, "7", res.SpotBefore)
	assert.Equal(t, "250000007", res.SpotAfter)
	assert.GreaterOrEqual(t, env.Now().Sub(start), time.Hour, "waited on durable timers (MaxEpochWait each)")
}

// TestWithdrawSignsInTheWorker: the request is verified and signed by a local activity, in the
// worker running the workflow (as every chain's transactions are), with the core's sign options;
// the exchange's calls are normal activities.
func TestWithdrawSignsInTheWorker(t *testing.T) {
	e := &exchange{spot: 7, outcomes: []string{acthl.OutcomeSent}, settleAfter: 1}
	env := newEnv(e)
	var local, remote []string
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		local = append(local, info.ActivityType.Name)
	})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		remote = append(remote, info.ActivityType.Name)
	})
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Contains(t, local, "HLSign")
	assert.NotContains(t, remote, "HLSign")
	assert.Contains(t, remote, "HLSubmit")
	require.Len(t, e.signs, 1)
}

// TestWithdrawSixthRefused: five pending withdrawals refuse a sixth before anything is asked or
// signed, naming each.
func TestWithdrawSixthRefused(t *testing.T) {
	e := &exchange{}
	for i := range 5 {
		e.pending = append(e.pending, hlchain.Withdrawal{Hash: fmt.Sprintf("0xa%d", i), Wei: 100000000,
			Time: time.Date(2026, 11, 24, 0, 0, i, 0, time.UTC), CompletesAt: time.Date(2026, 12, 1, 0, 0, i, 0, time.UTC)})
	}
	env := newEnv(e)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "mainnet", Delegator: delegator, Amount: "1"})
	err := env.GetWorkflowError()
	require.Error(t, err)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	for _, n := range []string{"0xa0 (1 HYPE, initiated 2026-11-24T00:00:00Z, reaches spot 2026-12-01T00:00:00Z)", "0xa1 ", "0xa2 ", "0xa3 ", "0xa4 ", "5 withdrawals pending"} {
		assert.Contains(t, err.Error(), n)
	}
	assert.Zero(t, e.requests)
	assert.Empty(t, e.signs)
	assert.Empty(t, e.submits)
}

// TestWithdrawVerificationFailureSubmitsNothing: the signer's refusal ends the operation; nothing
// reaches the exchange.
func TestWithdrawVerificationFailureSubmitsNothing(t *testing.T) {
	e := &exchange{outcomes: []string{acthl.OutcomeSent},
		signErr: temporal.NewNonRetryableApplicationError("wei: want 100000000, got 100000001; nothing was signed", activities.ErrVerificationFailed, nil)}
	env := newEnv(e)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "1"})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "wei: want")
	assert.Empty(t, e.submits)
}

// TestWithdrawRefusedNonceBounded: every nonce refused ends after MaxBuilds requests.
func TestWithdrawRefusedNonceBounded(t *testing.T) {
	e := &exchange{outcomes: []string{acthl.OutcomeNonceRefused}}
	env := newEnv(e)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "1"})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "refused the nonce of each of 3 requests"), err.Error())
	assert.Equal(t, 3, e.requests)
}

// TestWithdrawExchangeRefusingStallsThenResubmits: an exchange refusing the worker (a failure
// that may heal, final for the activity) stalls the operation; the same signed action is
// submitted again after the stall's wait, and no new request is asked for.
func TestWithdrawExchangeRefusingStallsThenResubmits(t *testing.T) {
	e := &exchange{outcomes: []string{acthl.OutcomeSent}, settleAfter: 2,
		submitErrs: []error{temporal.NewNonRetryableApplicationError("submitting the withdrawal: HTTP 403", activities.ErrChainRejected, nil)}}
	env := newEnv(e)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, e.submits, 2)
	assert.Equal(t, e.submits[0], e.submits[1], "the same signed action")
	assert.Equal(t, 1, e.requests)
	assert.Len(t, e.signs, 1)
	v, err := env.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, err)
	var st workflows.Status
	require.NoError(t, v.Get(&st))
	assert.Nil(t, st.Stall, "the stall cleared once the exchange took the action")
}

// TestWithdrawFollowsItsOwnWithdrawal: an earlier withdrawal of the same amount, shown before
// anything was signed, is not taken for this one; the history showing the new one only after a
// few reads delays the wait without failing it, and the result names the new one's hash.
func TestWithdrawFollowsItsOwnWithdrawal(t *testing.T) {
	old := hlchain.Withdrawal{Hash: "0xold", Wei: 250000000, Time: time.UnixMilli(1764000000000).Add(-time.Hour)}
	e := &exchange{outcomes: []string{acthl.OutcomeSent}, settleAfter: 5, lag: 2, finalized: []hlchain.Withdrawal{old},
		pending: []hlchain.Withdrawal{{Hash: "0xold2", Wei: 250000000, Time: time.UnixMilli(1764000000000), CompletesAt: time.UnixMilli(1764000000000).Add(time.Hour)}}}
	env := newEnv(e)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	require.NoError(t, env.GetWorkflowError())
	var res WithdrawResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, "0xtx1764000000001", res.Hash)
	require.Len(t, e.submits, 1)
	assert.ElementsMatch(t, []string{"0xold", "0xold2"}, e.submits[0].Known)
}

// TestWithdrawNeverShownCannotLandOnlyAfterTheWindow: an action the exchange took that the history
// never shows is followed (the same signed action resubmitted, never a new request) until its
// nonce has left the exchange's window (two days after the nonce, plus the clock-skew allowance);
// only then does the operation fail, with the proof that it cannot land, and only then is the
// delegator's lease given back.
func TestWithdrawNeverShownCannotLandOnlyAfterTheWindow(t *testing.T) {
	e := &exchange{outcomes: []string{acthl.OutcomeSent}, lag: 1 << 30}
	env := newEnv(e)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	err := env.GetWorkflowError()
	require.Error(t, err)
	for _, want := range []string{"nonce 1764000000001", "cannot land", "left the exchange's window at 2025-11-26T17:00:00Z", "nothing reached spot"} {
		assert.Contains(t, err.Error(), want)
	}
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.True(t, ae.NonRetryable())
	closes := time.UnixMilli(1764000000001).Add(48*time.Hour + time.Hour)
	assert.False(t, env.Now().Before(closes), "followed until the window closed (%s), ended %s", closes, env.Now())
	assert.Equal(t, 1, e.requests, "no new request while the action may land")
	require.Greater(t, len(e.submits), 1, "the same signed action resubmitted while followed")
	for _, s := range e.submits[1:] {
		assert.Equal(t, e.submits[0], s)
	}
	assert.Equal(t, "release", e.events[len(e.events)-1], "the lease is given back last: %v", e.events)
	v, qerr := env.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, qerr)
	var st workflows.Status
	require.NoError(t, v.Get(&st))
	require.NotEmpty(t, st.Attempts)
	assert.Equal(t, activities.OutcomeCannotLand, st.Attempts[len(st.Attempts)-1].Outcome)
}

// TestWithdrawTwoSameAmountAtOnceEachItsOwn (issue 26, finding 4): another operation of the same
// delegator withdraws the same amount at the same time. This one waits for the delegator's lease
// (visibly, in waiting-nonce) while the other holds it, and asks, signs and reads nothing
// meanwhile; once the other's withdrawal is in the history and the lease granted, it completes
// with its own withdrawal's hash, never the other's, giving the lease back once the history shows
// its own (the next operation then reads it among the known ones). On the code
// before the lease, the other's withdrawal appears in the history after this one's first read and
// is taken for this one's (the earliest unknown withdrawal of the amount).
func TestWithdrawTwoSameAmountAtOnceEachItsOwn(t *testing.T) {
	theirs := hlchain.Withdrawal{Hash: "0xtheirs", Wei: 250000000, Time: signedAt, CompletesAt: signedAt.Add(5 * time.Minute)}
	e := &exchange{outcomes: []string{acthl.OutcomeSent}, settleAfter: 4, others: []other{{w: theirs, landsAt: 2}}}
	var during workflows.Status
	var env *testsuite.TestWorkflowEnvironment
	env = newEnvLease(e, 10*time.Minute, func() {
		v, err := env.QueryWorkflow(workflows.QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&during))
		// The other operation's withdrawal is final: in the history.
		e.land()
	})
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res WithdrawResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, "0xtx1764000000001", res.Hash, "its own withdrawal")
	assert.NotEqual(t, theirs.Hash, res.Hash)
	assert.Equal(t, lease.StepWaitingNonce, during.Step, "waited visibly for the lease")
	assert.Equal(t, []string{"lease", "granted", "read", "sign", "submit", "read", "release"}, e.events[:7],
		"nothing read, asked or signed before the lease; the lease given back once the history shows the withdrawal")
	assert.NotContains(t, e.events[7:], "release", "given back once")
	require.Len(t, e.submits, 1)
	assert.Contains(t, e.submits[0].Known, theirs.Hash, "the other's withdrawal was known before this one signed")
}

// TestWithdrawCancelWhileUnseenFollowsUntilShown: a cancel while the history does not show the
// action yet does not end the operation (the action may land): it goes on reading, holding the
// lease, until the history shows the withdrawal (whose fate is then final: it reaches spot after
// the queue), then ends cancelled; the lease is given back last.
func TestWithdrawCancelWhileUnseenFollowsUntilShown(t *testing.T) {
	e := &exchange{outcomes: []string{acthl.OutcomeSent}, lag: 4}
	env := newEnv(e)
	env.RegisterDelayedCallback(env.CancelWorkflow, 30*time.Second)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.True(t, temporal.IsCanceledError(err), "%v", err)
	// Reads: the one before signing, then four the history lags by, then the one that shows it.
	assert.Equal(t, 6, e.reads, "read on after the cancel until the history showed it, and no further")
	assert.Equal(t, "release", e.events[len(e.events)-1], "the lease is given back last: %v", e.events)
}

// TestWithdrawCancelDuringSubmitFollowsTheAction: a cancel that ends the submission (the exchange
// unreachable, the operation stalled) before the exchange answered does not end the operation:
// the signed action may have reached the exchange, and it has: the operation follows it until the
// history shows it, holding the lease.
func TestWithdrawCancelDuringSubmitFollowsTheAction(t *testing.T) {
	unreachable := temporal.NewApplicationError("submitting the withdrawal: connection refused", activities.ErrChainUnavailable)
	e := &exchange{outcomes: []string{acthl.OutcomeSent}}
	for range 1000 {
		e.submitErrs = append(e.submitErrs, unreachable)
	}
	env := newEnv(e)
	// The action reached the exchange though its answer never came back.
	e.others = []other{{w: hlchain.Withdrawal{Hash: "0xtx1764000000001", Wei: 250000000, Time: signedAt.Add(2 * time.Second), CompletesAt: signedAt.Add(5 * time.Minute)}, landsAt: 3}}
	env.RegisterDelayedCallback(env.CancelWorkflow, 2*time.Minute)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.True(t, temporal.IsCanceledError(err), "%v", err)
	assert.Equal(t, 3, e.reads, "read on after the cancel until the history showed it, and no further")
	assert.Equal(t, 1, e.requests)
	assert.Equal(t, "release", e.events[len(e.events)-1], "the lease is given back last: %v", e.events)
}

// TestWithdrawAmountUnderTheOneRule: a HYPE amount is read under the amount package's rule with
// HYPE's 8 decimals; expected values by hand (1 HYPE = 10^8 wei, 2^64-1 wei = 184467440737.09551615).
func TestWithdrawAmountUnderTheOneRule(t *testing.T) {
	for in, want := range map[string]uint64{
		"0.00000001": 1, "2.5": 250_000_000, "1.50": 150_000_000, "184467440737.09551615": 18446744073709551615,
	} {
		got, err := WeiOf(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, reason := range map[string]string{
		"0":                     "must be more than zero",
		"0.00000000":            "must be more than zero",
		" 1":                    "without spaces",
		"01":                    "without leading zeros",
		".5":                    "a digit before the point",
		"1.000000000":           "more than 8 decimals",
		"1e-3":                  "without an exponent",
		"184467440737.09551616": "more than 2^64-1",
	} {
		_, err := WeiOf(in)
		var ie *workflows.InputError
		require.True(t, errors.As(err, &ie), "%q: %v", in, err)
		assert.Equal(t, "amount", ie.Field, in)
		assert.Contains(t, ie.Reason, reason, in)
	}
}

func TestWithdrawInputValidate(t *testing.T) {
	for _, c := range []struct {
		in    WithdrawInput
		field string
	}{
		{WithdrawInput{Network: "devnet", Delegator: delegator, Amount: "1"}, "network"},
		{WithdrawInput{Network: "mainnet", Amount: "1"}, "delegator"},
		{WithdrawInput{Network: "mainnet", Delegator: "0x12", Amount: "1"}, "delegator"},
		{WithdrawInput{Network: "mainnet", Delegator: delegator}, "amount"},
		{WithdrawInput{Network: "mainnet", Delegator: delegator, Amount: "0.000000001"}, "amount"},
		{WithdrawInput{Network: "mainnet", Delegator: delegator, Amount: "1e3"}, "amount"},
		{WithdrawInput{Network: "mainnet", Delegator: delegator, Amount: "-1"}, "amount"},
	} {
		var ie *workflows.InputError
		require.True(t, errors.As(c.in.Validate(), &ie), "%+v", c.in)
		assert.Equal(t, c.field, ie.Field, "%+v", c.in)
	}
	require.NoError(t, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "12.12345678"}.Validate())
	assert.Equal(t, "12.12345678 HYPE", FormatHYPE("1212345678"))
	assert.Equal(t, "0 HYPE", FormatHYPE("0"))
	assert.Equal(t, "x wei", FormatHYPE("x"))
	assert.Equal(t, "2.5 HYPE", FormatHYPE("250000000"))
}

// TestWithdrawUnseenPastTheHistorysLagStallsVisibly: an action the exchange took that the history
// does not show past its usual lag keeps the operation open and visibly stalled (status step
// stalled, the stall naming the nonce and when it is proven unable to land at the latest); once
// the history shows it the stall ends and the withdrawal completes.
func TestWithdrawUnseenPastTheHistorysLagStallsVisibly(t *testing.T) {
	e := &exchange{outcomes: []string{acthl.OutcomeSent}, lag: maxMisses + 2, settleAfter: maxMisses + 4}
	env := newEnv(e)
	var during workflows.Status
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(workflows.QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&during))
	}, 30*time.Minute)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, workflows.StepStalled, during.Step)
	require.NotNil(t, during.Stall, "stalled while the history did not show the action")
	assert.Contains(t, during.Stall.LastError, "nonce 1764000000001")
	assert.Contains(t, during.Stall.LastError, "2025-11-26T17:00:00Z")
	v, err := env.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, err)
	var end workflows.Status
	require.NoError(t, v.Get(&end))
	assert.Nil(t, end.Stall, "the stall ends once the history shows the withdrawal")
	assert.Equal(t, workflows.StepDone, end.Step)
}
