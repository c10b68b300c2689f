package celestia

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
)

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
	for name, tc := range map[string]struct {
		svc  fakeService
		want string
	}{
		"other hash answered": {fakeService{res: &apiclient.CelestiaBroadcastResult{TransactionHash: "FFFF"}}, ErrWrongHash},
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

func TestFeeIsTheMinimumGasPriceByDefault(t *testing.T) {
	a := &Activities{}
	assert.Equal(t, signercosmos.FeeParams{GasLimit: 200_000, Fee: 400}, a.fee())
	a = &Activities{GasLimit: 150_001, GasPriceMilli: 3}
	assert.Equal(t, uint64(451), a.fee().Fee, "rounded up")
}
