//go:build integration

package solanart

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/require"
)

// BenchmarkGetVoteAccounts times getVoteAccounts, alone and after a stake transaction, as
// the number of stake accounts grows.
// Run: go test -run '^$' -bench GetVoteAccounts -benchtime 200x ./harness/sandbox/solanart/
func BenchmarkGetVoteAccounts(b *testing.B) {
	r := startRuntime(b, Options{SlotsPerEpoch: 1 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c := r.RPC()
	payer := fundedWallet(b, ctx, r, 20_000*solana.LAMPORTS_PER_SOL)
	vote := r.VoteAccounts()[0]
	made := 0
	for _, n := range []int{10, 1000, 5000} {
		start := time.Now()
		for ; made < n; made++ {
			stakeFromSeed(b, ctx, c, payer, vote, fmt.Sprintf("bench:%d", made), solana.LAMPORTS_PER_SOL)
		}
		b.Logf("%d stake accounts (made in %s)", n, time.Since(start))
		require.NoError(b, r.WarpEpochs(ctx, 1))
		b.Run(fmt.Sprintf("getVoteAccounts/stakeAccounts=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := c.GetVoteAccounts(ctx, &rpc.GetVoteAccountsOpts{Commitment: rpc.CommitmentConfirmed}); err != nil {
					b.Fatal(err)
				}
			}
		})
		// One stake operation as the sandbox makes it: a stake transaction, then the
		// validator status check.
		b.Run(fmt.Sprintf("stake+getVoteAccounts/stakeAccounts=%d", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				stakeFromSeed(b, ctx, c, payer, vote, fmt.Sprintf("op:%d:%d", n, i), solana.LAMPORTS_PER_SOL)
				i++
				if _, err := c.GetVoteAccounts(ctx, &rpc.GetVoteAccountsOpts{Commitment: rpc.CommitmentConfirmed}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
