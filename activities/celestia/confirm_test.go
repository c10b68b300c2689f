package celestia

import (
	"context"
	"encoding/base64"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/approval"
	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
)

var (
	val1 = celestiachain.ValidatorAddress("1")
	val2 = celestiachain.ValidatorAddress("2")
)

// rest is a Celestia ledger behind an httptest Cosmos REST endpoint, a funded delegator whose key
// the activities' signer holds, and the activities reading it.
type rest struct {
	t    *testing.T
	l    *celestiachain.Ledger
	s    *signercosmos.Signer
	del  string
	acts *Activities
	url  string
}

func newREST(t *testing.T) *rest {
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
	l := celestiachain.New(celestiachain.Options{ChainID: "mocha-4", UnbondingTime: time.Hour, MinGasPriceMilli: 2, Validators: []string{val1, val2}})
	require.NoError(t, l.Fund(del, big.NewInt(10_000_000)))
	ts := httptest.NewServer(l.Handler())
	t.Cleanup(ts.Close)
	c := cosmoschain.New(ts.URL, "mocha-4", nil)
	require.NoError(t, c.Verify(context.Background()))
	s := signercosmos.NewSigner(kr, signercosmos.Policy{Validators: []string{val1, val2}, MaxFee: 10_000, MaxGas: 500_000})
	acts := &Activities{Chains: map[string]Chain{signercosmos.NetworkMocha: c}, Signer: s, StallAfter: time.Minute}
	return &rest{t: t, l: l, s: s, del: del, acts: acts, url: ts.URL}
}

// sign signs an operation of amount utia (undelegate when op says so) under sequence with a
// timeout height, as the worker does; it returns the bytes and the hash.
func (r *rest) sign(op, amount string, sequence, timeout uint64) ([]byte, string) {
	r.t.Helper()
	in := signercosmos.Intent{Operation: op, Network: signercosmos.NetworkMocha, Delegator: r.del, Validator: val1, Amount: amount, TimeoutHeight: timeout}
	pub, err := r.s.PubKey(r.del)
	require.NoError(r.t, err)
	a, ok := r.l.Account(r.del)
	require.True(r.t, ok)
	acct := signercosmos.Account{AccountNumber: a.Number, Sequence: sequence}
	u, err := signercosmos.Build(in, pub, acct, signercosmos.FeeParams{GasLimit: 200_000, Fee: 400}, "")
	require.NoError(r.t, err)
	signed, err := r.s.Sign(context.Background(), u, in, acct)
	require.NoError(r.t, err)
	raw, err := base64.StdEncoding.DecodeString(signed.TxBase64)
	require.NoError(r.t, err)
	return raw, signed.Hash
}

// confirm runs CelestiaConfirm for the builds hashes (each with timeout height timeout) of
// sequence, built at height from-1.
func (r *rest) confirm(sequence, from, timeout uint64, replaceAfter time.Duration, hashes ...string) (ConfirmResult, error) {
	r.t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(r.acts)
	in := ConfirmInput{Network: signercosmos.NetworkMocha, Delegator: r.del, Sequence: sequence, Hashes: hashes,
		FromHeight: from, PollInterval: 5 * time.Millisecond, ReplaceAfter: replaceAfter}
	for range hashes {
		in.TimeoutHeights = append(in.TimeoutHeights, timeout)
	}
	v, err := env.ExecuteActivity(r.acts.CelestiaConfirm, in)
	if err != nil {
		return ConfirmResult{}, err
	}
	var res ConfirmResult
	require.NoError(r.t, v.Get(&res))
	return res, nil
}

const never = 100 * 365 * 24 * time.Hour

// The index lags by several polls while the account shows the sequence used: not a conflict. The
// block at the broadcast height shows our transaction; its result comes once the index has it.
func TestConfirmLaggingIndexIsNoConflict(t *testing.T) {
	r := newREST(t)
	from := uint64(r.l.Height()) + 1
	raw, hash := r.sign(signercosmos.OpDelegate, "1000", 0, from+10)
	res := r.l.Broadcast(raw)
	require.Zero(t, res.Code, res.Log)
	r.l.SetIndexLag(5)

	got, err := r.confirm(0, from, from+10, never, "OTHERBUILD", hash)
	require.NoError(t, err)
	assert.Equal(t, ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: hash, Height: uint64(res.Height), Fee: "400"}, got)
}

// Our transaction included with an error: failed, with the chain's log.
func TestConfirmFailedOnChain(t *testing.T) {
	r := newREST(t)
	from := uint64(r.l.Height()) + 1
	raw, hash := r.sign(signercosmos.OpUndelegate, "1000", 0, from+10) // nothing delegated
	res := r.l.Broadcast(raw)
	require.NotZero(t, res.Code)
	require.NotZero(t, res.Height)

	got, err := r.confirm(0, from, from+10, never, hash)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeFailed, got.Outcome)
	assert.Equal(t, hash, got.Hash)
	assert.Contains(t, got.Error, res.Log)
}

// Another transaction of the delegator's key under the step's sequence is in a block while the
// index knows none of them: cannot land, naming it.
func TestConfirmBlockProvesAnotherTransactionHoldsTheSequence(t *testing.T) {
	r := newREST(t)
	from := uint64(r.l.Height()) + 1
	_, ours := r.sign(signercosmos.OpDelegate, "1000", 0, from+10)
	other, otherHash := r.sign(signercosmos.OpDelegate, "2000", 0, from+20)
	r.l.AdvanceBlocks(2)
	res := r.l.Broadcast(other)
	require.Zero(t, res.Code, res.Log)
	r.l.SetIndexLag(1_000_000)

	got, err := r.confirm(0, from, from+10, never, ours)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeCannotLand, got.Outcome)
	assert.Equal(t, otherHash, got.Holder)
	assert.Empty(t, got.Hash, "none of ours landed")
	assert.Contains(t, got.Error, otherHash)
}

// The chain past the timeout height, the sequence unused and our transaction in no block: cannot
// land, the timeout height the proof. Before that, a Confirm that may replace answers replace.
func TestConfirmTimeoutHeightPassed(t *testing.T) {
	r := newREST(t)
	from := uint64(r.l.Height()) + 1
	timeout := from + 3
	_, ours := r.sign(signercosmos.OpDelegate, "1000", 0, timeout)

	got, err := r.confirm(0, from, timeout, 20*time.Millisecond, ours)
	require.NoError(t, err)
	assert.Equal(t, ConfirmResult{Outcome: activities.OutcomeReplace}, got, "unseen, unused, timeout height ahead")

	r.l.AdvanceBlocks(int64(timeout) + 1 - r.l.Height()) // the chain at timeout+1
	got, err = r.confirm(0, from, timeout, 20*time.Millisecond, ours)
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeCannotLand, got.Outcome, "never replace once the timeout height passed")
	assert.Empty(t, got.Holder)
	assert.Contains(t, got.Error, "past timeout height")
	a, _ := r.l.Account(r.del)
	assert.Zero(t, a.Sequence)
}

// A Confirm that never replaces (a step that stopped replacing: cancelled) follows until the
// timeout height passes.
func TestConfirmFollowsUntilTheTimeoutHeight(t *testing.T) {
	r := newREST(t)
	from := uint64(r.l.Height()) + 1
	_, ours := r.sign(signercosmos.OpDelegate, "1000", 0, from+5)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 8 {
			time.Sleep(20 * time.Millisecond)
			r.l.AdvanceBlocks(1)
		}
	}()
	got, err := r.confirm(0, from, from+5, never, ours)
	<-done
	require.NoError(t, err)
	assert.Equal(t, activities.OutcomeCannotLand, got.Outcome)
	assert.Greater(t, uint64(r.l.Height()), from+5)
}

// Our transaction is in a block but the index never gives its result: no outcome is made up; past
// StallAfter the step is reported stalled (ChainRejected: the workflow stalls and confirms again).
func TestConfirmStallsWithoutTheResult(t *testing.T) {
	r := newREST(t)
	r.acts.StallAfter = 50 * time.Millisecond
	from := uint64(r.l.Height()) + 1
	raw, hash := r.sign(signercosmos.OpDelegate, "1000", 0, from+10)
	require.Zero(t, r.l.Broadcast(raw).Code)
	r.l.SetIndexLag(1_000_000)

	_, err := r.confirm(0, from, from+10, never, hash)
	require.Error(t, err)
	assert.Equal(t, activities.ErrChainRejected, errType(t, err))
	assert.Contains(t, err.Error(), hash+" is in block")
}

// endpoint 3 over the ledger: forward broadcasts the bytes first; err is its answer.
type refusingService struct {
	l       *celestiachain.Ledger
	forward bool
	err     error
}

func (s *refusingService) CelestiaSend(_ context.Context, _ string, req apiclient.CelestiaSendRequest) (*apiclient.CelestiaBroadcastResult, error) {
	if s.forward {
		raw, _ := base64.StdEncoding.DecodeString(req.SignedTransaction)
		s.l.Broadcast(raw)
	}
	return nil, s.err
}

// A 400 from endpoint 3 is not trusted alone: the same bytes go through the worker's own REST
// endpoint, and only a refusal there that proves they can never land ends the step.
func TestBroadcastRefusalCheckedOnTheChainsNode(t *testing.T) {
	refused := &apiclient.APIError{StatusCode: 400, Name: "TransactionRejectedException", Message: "Rejected: insufficient fees"}
	run := func(r *rest, svc *refusingService, raw []byte, hash string) (BroadcastResult, error) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestActivityEnvironment()
		r.acts.Service = svc
		env.RegisterActivity(r.acts)
		v, err := env.ExecuteActivity(r.acts.CelestiaBroadcast, BroadcastInput{Network: signercosmos.NetworkMocha,
			TxBase64: base64.StdEncoding.EncodeToString(raw), Hash: hash})
		if err != nil {
			return BroadcastResult{}, err
		}
		var res BroadcastResult
		require.NoError(t, v.Get(&res))
		return res, nil
	}
	t.Run("forwarded then refused", func(t *testing.T) {
		r := newREST(t)
		raw, hash := r.sign(signercosmos.OpDelegate, "1000", 0, 100)
		_, err := run(r, &refusingService{l: r.l, forward: true, err: refused}, raw, hash)
		require.Error(t, err)
		assert.Equal(t, activities.ErrBroadcastUncertain, errType(t, err), "the chain decides")
		_, landed := r.l.Tx(hash)
		assert.True(t, landed)
	})
	t.Run("refused, never sent", func(t *testing.T) {
		r := newREST(t)
		raw, hash := r.sign(signercosmos.OpDelegate, "1000", 0, 100)
		res, err := run(r, &refusingService{l: r.l, err: refused}, raw, hash)
		require.NoError(t, err, "the chain's node took it")
		assert.Equal(t, hash, res.Hash)
		_, landed := r.l.Tx(hash)
		assert.True(t, landed)
	})
	t.Run("bad signature", func(t *testing.T) {
		r := newREST(t)
		raw, _ := r.sign(signercosmos.OpDelegate, "1000", 0, 100)
		raw[len(raw)-1] ^= 1
		hash := signercosmos.TxHash(raw)
		_, err := run(r, &refusingService{l: r.l, err: refused}, raw, hash)
		require.Error(t, err)
		assert.Equal(t, activities.ErrTransactionRejected, errType(t, err))
		assert.Contains(t, err.Error(), "signature verification failed")
	})
	t.Run("sequence used by another", func(t *testing.T) {
		r := newREST(t)
		other, _ := r.sign(signercosmos.OpDelegate, "2000", 0, 100)
		require.Zero(t, r.l.Broadcast(other).Code)
		raw, hash := r.sign(signercosmos.OpDelegate, "1000", 0, 100)
		_, err := run(r, &refusingService{l: r.l, err: refused}, raw, hash)
		require.Error(t, err)
		assert.Equal(t, activities.ErrBroadcastUncertain, errType(t, err), "a used sequence may be ours: the chain decides")
	})
	t.Run("own REST unreachable", func(t *testing.T) {
		r := newREST(t)
		raw, hash := r.sign(signercosmos.OpDelegate, "1000", 0, 100)
		c := cosmoschain.New("http://127.0.0.1:1", "mocha-4", nil)
		r.acts.Chains[signercosmos.NetworkMocha] = c
		_, err := run(r, &refusingService{l: r.l, err: refused}, raw, hash)
		require.Error(t, err)
		assert.Equal(t, activities.ErrBroadcastUncertain, errType(t, err))
	})
}

// The worker's approvers travel with Celestia's policy decision, so that the workflow verifies
// signed decisions against them.
func TestCheckPolicyCarriesTheApprovers(t *testing.T) {
	r := newREST(t)
	who := []approval.Approver{{Name: "bob", PublicKey: make([]byte, 32), Fingerprint: "SHA256:x"}}
	r.acts.Policy = Policy{ApprovalThreshold: 100, Approvers: who}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(r.acts)
	v, err := env.ExecuteActivity(r.acts.CelestiaCheckPolicy, PolicyInput{Intent: signercosmos.Intent{
		Operation: signercosmos.OpDelegate, Network: signercosmos.NetworkMocha, Delegator: r.del, Validator: val1, Amount: "100"}})
	require.NoError(t, err)
	var d activities.PolicyDecision
	require.NoError(t, v.Get(&d))
	require.Equal(t, 1, d.ApprovalsRequired)
	require.Equal(t, who, d.Approvers)
}
