package hyperliquid

import (
	"context"
	"errors"
	"testing"

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
		Signed: Signed{Action: hlsigner.Action{Type: hlsigner.TypeCWithdraw, Nonce: nonce}, Nonce: nonce}})
	var res SubmitResult
	if err == nil {
		require.NoError(t, v.Get(&res))
	}
	return res, err
}

var refusedUsed = hlchain.ExchangeResult{Status: "err", Response: "Invalid nonce: 7 already used"}

// TestSubmitOutcomes: an accepted action is sent; a refusal is sent when the account holds the
// nonce (a resubmission), a nonce refusal otherwise, and any other refusal is refused.
func TestSubmitOutcomes(t *testing.T) {
	for _, c := range []struct {
		name    string
		answer  hlchain.ExchangeResult
		account hlchain.Account
		want    string
	}{
		{"accepted", hlchain.ExchangeResult{Status: "ok"}, hlchain.Account{}, OutcomeSent},
		{"resubmission held pending", refusedUsed, hlchain.Account{Pending: []hlchain.Pending{{Nonce: 7}}}, OutcomeSent},
		{"resubmission held finalized", refusedUsed, hlchain.Account{Finalized: []uint64{7}}, OutcomeSent},
		{"nonce refused, not held", refusedUsed, hlchain.Account{Pending: []hlchain.Pending{{Nonce: 8}}}, OutcomeNonceRefused},
		{"other refusal", hlchain.ExchangeResult{Status: "err", Response: "Insufficient staking balance"}, hlchain.Account{}, OutcomeRefused},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := &fakeAPI{answers: []hlchain.ExchangeResult{c.answer}, account: c.account}
			res, err := submit(t, api, 7)
			require.NoError(t, err)
			assert.Equal(t, c.want, res.Outcome)
			assert.Len(t, api.posted, 1)
		})
	}
}

// TestSubmitUnavailableRetries: an unreachable exchange is ChainUnavailable (retried by the
// workflow's policy with the same signed action); a 4xx is ChainRejected.
func TestSubmitUnavailableRetries(t *testing.T) {
	api := &fakeAPI{answers: []hlchain.ExchangeResult{{}}, errs: []error{&hlchain.UnavailableError{Err: errors.New("connection reset")}}}
	_, err := submit(t, api, 7)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, activities.ErrChainUnavailable, ae.Type())
	assert.False(t, ae.NonRetryable())

	api = &fakeAPI{answers: []hlchain.ExchangeResult{{}}, errs: []error{hlchain.ErrRefused}}
	_, err = submit(t, api, 7)
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, activities.ErrChainRejected, ae.Type())
}

func TestWeiOfNamesNoPrefix(t *testing.T) {
	_, err := WeiOf("0.000000001")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), hlsigner.ErrIntent.Error())
	w, err := WeiOf("3")
	require.NoError(t, err)
	assert.Equal(t, uint64(300_000_000), w)
}
