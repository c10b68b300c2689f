package hyperliquid

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	hlsigner "github.com/stakeflow/stakeflow/signer/hyperliquid"
	"github.com/stakeflow/stakeflow/store"
)

// worker is one run of a worker: a signer with an empty memory over the store at dsn.
func worker(t *testing.T, dsn string) *Activities {
	t.Helper()
	k, err := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	require.NoError(t, err)
	db, err := store.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return &Activities{Signer: hlsigner.New(signerevm.KeyringOf(k), hlsigner.Policy{}), APIs: map[string]API{"testnet": &fakeAPI{}}, Nonces: db}
}

func signAs(t *testing.T, a *Activities, op string, in SignInput) (Signed, error) {
	t.Helper()
	old := operationOf
	t.Cleanup(func() { operationOf = old })
	operationOf = func(context.Context) string { return op }
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.HLSign, in)
	var out Signed
	if err == nil {
		require.NoError(t, v.Get(&out))
	}
	return out, err
}

// TestNonceOneOperationAcrossRestarts: a nonce signed for one operation is refused to another
// after the worker restarted (a new signer, whose memory is empty, over the same store), before
// anything is signed; the first operation signing it again gets the same signature.
func TestNonceOneOperationAcrossRestarts(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "stakeflow.db")
	nonce := uint64(time.Now().UnixMilli())
	in := SignInput{RequestInput: RequestInput{Network: "testnet", Delegator: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23", Amount: "1"},
		Unsigned: fmt.Sprintf(`{"type":"cWithdraw","signatureChainId":"0x66eee","hyperliquidChain":"Testnet","wei":100000000,"nonce":%d}`, nonce)}

	first, err := signAs(t, worker(t, dsn), "op-a", in)
	require.NoError(t, err)

	restarted := worker(t, dsn)
	_, err = signAs(t, restarted, "op-b", in)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, activities.ErrVerificationFailed, ae.Type())
	assert.True(t, ae.NonRetryable())
	assert.Contains(t, err.Error(), fmt.Sprintf("got %d, recorded by operation op-a; nothing was signed", nonce))

	again, err := signAs(t, restarted, "op-a", in)
	require.NoError(t, err)
	assert.Equal(t, first, again, "the same action, the same signature")
}

// failingBook is a nonce book that cannot be written.
type failingBook struct{}

func (failingBook) ClaimNonce(context.Context, string, uint64, string, time.Time) error {
	return errors.New("database is locked")
}

// TestNonceBookUnavailableSignsNothing: a nonce that cannot be recorded is retried, never signed
// unrecorded.
func TestNonceBookUnavailableSignsNothing(t *testing.T) {
	a := worker(t, "sqlite:"+filepath.Join(t.TempDir(), "s.db"))
	a.Nonces = failingBook{}
	in := SignInput{RequestInput: RequestInput{Network: "testnet", Delegator: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23", Amount: "1"},
		Unsigned: fmt.Sprintf(`{"type":"cWithdraw","signatureChainId":"0x66eee","hyperliquidChain":"Testnet","wei":100000000,"nonce":%d}`, time.Now().UnixMilli())}
	_, err := signAs(t, a, "op-a", in)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, ErrNonceBook, ae.Type())
	assert.False(t, ae.NonRetryable())
}

// TestSignRefusesAnAnswerThatContradictsItself: endpoint 6's echoed amount (2) against its
// action's wei (1 HYPE, as asked) fails HLSign with VerificationFailed, non-retryable, naming
// both values; nothing is signed and no nonce is recorded for the operation.
func TestSignRefusesAnAnswerThatContradictsItself(t *testing.T) {
	a := worker(t, "sqlite:"+filepath.Join(t.TempDir(), "s.db"))
	nonce := uint64(time.Now().UnixMilli())
	in := SignInput{RequestInput: RequestInput{Network: "testnet", Delegator: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23", Amount: "1"},
		EchoedAmount: "2",
		Unsigned:     fmt.Sprintf(`{"type":"cWithdraw","signatureChainId":"0x66eee","hyperliquidChain":"Testnet","wei":100000000,"nonce":%d}`, nonce)}
	_, err := signAs(t, a, "op-a", in)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, activities.ErrVerificationFailed, ae.Type())
	assert.True(t, ae.NonRetryable())
	assert.Contains(t, err.Error(), `its amount "2"`)
	assert.Contains(t, err.Error(), "its action's wei 100000000")
	assert.Contains(t, err.Error(), "nothing was signed")
	// The nonce is still free: the same request, its echo agreeing, signs for another operation.
	in.EchoedAmount = "1"
	_, err = signAs(t, a, "op-b", in)
	require.NoError(t, err)
}
