//go:build integration

package sandbox

import (
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
)

// hostileFor sets mode on the shared sandbox until the test ends.
func hostileFor(t *testing.T, mode HostileMode) {
	t.Helper()
	require.NoError(t, shared.SetHostile(mode))
	t.Cleanup(func() { require.NoError(t, shared.SetHostile(HostileNone)) })
}

// landStake builds a stake of amount for key, signs, broadcasts it and waits
// until it is finalized.
func landStake(t *testing.T, cl *apiclient.Client, key solana.PrivateKey, amount string) (*apiclient.UnsignedTransaction, *solana.Transaction) {
	t.Helper()
	st := stakeTx(t, cl, key, amount)
	tx, signed := signTx(t, st.UnsignedTransactionData, key)
	_, err := cl.Broadcast(testCtx(t), broadcastReq(key, signed))
	require.NoError(t, err)
	waitFinalized(t, shared, tx.Signatures[0])
	return st, tx
}

// TestFeeHeavyLandsWithItsPriorityFee: the fee-heavy stake lands and costs
// the staker the signature fee plus 1,400,000 lamports of priority fee.
func TestFeeHeavyLandsWithItsPriorityFee(t *testing.T) {
	cl := client(t, shared.URL(), "fee-heavy")
	key := fundedStaker(t, shared, 5*solLamports)
	hostileFor(t, HostileFeeHeavy)
	before := balance(t, shared, key.PublicKey())
	_, tx := landStake(t, cl, key, "2000000000")
	const fee = lamportsPerSignature + 1_400_000
	assert.EqualValues(t, before-2*solLamports-fee, balance(t, shared, key.PublicKey()))
	got, err := shared.Runtime().RPC().GetTransaction(testCtx(t), tx.Signatures[0], &rpc.GetTransactionOpts{Encoding: solana.EncodingBase64})
	require.NoError(t, err)
	require.NotNil(t, got.Meta)
	assert.EqualValues(t, fee, got.Meta.Fee)
}

// TestLockupLandsOnChain: the stake account the lockup stake creates is
// locked up on chain until 2100 with the staker as custodian.
func TestLockupLandsOnChain(t *testing.T) {
	cl := client(t, shared.URL(), "lockup")
	key := fundedStaker(t, shared, 5*solLamports)
	hostileFor(t, HostileLockup)
	_, tx := landStake(t, cl, key, "2000000000")
	info, err := shared.Runtime().RPC().GetAccountInfoWithOpts(testCtx(t), stakeAccountOf(t, tx),
		&rpc.GetAccountInfoOpts{Commitment: rpc.CommitmentProcessed})
	require.NoError(t, err)
	data := info.Value.Data.GetBinary()
	require.GreaterOrEqual(t, len(data), 124)
	// Meta: rent-exempt reserve, authorized (staker, withdrawer), lockup.
	assert.EqualValues(t, 4_102_444_800, binary.LittleEndian.Uint64(data[76:84]), "unix timestamp")
	assert.EqualValues(t, 1_000_000, binary.LittleEndian.Uint64(data[84:92]), "epoch")
	assert.Equal(t, key.PublicKey(), solana.PublicKeyFromBytes(data[92:124]), "custodian")
}

// TestReplayServesTheLandedTransaction: after a stake landed, replay mode
// serves its transaction again byte for byte, so signing it gives the
// signature that already landed; with nothing built before for a staker and
// operation, replay mode builds honestly.
func TestReplayServesTheLandedTransaction(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "replay")
	key := fundedStaker(t, shared, 10*solLamports)
	first, landed := landStake(t, cl, key, "2000000000")

	hostileFor(t, HostileReplay)
	again := stakeTx(t, cl, key, "3000000000")
	assert.Equal(t, first.UnsignedTransactionData, again.UnsignedTransactionData)
	assert.Equal(t, first.ExtraData, again.ExtraData)
	assert.Equal(t, *first.Amount, *again.Amount)
	resigned, signed := signTx(t, again.UnsignedTransactionData, key)
	assert.Equal(t, landed.Signatures[0], resigned.Signatures[0], "the signature that already landed")
	_, err := cl.Broadcast(ctx, broadcastReq(key, signed))
	requireRejected(t, err, "AlreadyProcessed")

	// Nothing built yet for this staker's unstake: honest, then served again.
	acc := stakeAccountOf(t, landed)
	req := apiclient.UnstakeRequest{Chain: "solana", Network: "testnet", StakerAddress: key.PublicKey().String(),
		Extra: apiclient.UnstakeExtra{Amount: "2000000000", StakeAccount: acc.String()}}
	un, err := cl.Unstake(ctx, req)
	require.NoError(t, err)
	_, ixs := decodeIxs(t, un.UnsignedTransactionData)
	require.Len(t, ixs, 1)
	assert.True(t, ixs[0].accounts[0].Equals(acc))
	un2, err := cl.Unstake(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, un.UnsignedTransactionData, un2.UnsignedTransactionData)

	// Another staker's last stake is not served.
	other := fundedStaker(t, shared, 5*solLamports)
	fresh := stakeTx(t, cl, other, "2000000000")
	assert.NotEqual(t, first.UnsignedTransactionData, fresh.UnsignedTransactionData)
	tx, _ := decodeIxs(t, fresh.UnsignedTransactionData)
	assert.Equal(t, other.PublicKey(), tx.Message.AccountKeys[0])
}

// TestDelinquentValidatorStakeLands: the stake goes to a validator the
// chain lists as delinquent while the service says it is active; the lie
// ends with the mode.
func TestDelinquentValidatorStakeLands(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "delinquent")
	key := fundedStaker(t, shared, 5*solLamports)
	hostileFor(t, HostileDelinquentValidator)
	st, tx := landStake(t, cl, key, "2000000000")
	vote := delegatedTo(t, st.UnsignedTransactionData)
	assert.Equal(t, vote.String(), st.ExtraData.VoteAccount)

	votes, err := shared.Runtime().RPC().GetVoteAccounts(ctx, nil)
	require.NoError(t, err)
	var delinquent []solana.PublicKey
	for _, v := range votes.Delinquent {
		delinquent = append(delinquent, v.VotePubkey)
	}
	assert.Contains(t, delinquent, vote, "the chain knows")
	healthy := shared.Runtime().VoteAccounts()[0].String()
	assert.Equal(t, map[string]string{vote.String(): "active", healthy: "active"},
		validatorStatuses(t, cl, vote.String(), healthy), "the service lies")
	_, state := readStake(t, shared, stakeAccountOf(t, tx))
	assert.Equal(t, vote, state.Voter, "delegated on chain")

	require.NoError(t, shared.SetHostile(HostileNone))
	assert.Equal(t, "delinquent", validatorStatuses(t, cl, vote.String())[vote.String()])
}

// TestUnlistedValidatorIsReal: the unlisted validator is a real, current
// vote account none of the sandbox's own; it is created once and reused.
func TestUnlistedValidatorIsReal(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "unlisted")
	key := fundedStaker(t, shared, 10*solLamports)
	hostileFor(t, HostileUnlistedValidator)
	st, tx := landStake(t, cl, key, "2000000000")
	vote := delegatedTo(t, st.UnsignedTransactionData)
	assert.Equal(t, vote.String(), st.ExtraData.VoteAccount)
	assert.NotContains(t, shared.Runtime().VoteAccounts(), vote)
	assert.NotContains(t, shared.Runtime().DelinquentVoteAccounts(), vote)
	_, state := readStake(t, shared, stakeAccountOf(t, tx))
	assert.Equal(t, vote, state.Voter, "delegated on chain")

	before, err := shared.Runtime().RPC().GetVoteAccounts(ctx, nil)
	require.NoError(t, err)
	again := stakeTx(t, cl, key, "2000000000")
	assert.Equal(t, vote, delegatedTo(t, again.UnsignedTransactionData), "the same validator")
	after, err := shared.Runtime().RPC().GetVoteAccounts(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, after.Current, len(before.Current), "no second validator created")
}

// TestPickVoteAccount: the sandbox's own choice is the first candidate that
// is current with a commission of at most 10%.
func TestPickVoteAccount(t *testing.T) {
	a, b, c := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	current := func(v solana.PublicKey, commission uint8) rpc.VoteAccountsResult {
		return rpc.VoteAccountsResult{VotePubkey: v, Commission: commission}
	}
	for _, tc := range []struct {
		name       string
		candidates []solana.PublicKey
		current    []rpc.VoteAccountsResult
		want       solana.PublicKey
		ok         bool
	}{
		{"first current", []solana.PublicKey{a, b}, []rpc.VoteAccountsResult{current(b, 5), current(a, 10)}, a, true},
		{"delinquent first is skipped", []solana.PublicKey{a, b}, []rpc.VoteAccountsResult{current(b, 10)}, b, true},
		{"greedy commission is skipped", []solana.PublicKey{a, b}, []rpc.VoteAccountsResult{current(a, 11), current(b, 0)}, b, true},
		{"only candidates", []solana.PublicKey{a}, []rpc.VoteAccountsResult{current(c, 0)}, solana.PublicKey{}, false},
		{"none", nil, []rpc.VoteAccountsResult{current(a, 0)}, solana.PublicKey{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := pickVoteAccount(tc.candidates, tc.current)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}
