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
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
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
}

func (e *exchange) read(_ context.Context, _ acthl.AccountInput) (acthl.Account, error) {
	e.reads++
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
	return acthl.Account{Account: hlchain.Account{Spot: e.spot, Pending: append([]hlchain.Withdrawal{}, e.pending...), Finalized: append([]hlchain.Withdrawal{}, e.finalized...)}}, nil
}

func (e *exchange) request(_ context.Context, _ acthl.RequestInput) (acthl.Request, error) {
	e.requests++
	return acthl.Request{Unsigned: "request"}, nil
}

func (e *exchange) sign(_ context.Context, in acthl.SignInput) (acthl.Signed, error) {
	e.signs = append(e.signs, in)
	if e.signErr != nil {
		return acthl.Signed{}, e.signErr
	}
	n := uint64(1764000000000 + len(e.signs))
	return acthl.Signed{Action: hlsigner.Action{Type: hlsigner.TypeCWithdraw, Wei: 250000000, Nonce: n}, Nonce: n, Digest: "0xdigest"}, nil
}

func (e *exchange) submit(_ context.Context, in acthl.SubmitInput) (acthl.SubmitResult, error) {
	e.submits = append(e.submits, in)
	if len(e.submits) <= len(e.submitErrs) {
		return acthl.SubmitResult{}, e.submitErrs[len(e.submits)-1]
	}
	o := e.outcomes[min(len(e.submits), len(e.outcomes))-1]
	if o == acthl.OutcomeSent {
		// The history names it by its L1 hash and block time, a little after the nonce.
		at := time.UnixMilli(int64(in.Signed.Nonce)).Add(2 * time.Second)
		e.hidden = append(e.hidden, hlchain.Withdrawal{Hash: fmt.Sprintf("0xtx%d", in.Signed.Nonce), Time: at, Wei: in.Signed.Action.Wei, CompletesAt: time.Now().Add(7 * 24 * time.Hour)})
	}
	return acthl.SubmitResult{Outcome: o}, nil
}

func newEnv(e *exchange) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env)
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

// TestWithdrawNeverShownFails: an action the exchange took that the history never shows fails
// the operation after a bounded number of reads, naming the nonce.
func TestWithdrawNeverShownFails(t *testing.T) {
	e := &exchange{outcomes: []string{acthl.OutcomeSent}, lag: 1000}
	env := newEnv(e)
	env.ExecuteWorkflow(WithdrawWorkflowType, WithdrawInput{Network: "testnet", Delegator: delegator, Amount: "2.5"})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nonce 1764000000001")
	assert.Contains(t, err.Error(), "shows no withdrawal")
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
	assert.Equal(t, "2.5 HYPE", FormatHYPE("250000000"))
}
