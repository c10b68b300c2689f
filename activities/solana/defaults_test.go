package solana

import (
	"github.com/stakeflow/stakeflow/activities"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
)

// absentThenFinalized is n absent reads of a signature, then finalized: a Confirm that does not
// call the transaction expired within n reads ends finalized.
func absentThenFinalized(n int) []*solchain.SignatureStatus {
	out := make([]*solchain.SignatureStatus, 0, n+1)
	for range n {
		out = append(out, absent)
	}
	return append(out, finalized)
}

// confirmDefault runs Confirm as the workflow does, with no ExpiryMarginBlocks (the default
// applies), optionally resuming from heartbeat details.
func confirmDefault(t *testing.T, f *fakeChain, resumeFrom *confirmProgress) ConfirmResult {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Chains: map[string]SolanaReader{"testnet": f}}
	env.RegisterActivity(acts)
	if resumeFrom != nil {
		env.SetHeartbeatDetails(*resumeFrom)
	}
	v, err := env.ExecuteActivity(acts.Confirm, ConfirmInput{Network: "testnet", Signature: sig, RecentBlockhash: hash, PollInterval: time.Millisecond})
	require.NoError(t, err)
	var res ConfirmResult
	require.NoError(t, v.Get(&res))
	return res
}

// TestConfirmDefaultExpiryMarginIs300Blocks: docs/exactly-once.md "the finalized block height has moved two
// blockhash lifetimes (300 blocks) past where confirmation began". With ExpiryMarginBlocks unset, an
// absent transaction whose blockhash is invalid is not expired 300 blocks past the start height,
// and is 301 blocks past it.
func TestConfirmDefaultExpiryMarginIs300Blocks(t *testing.T) {
	t.Run("300 blocks past the start: not proof", func(t *testing.T) {
		f := &fakeChain{statuses: absentThenFinalized(20), valid: []bool{false}, heights: []uint64{1000, 1300}}
		res := confirmDefault(t, f, nil)
		require.Equal(t, activities.OutcomeFinalized, res.Outcome, "not called expired at 300 blocks; it then landed")
	})
	t.Run("301 blocks past the start: expired", func(t *testing.T) {
		f := &fakeChain{statuses: absentThenFinalized(20), valid: []bool{false}, heights: []uint64{1000, 1301}}
		res := confirmDefault(t, f, nil)
		require.Equal(t, activities.OutcomeCannotLand, res.Outcome)
	})
}

// TestConfirmResumesFromItsHeartbeat: a retried Confirm takes the start height from its last
// heartbeat instead of reading a new one, so a proof of expiry already under way is kept.
func TestConfirmResumesFromItsHeartbeat(t *testing.T) {
	t.Run("resumed", func(t *testing.T) {
		// Every height read is 1301: a fresh start would read it as its start and never expire.
		f := &fakeChain{statuses: absentThenFinalized(20), valid: []bool{false}, heights: []uint64{1301}}
		res := confirmDefault(t, f, &confirmProgress{StartHeight: 1000})
		require.Equal(t, activities.OutcomeCannotLand, res.Outcome, "301 blocks past the heartbeat's start height")
		require.Equal(t, 1, f.heightReads, "only the proof's height read; the start height came from the heartbeat")
	})
	t.Run("without a heartbeat the same chain is not proof", func(t *testing.T) {
		f := &fakeChain{statuses: absentThenFinalized(20), valid: []bool{false}, heights: []uint64{1301}}
		res := confirmDefault(t, f, nil)
		require.Equal(t, activities.OutcomeFinalized, res.Outcome)
	})
	t.Run("what it heartbeats is what it resumes from", func(t *testing.T) {
		f := &fakeChain{statuses: []*solchain.SignatureStatus{absent, absent, finalized}, valid: []bool{true}, heights: []uint64{1000}}
		_, beats, err := confirmWith(t, &Activities{Chains: map[string]SolanaReader{"testnet": f}, ConfirmHeartbeatAfter: time.Nanosecond})
		require.NoError(t, err)
		require.NotEmpty(t, beats)
		require.Equal(t, confirmProgress{StartHeight: 1000}, beats[len(beats)-1])
	})
}
