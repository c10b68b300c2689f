package hyperliquid

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
	hlsigner "github.com/stakeflow/stakeflow/signer/hyperliquid"
)

// fakeAPI answers the exchange from a script and the account as set.
type fakeAPI struct {
	answers []hlchain.ExchangeResult
	errs    []error
	account hlchain.Account
	posted  []any
}

func (f *fakeAPI) Exchange(_ context.Context, signed any) (hlchain.ExchangeResult, error) {
	f.posted = append(f.posted, signed)
	i := min(len(f.posted), len(f.answers)) - 1
	var err error
	if i < len(f.errs) {
		err = f.errs[i]
	}
	return f.answers[i], err
}

func (f *fakeAPI) Account(context.Context, string) (hlchain.Account, error) { return f.account, nil }

func submit(t *testing.T, api *fakeAPI, nonce uint64) (SubmitResult, error) {
	t.Helper()
	a := &Activities{APIs: map[string]API{"testnet": api}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.HLSubmit, SubmitInput{Network: "testnet", Delegator: "0x1111111111111111111111111111111111111111",
		Signed: Signed{Action: hlsigner.Action{Type: hlsigner.TypeCWithdraw, Wei: 250000000, Nonce: nonce}, Nonce: nonce}, Known: []string{"0xknown"}})
	var res SubmitResult
	if err == nil {
		require.NoError(t, v.Get(&res))
	}
	return res, err
}

var refusedUsed = hlchain.ExchangeResult{Status: "err", Response: "Invalid nonce: 7 already used"}

// testNonce is the nonce the tests sign with; signedAt its time.
const testNonce = 1764000000000

var signedAt = time.UnixMilli(testNonce)

// TestSubmitOutcomes: an accepted action is sent; a refusal is sent when the history shows the
// action's withdrawal (a resubmission), a nonce refusal otherwise, and any other refusal is
// refused.
func TestSubmitOutcomes(t *testing.T) {
	ours := hlchain.Withdrawal{Hash: "0xours", Time: signedAt.Add(time.Second), Wei: 250000000}
	for _, c := range []struct {
		name    string
		answer  hlchain.ExchangeResult
		account hlchain.Account
		want    string
	}{
		{"accepted", hlchain.ExchangeResult{Status: "ok"}, hlchain.Account{}, OutcomeSent},
		{"resubmission held pending", refusedUsed, hlchain.Account{Pending: []hlchain.Withdrawal{ours}}, OutcomeSent},
		{"resubmission held finalized", refusedUsed, hlchain.Account{Finalized: []hlchain.Withdrawal{ours}}, OutcomeSent},
		{"nonce refused, another amount pending", refusedUsed, hlchain.Account{Pending: []hlchain.Withdrawal{{Hash: "0xb", Time: ours.Time, Wei: 1}}}, OutcomeNonceRefused},
		{"nonce refused, a known withdrawal pending", refusedUsed, hlchain.Account{Pending: []hlchain.Withdrawal{{Hash: "0xknown", Time: ours.Time, Wei: ours.Wei}}}, OutcomeNonceRefused},
		{"other refusal", hlchain.ExchangeResult{Status: "err", Response: "Insufficient staking balance"}, hlchain.Account{}, OutcomeRefused},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := &fakeAPI{answers: []hlchain.ExchangeResult{c.answer}, account: c.account}
			res, err := submit(t, api, testNonce)
			require.NoError(t, err)
			assert.Equal(t, c.want, res.Outcome)
			assert.Len(t, api.posted, 1)
		})
	}
}

// TestFind: the withdrawal of an action is the earliest of its amount, not known before, whose
// block time could take its nonce (Hyperliquid: the nonce within (T - 2 days, T + 1 day) of the
// block time T).
func TestFind(t *testing.T) {
	w := func(hash string, at time.Duration, wei uint64) hlchain.Withdrawal {
		return hlchain.Withdrawal{Hash: hash, Time: signedAt.Add(at), Wei: wei}
	}
	for _, c := range []struct {
		name string
		acc  hlchain.Account
		want string
	}{
		{"pending", hlchain.Account{Pending: []hlchain.Withdrawal{w("0xa", time.Second, 5)}}, "0xa"},
		{"finalized", hlchain.Account{Finalized: []hlchain.Withdrawal{w("0xa", time.Second, 5)}}, "0xa"},
		{"earliest of two", hlchain.Account{Pending: []hlchain.Withdrawal{w("0xb", time.Minute, 5), w("0xa", time.Second, 5)}}, "0xa"},
		{"known skipped", hlchain.Account{Pending: []hlchain.Withdrawal{w("0xknown", time.Second, 5), w("0xb", time.Minute, 5)}}, "0xb"},
		{"other amount", hlchain.Account{Pending: []hlchain.Withdrawal{w("0xa", time.Second, 6)}}, ""},
		{"a day before the nonce", hlchain.Account{Pending: []hlchain.Withdrawal{w("0xa", -24*time.Hour, 5)}}, ""},
		{"just under a day before", hlchain.Account{Pending: []hlchain.Withdrawal{w("0xa", -24*time.Hour+time.Millisecond, 5)}}, "0xa"},
		{"two days after", hlchain.Account{Pending: []hlchain.Withdrawal{w("0xa", 48*time.Hour, 5)}}, ""},
		{"just under two days after", hlchain.Account{Pending: []hlchain.Withdrawal{w("0xa", 48*time.Hour-time.Millisecond, 5)}}, "0xa"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Find(c.acc, 5, testNonce, []string{"0xknown"})
			assert.Equal(t, c.want != "", ok)
			assert.Equal(t, c.want, got.Hash)
		})
	}
}

// TestSubmitUnavailableRetries: an unreachable exchange is ChainUnavailable (retried by the
// workflow's policy with the same signed action); a 4xx is ChainRejected.
func TestSubmitUnavailableRetries(t *testing.T) {
	api := &fakeAPI{answers: []hlchain.ExchangeResult{{}}, errs: []error{&hlchain.UnavailableError{Err: errors.New("connection reset")}}}
	_, err := submit(t, api, testNonce)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, activities.ErrChainUnavailable, ae.Type())
	assert.False(t, ae.NonRetryable())

	api = &fakeAPI{answers: []hlchain.ExchangeResult{{}}, errs: []error{hlchain.ErrRefused}}
	_, err = submit(t, api, testNonce)
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, activities.ErrChainRejected, ae.Type())
}
