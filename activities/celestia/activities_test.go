package celestia

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
	"github.com/stakeflow/stakeflow/apiclient"
	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
)

// fakeChain answers reads from fields.
type fakeChain struct {
	Chain
	account *cosmoschain.Account
	txs     map[string]*cosmoschain.TxResult
}

func (f *fakeChain) Account(context.Context, string) (*cosmoschain.Account, error) {
	return f.account, nil
}

func (f *fakeChain) Tx(_ context.Context, h string) (*cosmoschain.TxResult, error) {
	return f.txs[h], nil
}

// fakeService answers endpoint 3 with res or err.
type fakeService struct {
	res *apiclient.CelestiaBroadcastResult
	err error
}

func (f *fakeService) CelestiaSend(context.Context, string, apiclient.CelestiaSendRequest) (*apiclient.CelestiaBroadcastResult, error) {
	return f.res, f.err
}

func errType(t *testing.T, err error) string {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	return appErr.Type()
}

func TestBroadcastClassifies(t *testing.T) {
	const hash = "AB12"
	rejected := &apiclient.APIError{StatusCode: 400, Name: "TransactionRejectedException", Message: "Rejected: insufficient fees"}
	usedSeq := &apiclient.APIError{StatusCode: 400, Name: "TransactionRejectedException", Message: "Rejected: account sequence mismatch, expected 5, got 4"}
	for name, tc := range map[string]struct {
		svc  fakeService
		want string
	}{
		"other hash answered": {fakeService{res: &apiclient.CelestiaBroadcastResult{TransactionHash: "FFFF"}}, ErrWrongHash},
		"refused":             {fakeService{err: rejected}, activities.ErrTransactionRejected},
		"sequence used":       {fakeService{err: usedSeq}, activities.ErrBroadcastUncertain},
		"unavailable":         {fakeService{err: &apiclient.APIError{StatusCode: 503, Name: "ServiceUnavailable"}}, activities.ErrServiceUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			svc := tc.svc
			a := &Activities{Service: &svc}
			env.RegisterActivity(a)
			_, err := env.ExecuteActivity(a.CelestiaBroadcast, BroadcastInput{Network: signercosmos.NetworkMocha, TxBase64: "AA==", Hash: hash})
			require.Error(t, err)
			assert.Equal(t, tc.want, errType(t, err))
		})
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Activities{Service: &fakeService{res: &apiclient.CelestiaBroadcastResult{TransactionHash: "ab12", BlockID: 7}}}
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.CelestiaBroadcast, BroadcastInput{Network: signercosmos.NetworkMocha, TxBase64: "AA==", Hash: hash})
	require.NoError(t, err)
	var res BroadcastResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, BroadcastResult{Hash: hash, BlockID: 7}, res)
}

func TestConfirmOutcomes(t *testing.T) {
	in := ConfirmInput{Network: signercosmos.NetworkMocha, Delegator: "celestia1x", Sequence: 4, Hashes: []string{"A", "B"},
		PollInterval: time.Millisecond, ReplaceAfter: 20 * time.Millisecond}
	for name, tc := range map[string]struct {
		chain fakeChain
		want  ConfirmResult
		err   string
	}{
		"second build included": {chain: fakeChain{account: &cosmoschain.Account{Sequence: 5},
			txs: map[string]*cosmoschain.TxResult{"B": {Hash: "B", Height: 9}}},
			want: ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: "B", Height: 9, Fee: "400"}},
		"failed on chain": {chain: fakeChain{account: &cosmoschain.Account{Sequence: 5},
			txs: map[string]*cosmoschain.TxResult{"A": {Hash: "A", Height: 9, Code: 5, Codespace: "sdk", Log: "insufficient funds"}}},
			want: ConfirmResult{Outcome: activities.OutcomeFailed, Hash: "A", Height: 9, Fee: "400", Error: "code 5 (sdk): insufficient funds"}},
		"unseen, sequence unused": {chain: fakeChain{account: &cosmoschain.Account{Sequence: 4}},
			want: ConfirmResult{Outcome: activities.OutcomeReplace}},
		"sequence used by another": {chain: fakeChain{account: &cosmoschain.Account{Sequence: 5}}, err: ErrSequenceConflict},
	} {
		t.Run(name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			ch := tc.chain
			a := &Activities{Chains: map[string]Chain{signercosmos.NetworkMocha: &ch}}
			env.RegisterActivity(a)
			v, err := env.ExecuteActivity(a.CelestiaConfirm, in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Equal(t, tc.err, errType(t, err))
				return
			}
			require.NoError(t, err)
			var res ConfirmResult
			require.NoError(t, v.Get(&res))
			assert.Equal(t, tc.want, res)
		})
	}
}

func TestFeeIsTheMinimumGasPriceByDefault(t *testing.T) {
	a := &Activities{}
	assert.Equal(t, signercosmos.FeeParams{GasLimit: 200_000, Fee: 400}, a.fee())
	a = &Activities{GasLimit: 150_001, GasPriceMilli: 3}
	assert.Equal(t, uint64(451), a.fee().Fee, "rounded up")
}
