package celestia

import (
	"context"
	"encoding/base64"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	"github.com/stakeflow/stakeflow/apiclient"
	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
	"github.com/stakeflow/stakeflow/lease"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
)

var (
	val1 = celestiachain.ValidatorAddress("1")
	val2 = celestiachain.ValidatorAddress("2")
)

// service is endpoint 3 over a ledger; dropNext answers success without broadcasting.
type service struct {
	l        *celestiachain.Ledger
	mu       sync.Mutex
	sent     []string
	dropNext int
	// onSend runs after each send; beforeSend before the n-th (from 1).
	onSend     func()
	beforeSend func(n int)
}

func (s *service) CelestiaSend(_ context.Context, _ string, req apiclient.CelestiaSendRequest) (*apiclient.CelestiaBroadcastResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onSend != nil {
		defer s.onSend()
	}
	if s.beforeSend != nil {
		s.beforeSend(len(s.sent) + 1)
	}
	s.sent = append(s.sent, req.SignedTransaction)
	raw, err := base64.StdEncoding.DecodeString(req.SignedTransaction)
	if err != nil {
		return nil, &apiclient.APIError{StatusCode: 400, Message: "bad encoding"}
	}
	if s.dropNext > 0 {
		s.dropNext--
		return &apiclient.CelestiaBroadcastResult{Status: "success", TransactionHash: celestiachain.TxHash(raw)}, nil
	}
	res := s.l.Broadcast(raw)
	if res.Code != 0 && res.Height == 0 && res.Code != celestiachain.CodeTxInCache {
		return nil, &apiclient.APIError{StatusCode: 400, Name: "TransactionRejectedException", Message: "Rejected: " + res.Log}
	}
	return &apiclient.CelestiaBroadcastResult{Status: "success", BlockID: res.Height, TransactionHash: res.Hash}, nil
}

type harness struct {
	// leases and releases are the sequences granted and given back, in order.
	leases, releases []uint64
	t                *testing.T
	acts             *actcelestia.Activities
	l                *celestiachain.Ledger
	svc              *service
	del              string
	// cancelOnSend cancels the workflow once endpoint 3 was called.
	cancelOnSend bool
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	js, err := keystore.EncryptKey(&keystore.Key{Id: uuid.New(), Address: crypto.PubkeyToAddress(k.PublicKey), PrivateKey: k},
		"pw", keystore.LightScryptN, keystore.LightScryptP)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k.json"), js, 0o600))
	pass := filepath.Join(t.TempDir(), "p")
	require.NoError(t, os.WriteFile(pass, []byte("pw"), 0o600))
	kr, err := signercosmos.LoadKeyring(dir, pass)
	require.NoError(t, err)
	del := kr.Addresses()[0]

	l := celestiachain.New(celestiachain.Options{ChainID: "mocha-4", UnbondingTime: 21 * 24 * time.Hour, MinGasPriceMilli: 2, Validators: []string{val1, val2}})
	require.NoError(t, l.Fund(del, big.NewInt(10_000_000)))
	ts := httptest.NewServer(l.Handler())
	t.Cleanup(ts.Close)
	c := cosmoschain.New(ts.URL, "mocha-4", nil)
	require.NoError(t, c.Verify(context.Background()))
	svc := &service{l: l}
	acts := &actcelestia.Activities{
		Chains:  map[string]actcelestia.Chain{signercosmos.NetworkMocha: c},
		Signer:  signercosmos.NewSigner(kr, signercosmos.Policy{Validators: []string{val1, val2}, MaxFee: 10_000, MaxGas: 500_000}),
		Service: svc,
	}
	return &harness{t: t, acts: acts, l: l, svc: svc, del: del}
}

// run runs one workflow to its end in a fresh environment over the harness's ledger.
func (h *harness) run(wfType string, in Input) (Result, error) {
	h.t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.RegisterActivity(h.acts)
	Register(env)
	// The sequencer grants the chain's next sequence (as it reads it) and takes releases.
	env.OnActivity(h.acts.CelestiaRequestLease, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req lease.Request) error {
			n, err := h.acts.CelestiaReadNonces(context.Background(), lease.ReadInput{Network: req.Network, Address: req.Address})
			require.NoError(h.t, err)
			h.leases = append(h.leases, n.Latest)
			env.SignalWorkflow(lease.SignalGrant, lease.Grant{Nonce: n.Latest})
			return nil
		})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, lease.SignalRelease, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			h.releases = append(h.releases, arg.(lease.Release).Next)
			return nil
		})
	// Durable timers move the ledger's clock as far as they wait.
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { h.l.Warp(d) })
	h.svc.onSend = nil
	if h.cancelOnSend {
		h.svc.onSend = func() { env.CancelWorkflow() }
	}
	env.ExecuteWorkflow(wfType, in)
	require.True(h.t, env.IsWorkflowCompleted())
	var r Result
	if err := env.GetWorkflowError(); err != nil {
		return r, err
	}
	require.NoError(h.t, env.GetWorkflowResult(&r))
	return r, nil
}

func (h *harness) input(amount string) Input {
	return Input{Network: signercosmos.NetworkMocha, Delegator: h.del, Validator: val1, Amount: amount}
}

func TestDelegateThenUndelegateWaitsTheUnbondingPeriod(t *testing.T) {
	h := newHarness(t)
	r, err := h.run(DelegateWorkflowType, h.input("4000000"))
	require.NoError(t, err)
	require.Len(t, r.Transactions, 1)
	s := h.l.Snapshot()
	assert.Equal(t, []celestiachain.Delegation{{Delegator: h.del, Validator: val1, Amount: "4000000"}}, s.Delegations)
	assert.Equal(t, "5999600", s.Balances[h.del])
	assert.Equal(t, []string{r.Transactions[0].TxID}, s.Transactions)

	before := s.Time
	r, err = h.run(UndelegateWorkflowType, h.input("1500000"))
	require.NoError(t, err)
	assert.NotEmpty(t, r.UnbondedAt)
	s = h.l.Snapshot()
	assert.Empty(t, s.Unbonding, "matured")
	assert.GreaterOrEqual(t, s.Time.Sub(before), 21*24*time.Hour, "the workflow waited the unbonding period")
	assert.Equal(t, "7499200", s.Balances[h.del], "tokens back, two fees paid")
	assert.Equal(t, "2500000", s.Delegations[0].Amount)
	assert.Equal(t, []uint64{0, 1}, h.leases, "each operation leased the chain's next sequence")
	assert.Equal(t, []uint64{1, 2}, h.releases, "and gave back the one after its transaction")
}

func TestRedelegateAndWithdrawRewards(t *testing.T) {
	h := newHarness(t)
	_, err := h.run(DelegateWorkflowType, h.input("3000000"))
	require.NoError(t, err)
	require.NoError(t, h.l.AddRewards(h.del, val1, big.NewInt(1234)))
	r, err := h.run(WithdrawRewardsWorkflowType, Input{Network: signercosmos.NetworkMocha, Delegator: h.del, Validator: val1})
	require.NoError(t, err)
	assert.Equal(t, "1234", r.Amount)
	assert.Equal(t, "7000434", h.l.Snapshot().Balances[h.del]) // 10M - 3M - 2 fees + 1234

	in := h.input("1000000")
	in.DstValidator = val2
	_, err = h.run(RedelegateWorkflowType, in)
	require.NoError(t, err)
	s := h.l.Snapshot()
	require.Len(t, s.Delegations, 2)
	assert.Len(t, s.Redelegations, 1)
	assert.Len(t, s.Transactions, 3)

	// No rewards left: refused before anything is signed.
	_, err = h.run(WithdrawRewardsWorkflowType, Input{Network: signercosmos.NetworkMocha, Delegator: h.del, Validator: val1})
	require.Error(t, err)
	assert.Len(t, h.l.Snapshot().Transactions, 3)
}

// A service that answers success for a transaction it never broadcast: the step sees it unseen,
// its sequence unused, rebuilds under the same sequence (the same bytes) and sends again; one
// delegation.
func TestNeverLandedIsSentAgainUnderTheSameSequence(t *testing.T) {
	h := newHarness(t)
	h.svc.dropNext = 1
	h.acts.ReplaceAfter = 300 * time.Millisecond
	in := h.input("2000000")
	in.Options.ConfirmPollInterval = 10 * time.Millisecond
	r, err := h.run(DelegateWorkflowType, in)
	require.NoError(t, err)
	require.Len(t, h.svc.sent, 2)
	assert.Equal(t, h.svc.sent[0], h.svc.sent[1], "the same bytes")
	assert.Equal(t, 2, r.Transactions[0].Builds)
	s := h.l.Snapshot()
	assert.Equal(t, []celestiachain.Delegation{{Delegator: h.del, Validator: val1, Amount: "2000000"}}, s.Delegations)
	assert.Len(t, s.Transactions, 1)
}

// otherLastChar changes an address's last character to a different one, so its bech32 checksum
// fails whatever the (freshly generated) address ends with.
func otherLastChar(addr string) string {
	last := byte('q')
	if addr[len(addr)-1] == last {
		last = 'p'
	}
	return addr[:len(addr)-1] + string(last)
}

func TestBadInputRefusedBeforeStart(t *testing.T) {
	h := newHarness(t)
	for name, in := range map[string]Input{
		"zero amount":     h.input("0"),
		"wrong prefix":    {Network: signercosmos.NetworkMocha, Delegator: "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6", Validator: val1, Amount: "1"},
		"bad bech32":      {Network: signercosmos.NetworkMocha, Delegator: otherLastChar(h.del), Validator: val1, Amount: "1"},
		"unknown network": {Network: "celestia", Delegator: h.del, Validator: val1, Amount: "1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.run(DelegateWorkflowType, in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), activities.ErrInvalidInput)
		})
	}
	assert.Empty(t, h.l.Snapshot().Transactions)
}
