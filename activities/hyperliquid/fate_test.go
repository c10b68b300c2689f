package hyperliquid

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
	"github.com/stakeflow/stakeflow/lease"
)

// TestFateCannotLandOnlyOnceTheNonceLeftTheWindow: Hyperliquid's proof that an action cannot land
// is a history read after its nonce left the exchange's window (T - 2 days, per Hyperliquid's
// nonce rules, plus an hour for the worker's clock) that does not show it. A read one millisecond
// earlier proves nothing (keep following); a read after it that shows the withdrawal, even late,
// finds it; a withdrawal of the same amount the history showed before the signature is not it.
func TestFateCannotLandOnlyOnceTheNonceLeftTheWindow(t *testing.T) {
	// From outside the code: 2 days and an hour after the nonce's millisecond time.
	closes := time.Date(2025, 11, 26, 17, 0, 0, 0, time.UTC) // 1764000000000 is 2025-11-24T16:00:00Z
	require.Equal(t, closes, WindowClosed(testNonce).UTC())
	ours := hlchain.Withdrawal{Hash: "0xours", Wei: 250000000, Time: signedAt.Add(2 * time.Second)}
	known := hlchain.Withdrawal{Hash: "0xknown", Wei: 250000000, Time: signedAt.Add(-time.Minute)}
	for _, c := range []struct {
		name    string
		acc     Account
		outcome string
		hash    string
	}{
		{"unseen, read just before the window closed", Account{Account: hlchain.Account{Finalized: []hlchain.Withdrawal{known}}, ReadAt: closes.Add(-time.Millisecond)}, "", ""},
		{"unseen, read as the window closed", Account{Account: hlchain.Account{Finalized: []hlchain.Withdrawal{known}}, ReadAt: closes}, activities.OutcomeCannotLand, ""},
		{"unseen, read long after", Account{ReadAt: closes.Add(30 * 24 * time.Hour)}, activities.OutcomeCannotLand, ""},
		{"unseen, read time unknown", Account{}, "", ""},
		{"shown pending, read after the window", Account{Account: hlchain.Account{Pending: []hlchain.Withdrawal{ours}}, ReadAt: closes.Add(time.Hour)}, activities.OutcomeFinalized, "0xours"},
		{"shown finalized, read early", Account{Account: hlchain.Account{Finalized: []hlchain.Withdrawal{known, ours}}, ReadAt: signedAt.Add(time.Minute)}, activities.OutcomeFinalized, "0xours"},
		{"only another amount shown", Account{Account: hlchain.Account{Pending: []hlchain.Withdrawal{{Hash: "0xother", Wei: 250000001, Time: ours.Time}}}, ReadAt: closes}, activities.OutcomeCannotLand, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, outcome := Fate(c.acc, 250000000, testNonce, []string{"0xknown"})
			assert.Equal(t, c.outcome, outcome)
			assert.Equal(t, c.hash, w.Hash)
		})
	}
}

// TestReadAccountStampsTheReadTime: the account read carries the worker's time before the read,
// which the proof rests on.
func TestReadAccountStampsTheReadTime(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	old := now
	t.Cleanup(func() { now = old })
	now = func() time.Time { return at }
	a := &Activities{APIs: map[string]API{"testnet": &fakeAPI{}}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.HLReadAccount, AccountInput{Network: "testnet", Delegator: "0x1111111111111111111111111111111111111111"})
	require.NoError(t, err)
	var acc Account
	require.NoError(t, v.Get(&acc))
	assert.True(t, at.Equal(acc.ReadAt), "%s", acc.ReadAt)
}

// starter records SignalWithStartWorkflow calls.
type starter struct {
	ids   []string
	args  []any
	state []any
}

func (s *starter) SignalWithStartWorkflow(_ context.Context, id, signal string, arg any, _ client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	s.ids = append(s.ids, id)
	s.args = append(s.args, arg)
	s.state = append(s.state, args...)
	return nil, nil
}

// TestRequestLeaseStartsTheDelegatorsLease: the lease of a Hyperliquid delegator is its own (not
// the EVM lease of the same address on the EVM network called mainnet), read by HLReadLease,
// which counts no nonce; a network the worker has no API for is refused.
func TestRequestLeaseStartsTheDelegatorsLease(t *testing.T) {
	st := &starter{}
	a := &Activities{APIs: map[string]API{"mainnet": &fakeAPI{}}, Temporal: st, TaskQueue: "q"}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	addr := "0x1111111111111111111111111111111111111111"
	_, err := env.ExecuteActivity(a.HLRequestLease, lease.Request{Network: "mainnet", Address: addr, WorkflowID: "op-1"})
	require.NoError(t, err)
	require.Equal(t, []string{"nonce-lease/hyperliquid/mainnet/" + addr}, st.ids)
	assert.NotEqual(t, "nonce-lease/evm/mainnet/"+addr, st.ids[0], "not the EVM mainnet lease of the same address")
	assert.Equal(t, lease.State{Chain: lease.Hyperliquid, Network: "mainnet", Address: addr}, st.state[0])

	v, err := env.ExecuteActivity(a.HLReadLease, lease.ReadInput{Network: "mainnet", Address: addr})
	require.NoError(t, err)
	var n lease.Nonces
	require.NoError(t, v.Get(&n))
	assert.Equal(t, lease.Nonces{}, n)

	for _, network := range []string{"testnet", "hyperliquid-mainnet"} {
		_, err = env.ExecuteActivity(a.HLRequestLease, lease.Request{Network: network, Address: addr, WorkflowID: "op-2"})
		var ae *temporal.ApplicationError
		require.True(t, errors.As(err, &ae), "%s: %v", network, err)
		assert.True(t, ae.NonRetryable(), network)
	}
	_, err = env.ExecuteActivity(a.HLReadLease, lease.ReadInput{Network: "hyperliquid-mainnet", Address: addr})
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "a network name that is not Hyperliquid's: %v", err)
	assert.True(t, ae.NonRetryable())
	assert.Len(t, st.ids, 1)
}
