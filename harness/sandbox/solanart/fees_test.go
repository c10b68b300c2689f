//go:build integration

package solanart

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// feeForMessage asks getFeeForMessage for the fee of tx's message.
func feeForMessage(t *testing.T, ctx context.Context, c *rpc.Client, tx *solana.Transaction) *uint64 {
	t.Helper()
	msg, err := tx.Message.MarshalBinary()
	require.NoError(t, err)
	res, err := c.GetFeeForMessage(ctx, base64.StdEncoding.EncodeToString(msg), rpc.CommitmentConfirmed)
	require.NoError(t, err)
	return res.Value
}

// TestFeeForMessageIsTheFeeCharged: for transactions with and without a compute budget,
// getFeeForMessage answers before sending what the runtime then charges the fee payer and
// what getTransaction reports as meta.fee.
func TestFeeForMessageIsTheFeeCharged(t *testing.T) {
	r := startRuntime(t, Options{})
	ctx := testContext(t)
	c := r.RPC()
	payer := fundedWallet(t, ctx, r, 100*solana.LAMPORTS_PER_SOL)
	limit := func(units uint32) solana.Instruction {
		return computebudget.NewSetComputeUnitLimitInstruction(units).Build()
	}
	price := func(microLamports uint64) solana.Instruction {
		return computebudget.NewSetComputeUnitPriceInstruction(microLamports).Build()
	}
	const moved = 1_000_000
	cases := []struct {
		name  string
		ixs   func(seed string) []solana.Instruction
		moved uint64
		fee   uint64
	}{
		{"no compute budget", func(string) []solana.Instruction {
			return []solana.Instruction{transfer(payer, solana.NewWallet().PublicKey(), moved)}
		}, moved, feePerSignature},
		{"limit and price, rounded up to a lamport", func(string) []solana.Instruction {
			return []solana.Instruction{limit(1_001), price(1_000_001), transfer(payer, solana.NewWallet().PublicKey(), moved)}
		}, moved, feePerSignature + 1_002},
		{"1.4M units at 1 lamport each", func(string) []solana.Instruction {
			return []solana.Instruction{limit(1_400_000), price(1_000_000), transfer(payer, solana.NewWallet().PublicKey(), moved)}
		}, moved, feePerSignature + 1_400_000},
		{"limit above the maximum counts as the maximum", func(string) []solana.Instruction {
			return []solana.Instruction{limit(2_000_000), price(1_000_000), transfer(payer, solana.NewWallet().PublicKey(), moved)}
		}, moved, feePerSignature + 1_400_000},
		{"price without limit: 3000 units per native builtin instruction", func(string) []solana.Instruction {
			return []solana.Instruction{price(1_000_000), transfer(payer, solana.NewWallet().PublicKey(), moved),
				transfer(payer, solana.NewWallet().PublicKey(), moved)}
		}, 2 * moved, feePerSignature + 3*3_000},
		{"price without limit: 200k units per stake program instruction", func(seed string) []solana.Instruction {
			acc, err := solana.CreateWithSeed(payer.PublicKey(), seed, solana.StakeProgramID)
			require.NoError(t, err)
			return append([]solana.Instruction{price(1_000_000)},
				seedStakeInstructions(t, payer.PublicKey(), acc, r.VoteAccounts()[0], seed, 2*solana.LAMPORTS_PER_SOL)...)
		}, 2 * solana.LAMPORTS_PER_SOL, feePerSignature + 2*3_000 + 2*200_000},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx := buildTx(t, ctx, c, payer, tc.ixs("fees-"+string(rune('a'+i)))...)
			quoted := feeForMessage(t, ctx, c, tx)
			require.NotNil(t, quoted)
			assert.Equal(t, tc.fee, *quoted)

			before := balance(t, ctx, c, payer.PublicKey())
			sig, err := c.SendTransaction(ctx, tx)
			require.NoError(t, err)
			assert.Equal(t, *quoted, before-balance(t, ctx, c, payer.PublicKey())-tc.moved, "fee charged")
			got, err := c.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{Encoding: solana.EncodingBase64})
			require.NoError(t, err)
			require.NotNil(t, got.Meta)
			assert.Equal(t, *quoted, got.Meta.Fee, "meta.fee")
		})
	}

	t.Run("unknown or expired blockhash is null", func(t *testing.T) {
		stale := buildTx(t, ctx, c, payer, transfer(payer, solana.NewWallet().PublicKey(), moved))
		require.NotNil(t, feeForMessage(t, ctx, c, stale))
		require.NoError(t, r.ExpireBlockhashes(ctx))
		assert.Nil(t, feeForMessage(t, ctx, c, stale))
		assert.Nil(t, feeForMessage(t, ctx, c, buildTxOn(t, solana.Hash{7}, payer, transfer(payer, solana.NewWallet().PublicKey(), moved))))
	})

	t.Run("a malformed message is an invalid-params error", func(t *testing.T) {
		_, err := c.GetFeeForMessage(ctx, base64.StdEncoding.EncodeToString([]byte{1, 0}), rpc.CommitmentConfirmed)
		requireRPCError(t, err, -32602, "failed to deserialize message")
	})
}

// TestRecentPrioritizationFees: the recent slots are listed; a slot where a transaction
// write-locking an account landed with a compute-unit price reports that price for the
// account, and the slots where nothing locked it report the block's least price.
func TestRecentPrioritizationFees(t *testing.T) {
	r := startRuntime(t, Options{})
	ctx := testContext(t)
	c := r.RPC()
	payer := fundedWallet(t, ctx, r, 10*solana.LAMPORTS_PER_SOL)
	locked := solana.NewWallet().PublicKey()
	const microLamports = 2_500
	tx := buildTx(t, ctx, c, payer, computebudget.NewSetComputeUnitPriceInstruction(microLamports).Build(),
		transfer(payer, locked, solana.LAMPORTS_PER_SOL))
	sig, err := c.SendTransaction(ctx, tx)
	require.NoError(t, err)
	st, err := c.GetSignatureStatuses(ctx, false, sig)
	require.NoError(t, err)
	require.NotNil(t, st.Value[0])
	landed := st.Value[0].Slot

	all, err := c.GetRecentPrioritizationFees(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, all)
	assert.LessOrEqual(t, len(all), 150)
	now, err := c.GetSlot(ctx, rpc.CommitmentProcessed)
	require.NoError(t, err)
	for i, e := range all {
		assert.LessOrEqual(t, e.Slot, now)
		if i > 0 {
			assert.Equal(t, all[i-1].Slot+1, e.Slot, "consecutive slots")
		}
	}

	fees, err := c.GetRecentPrioritizationFees(ctx, solana.PublicKeySlice{locked})
	require.NoError(t, err)
	found := false
	for _, e := range fees {
		if e.Slot == landed {
			found = true
			assert.EqualValues(t, microLamports, e.PrioritizationFee)
		} else {
			assert.Zero(t, e.PrioritizationFee, "slot %d: nothing paid a price there", e.Slot)
		}
	}
	assert.True(t, found, "slot %d is listed", landed)

	_, err = c.GetRecentPrioritizationFees(ctx, make(solana.PublicKeySlice, 129))
	requireRPCError(t, err, -32602, "max 128")
}

// TestStakeMinimumDelegation: getStakeMinimumDelegation answers the stake program's own
// minimum, the one its GetMinimumDelegation instruction returns in a simulation.
func TestStakeMinimumDelegation(t *testing.T) {
	r := startRuntime(t, Options{})
	ctx := testContext(t)
	c := r.RPC()
	// A runtime that answers within its first slot is at slot 0: move on one, so that the
	// context's slot is positive whatever the timing.
	require.NoError(t, r.AdvanceSlots(ctx, 1))
	var got struct {
		Context struct {
			Slot uint64 `json:"slot"`
		} `json:"context"`
		Value uint64 `json:"value"`
	}
	require.NoError(t, c.RPCCallForInto(ctx, &got, "getStakeMinimumDelegation", nil))
	assert.Positive(t, got.Context.Slot)

	payer := fundedWallet(t, ctx, r, solana.LAMPORTS_PER_SOL)
	data := make([]byte, 4)
	binary.LittleEndian.PutUint32(data, 13)
	tx := buildTx(t, ctx, c, payer, solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{}, data))
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	var sim struct {
		Value struct {
			Err        any `json:"err"`
			ReturnData *struct {
				ProgramID solana.PublicKey `json:"programId"`
				Data      []string         `json:"data"`
			} `json:"returnData"`
		} `json:"value"`
	}
	require.NoError(t, c.RPCCallForInto(ctx, &sim, "simulateTransaction",
		[]any{base64.StdEncoding.EncodeToString(raw), map[string]any{"encoding": "base64"}}))
	require.Nil(t, sim.Value.Err)
	require.NotNil(t, sim.Value.ReturnData, "simulateTransaction reports the return data")
	assert.Equal(t, solana.StakeProgramID, sim.Value.ReturnData.ProgramID)
	require.Len(t, sim.Value.ReturnData.Data, 2)
	assert.Equal(t, "base64", sim.Value.ReturnData.Data[1])
	ret, err := base64.StdEncoding.DecodeString(sim.Value.ReturnData.Data[0])
	require.NoError(t, err)
	require.Len(t, ret, 8)
	assert.Equal(t, binary.LittleEndian.Uint64(ret), got.Value)
	assert.Equal(t, uint64(solana.LAMPORTS_PER_SOL), got.Value, "the stake program's minimum with every feature on")
}

// TestGenesisSeedMakesAnotherNetwork: the genesis hash is stable and the default one
// unless a seed names another network, whose blockhashes the first does not accept.
func TestGenesisSeedMakesAnotherNetwork(t *testing.T) {
	ctx := testContext(t)
	home := startRuntime(t, Options{})
	away := startRuntime(t, Options{GenesisSeed: "elsewhere"})
	for _, r := range []*Runtime{home, away} {
		served, err := r.RPC().GetGenesisHash(ctx)
		require.NoError(t, err)
		again, err := r.RPC().GetGenesisHash(ctx)
		require.NoError(t, err)
		assert.Equal(t, served, again, "stable")
		assert.Equal(t, served, r.GenesisHash())
	}
	assert.Equal(t, DefaultGenesisHash, home.GenesisHash().String())
	assert.NotEqual(t, home.GenesisHash(), away.GenesisHash())
	same := startRuntime(t, Options{GenesisSeed: "elsewhere"})
	assert.Equal(t, away.GenesisHash(), same.GenesisHash(), "one seed, one network")

	// A transaction made on the other network is refused at home.
	payer := fundedWallet(t, ctx, home, solana.LAMPORTS_PER_SOL)
	tx := buildTx(t, ctx, away.RPC(), payer, transfer(payer, solana.NewWallet().PublicKey(), 1_000))
	_, err := home.RPC().SendTransaction(ctx, tx)
	requireRPCError(t, err, -32002, "Blockhash not found")
}

// TestCreateVoteAccount: a vote account created later is a real, current validator with
// the commission asked for, and not one of the start-up vote accounts.
func TestCreateVoteAccount(t *testing.T) {
	r := startRuntime(t, Options{VoteAccounts: 2, DelinquentVoteAccounts: 1})
	ctx := testContext(t)
	vote, err := r.CreateVoteAccount(ctx, 5)
	require.NoError(t, err)
	assert.NotContains(t, r.VoteAccounts(), vote)
	assert.NotContains(t, r.DelinquentVoteAccounts(), vote)
	second, err := r.CreateVoteAccount(ctx, 7)
	require.NoError(t, err)
	assert.NotEqual(t, vote, second)

	votes, err := r.RPC().GetVoteAccounts(ctx, nil)
	require.NoError(t, err)
	require.Len(t, votes.Current, 4)
	require.Len(t, votes.Delinquent, 1)
	assert.Equal(t, vote, votes.Current[2].VotePubkey)
	assert.Equal(t, uint8(5), votes.Current[2].Commission)
	assert.Equal(t, second, votes.Current[3].VotePubkey)
	info, err := r.RPC().GetAccountInfo(ctx, vote)
	require.NoError(t, err)
	assert.Equal(t, solana.VoteProgramID, info.Value.Owner)

	// A real vote account: a stake can be delegated to it.
	staker := fundedWallet(t, ctx, r, 10*solana.LAMPORTS_PER_SOL)
	acc, err := solana.CreateWithSeed(staker.PublicKey(), "to-new-vote", solana.StakeProgramID)
	require.NoError(t, err)
	_, err = r.RPC().SendTransaction(ctx, buildTx(t, ctx, r.RPC(), staker,
		seedStakeInstructions(t, staker.PublicKey(), acc, vote, "to-new-vote", 2*solana.LAMPORTS_PER_SOL)...))
	require.NoError(t, err)

	_, err = r.CreateVoteAccount(ctx, 101)
	require.ErrorContains(t, err, "commission must be at most 100")
}
