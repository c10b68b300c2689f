package ton

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/workflows"
)

const (
	hashHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	hashB64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
)

func newEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env)
	env.RegisterActivity(ta)
	return env
}

// TestWatchFound: the hash given in base64 reaches the confirm activity as hex, once, with the
// deadline an hour after the start; the result and the status carry the transaction.
func TestWatchFound(t *testing.T) {
	env := newEnv()
	var got []actton.ConfirmInput
	tx := actton.Transaction{Hash: hashHex, Account: "EQAccount", Lt: "47000000000001", OldStatus: "active", EndStatus: "active", Outcome: actton.OutcomeFinal}
	env.OnActivity(ta.TONConfirm, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in actton.ConfirmInput) (actton.Transaction, error) {
			got = append(got, in)
			return tx, nil
		})
	start := env.Now()
	env.ExecuteWorkflow(WatchWorkflowType, WatchInput{Network: "testnet", Hash: hashB64})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res WatchResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, tx, res.Transaction)
	require.Len(t, got, 1)
	assert.Equal(t, hashHex, got[0].Hash)
	assert.True(t, start.Add(time.Hour).Equal(got[0].Deadline), "deadline %s", got[0].Deadline)
	v, err := env.QueryWorkflow(workflows.QueryStatus)
	require.NoError(t, err)
	var st workflows.Status
	require.NoError(t, v.Get(&st))
	assert.Equal(t, workflows.StepDone, st.Step)
	assert.Equal(t, "EQAccount", st.Account)
}

// TestWatchNotFound: the confirm step's "not found" fails the operation naming the hash.
func TestWatchNotFound(t *testing.T) {
	env := newEnv()
	env.OnActivity(ta.TONConfirm, mock.Anything, mock.Anything).Return(actton.Transaction{},
		temporal.NewNonRetryableApplicationError("TON transaction "+hashHex+" not found on testnet", actton.ErrTransactionNotFound, nil)).Once()
	env.ExecuteWorkflow(WatchWorkflowType, WatchInput{Network: "testnet", Hash: hashHex, Deadline: time.Minute})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), hashHex)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	env.AssertExpectations(t)
}

func TestWatchInputValidate(t *testing.T) {
	for _, c := range []struct {
		in    WatchInput
		field string
	}{
		{WatchInput{Network: "devnet", Hash: hashHex}, "network"},
		{WatchInput{Network: "mainnet"}, "hash"},
		{WatchInput{Network: "mainnet", Hash: "zz"}, "hash"},
		{WatchInput{Network: "mainnet", Hash: hashHex, Deadline: -time.Second}, "deadline"},
		{WatchInput{Network: "mainnet", Hash: hashHex, Deadline: 8 * 24 * time.Hour}, "deadline"},
	} {
		err := c.in.Validate()
		var ie *workflows.InputError
		require.True(t, errors.As(err, &ie), "%+v", c.in)
		assert.Equal(t, c.field, ie.Field)
	}
	require.NoError(t, WatchInput{Network: "mainnet", Hash: strings.ToUpper(hashHex), Deadline: time.Minute}.Validate())
}
