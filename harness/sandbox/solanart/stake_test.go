//go:build integration

package solanart

import (
	"context"
	"fmt"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// neverEpoch is an epoch length the wall clock does not cross during a test (about 14
// hours at testSlotDuration), so only WarpEpochs moves epochs.
const neverEpoch = 1 << 20

func stats(t *testing.T, ctx context.Context, r *Runtime) Stats {
	t.Helper()
	s, err := r.Stats(ctx)
	require.NoError(t, err)
	return s
}

// activatedStake returns getVoteAccounts' activatedStake of every listed vote account.
func activatedStake(t *testing.T, ctx context.Context, r *Runtime) map[solana.PublicKey]uint64 {
	t.Helper()
	votes, err := r.RPC().GetVoteAccounts(ctx, &rpc.GetVoteAccountsOpts{Commitment: rpc.CommitmentConfirmed})
	require.NoError(t, err)
	out := map[solana.PublicKey]uint64{}
	for _, v := range append(votes.Current, votes.Delinquent...) {
		out[v.VotePubkey] = v.ActivatedStake
	}
	return out
}

// scannedStake recomputes activated stake from every stake account.
func scannedStake(t *testing.T, ctx context.Context, r *Runtime) map[solana.PublicKey]uint64 {
	t.Helper()
	var raw map[string]uint64
	require.NoError(t, r.call(ctx, &raw, "sandbox_scanActivatedStake"))
	out := make(map[solana.PublicKey]uint64, len(raw))
	for k, v := range raw {
		out[solana.MustPublicKeyFromBase58(k)] = v
	}
	return out
}

func TestGetVoteAccountsCostDoesNotGrowWithStakeAccounts(t *testing.T) {
	r := startRuntime(t, Options{SlotsPerEpoch: neverEpoch})
	ctx := testContext(t)
	c := r.RPC()
	const delegated = solana.LAMPORTS_PER_SOL
	payer := fundedWallet(t, ctx, r, 100*solana.LAMPORTS_PER_SOL)
	vote := r.VoteAccounts()[0]

	made := 0
	for _, n := range []int{1, 40} {
		// Landing a stake transaction reads the accounts it names, however many stake
		// accounts exist already.
		for ; made < n; made++ {
			before := stats(t, ctx, r)
			_, tx := stakeFromSeed(t, ctx, c, payer, vote, fmt.Sprintf("cost:%d", made), delegated)
			after := stats(t, ctx, r)
			assert.Equal(t, uint64(len(tx.Message.AccountKeys)), after.AccountsScanned-before.AccountsScanned, "stake transaction %d", made)
		}
		require.NoError(t, r.WarpEpochs(ctx, 1))

		before := stats(t, ctx, r)
		assert.Equal(t, uint64(n), before.StakeAccountsIndexed)
		got := activatedStake(t, ctx, r)
		after := stats(t, ctx, r)
		assert.Zero(t, after.AccountsScanned-before.AccountsScanned, "getVoteAccounts read accounts with %d stake accounts", n)
		assert.Equal(t, uint64(n)*delegated, got[vote])

		// A full scan, which getVoteAccounts used to make on every call, reads every one.
		scanned := scannedStake(t, ctx, r)
		assert.Equal(t, uint64(n), stats(t, ctx, r).AccountsScanned-after.AccountsScanned)
		assert.Equal(t, got[vote], scanned[vote])
	}
}

func TestActivatedStakeFollowsStakeLifecycle(t *testing.T) {
	r := startRuntime(t, Options{SlotsPerEpoch: neverEpoch, VoteAccounts: 2, DelinquentVoteAccounts: 1})
	ctx := testContext(t)
	c := r.RPC()
	const sol = solana.LAMPORTS_PER_SOL
	payer := fundedWallet(t, ctx, r, 100*sol)
	staker := payer.PublicKey()
	vote0, vote1 := r.VoteAccounts()[0], r.VoteAccounts()[1]
	delinquent := r.DelinquentVoteAccounts()[0]

	send := func(t *testing.T, ixs ...solana.Instruction) {
		t.Helper()
		_, err := c.SendTransaction(ctx, buildTx(t, ctx, c, payer, ixs...))
		require.NoError(t, err)
	}
	warp := func(t *testing.T) {
		t.Helper()
		require.NoError(t, r.WarpEpochs(ctx, 1))
	}
	var a, d solana.PublicKey

	steps := []struct {
		name string
		act  func(t *testing.T)
		want map[solana.PublicKey]uint64 // vote accounts not named have 0
	}{
		{
			name: "delegations count from the epoch after delegation",
			act: func(t *testing.T) {
				a, _ = stakeFromSeed(t, ctx, c, payer, vote0, "a", 2*sol)
				stakeFromSeed(t, ctx, c, payer, vote0, "b", 3*sol)
				stakeFromSeed(t, ctx, c, payer, vote1, "c", 1*sol)
				stakeFromSeed(t, ctx, c, payer, delinquent, "e", 5*sol)
				d, _ = stakeFromSeed(t, ctx, c, payer, vote1, "d", 4*sol)
			},
		},
		{
			name: "deactivated in its delegation epoch, never counts",
			act:  func(t *testing.T) { send(t, stake.NewDeactivateInstruction(d, staker).Build()) },
		},
		{
			name: "warp: delegations count",
			act:  warp,
			want: map[solana.PublicKey]uint64{vote0: 5 * sol, vote1: 1 * sol, delinquent: 5 * sol},
		},
		{
			name: "deactivated stake counts through its deactivation epoch",
			act:  func(t *testing.T) { send(t, stake.NewDeactivateInstruction(a, staker).Build()) },
			want: map[solana.PublicKey]uint64{vote0: 5 * sol, vote1: 1 * sol, delinquent: 5 * sol},
		},
		{
			name: "warp: deactivated stake no longer counts",
			act:  warp,
			want: map[solana.PublicKey]uint64{vote0: 3 * sol, vote1: 1 * sol, delinquent: 5 * sol},
		},
		{
			name: "withdraw closes the inactive stake account",
			act: func(t *testing.T) {
				info, err := c.GetAccountInfo(ctx, a)
				require.NoError(t, err)
				send(t, stake.NewWithdrawInstruction(info.Value.Lamports, a, staker, staker).Build())
				_, err = c.GetAccountInfo(ctx, a)
				require.ErrorIs(t, err, rpc.ErrNotFound)
			},
			want: map[solana.PublicKey]uint64{vote0: 3 * sol, vote1: 1 * sol, delinquent: 5 * sol},
		},
		{
			name: "inactive stake delegated again to another vote account",
			act: func(t *testing.T) {
				ix := stake.NewDelegateStakeInstruction(vote0, staker, d)
				ix.AccountMetaSlice[0].IsSigner = false
				send(t, ix.Build())
			},
			want: map[solana.PublicKey]uint64{vote0: 3 * sol, vote1: 1 * sol, delinquent: 5 * sol},
		},
		{
			name: "warp: the new delegation counts",
			act:  warp,
			want: map[solana.PublicKey]uint64{vote0: 7 * sol, vote1: 1 * sol, delinquent: 5 * sol},
		},
		{
			name: "warp: nothing changes",
			act:  warp,
			want: map[solana.PublicKey]uint64{vote0: 7 * sol, vote1: 1 * sol, delinquent: 5 * sol},
		},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			step.act(t)
			got := activatedStake(t, ctx, r)
			scanned := scannedStake(t, ctx, r)
			require.Len(t, got, 3)
			for v, stake := range got {
				assert.Equal(t, step.want[v], stake, "activatedStake of %s", v)
				assert.Equal(t, scanned[v], stake, "activatedStake of %s against a full scan", v)
			}
		})
	}
	assert.Equal(t, uint64(4), stats(t, ctx, r).StakeAccountsIndexed)
}
