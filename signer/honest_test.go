package signer

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sandboxGolden is one instruction of harness/sandbox/testdata/instructions.golden.json.
type sandboxGolden struct {
	Name     string       `json:"name"`
	Program  string       `json:"program"`
	Accounts []goldenMeta `json:"accounts"`
	Data     string       `json:"data"`
}

// The keys and values harness/sandbox/soltx_test.go builds its golden instructions from.
const (
	sandboxStaker = "7xLk17EQQ5KLDLDe44wCmupJKJjTGd8hs3eSVVhCx932"
	sandboxVote   = "Vote111111111111111111111111111111111111112"
	sandboxSeed   = "sandbox-0011223344556677"
	sandboxAmount = 2_000_000_000
)

// readSandboxGolden returns the sandbox's golden instructions by name, as instructions.
func readSandboxGolden(t *testing.T) map[string]solana.Instruction {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "harness", "sandbox", "testdata", "instructions.golden.json"))
	require.NoError(t, err)
	var golden []sandboxGolden
	require.NoError(t, json.Unmarshal(raw, &golden))
	out := map[string]solana.Instruction{}
	for _, g := range golden {
		var metas solana.AccountMetaSlice
		for _, m := range g.Accounts {
			metas = append(metas, meta(solana.MustPublicKeyFromBase58(m.Pubkey), m.Writable, m.Signer))
		}
		data, err := hex.DecodeString(g.Data)
		require.NoError(t, err)
		out[g.Name] = solana.NewInstruction(solana.MustPublicKeyFromBase58(g.Program), metas, data)
	}
	return out
}

// TestSandboxCopyMatchesSandboxGolden: the copies build the instructions the sandbox pins.
func TestSandboxCopyMatchesSandboxGolden(t *testing.T) {
	golden := readSandboxGolden(t)
	staker, vote := solana.MustPublicKeyFromBase58(sandboxStaker), solana.MustPublicKeyFromBase58(sandboxVote)
	stakeAcc, err := solana.CreateWithSeed(staker, sandboxSeed, solana.StakeProgramID)
	require.NoError(t, err)
	for name, ix := range map[string]solana.Instruction{
		"CreateAccountWithSeed": must(createStakeAccountIx(staker, stakeAcc, sandboxSeed, sandboxAmount)),
		"stake Initialize":      must(initializeIx(stakeAcc, staker, staker)),
		"stake DelegateStake":   must(delegateIx(stakeAcc, vote, staker)),
		"stake Deactivate":      must(deactivateIx(stakeAcc, staker)),
		"stake Withdraw":        must(withdrawIx(stakeAcc, staker, staker, sandboxAmount)),
	} {
		want, ok := golden[name]
		require.True(t, ok, "%s is not in the sandbox's golden file", name)
		assert.Equal(t, toGolden(t, []solana.Instruction{want}, ""), toGolden(t, []solana.Instruction{ix}, ""), name)
	}
}

// TestSandboxGoldenTransactionsVerify: transactions made of the very instructions the sandbox
// pins, assembled as the sandbox assembles them, pass verification unchanged.
func TestSandboxGoldenTransactionsVerify(t *testing.T) {
	golden := readSandboxGolden(t)
	staker := solana.MustPublicKeyFromBase58(sandboxStaker)
	stakeAcc, err := solana.CreateWithSeed(staker, sandboxSeed, solana.StakeProgramID)
	require.NoError(t, err)
	bh := solana.Hash{7}
	for _, tc := range []struct {
		name   string
		instrs []string
		intent Intent
	}{
		{"stake", []string{"CreateAccountWithSeed", "stake Initialize", "stake DelegateStake"},
			Intent{Chain: "solana", Operation: OpStake, Staker: sandboxStaker, Lamports: sandboxAmount, VoteAccount: sandboxVote}},
		{"unstake", []string{"stake Deactivate"},
			Intent{Chain: "solana", Operation: OpUnstake, Staker: sandboxStaker, StakeAccount: stakeAcc.String()}},
		{"withdraw", []string{"stake Withdraw"},
			Intent{Chain: "solana", Operation: OpWithdraw, Staker: sandboxStaker, Lamports: sandboxAmount, StakeAccount: stakeAcc.String()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ixs []solana.Instruction
			for _, n := range tc.instrs {
				ixs = append(ixs, golden[n])
			}
			_, raw, err := unsignedTx(staker, bh, ixs...)
			require.NoError(t, err)
			v, err := NewSolana(nil, SolanaPolicy{}).Verify(base64.StdEncoding.EncodeToString(raw), tc.intent)
			require.NoError(t, err)
			assert.Equal(t, stakeAcc.String(), v.StakeAccount)
			assert.Equal(t, uint64(5_000), v.FeeLamports)
		})
	}
}

// reorderWithinClasses reverses the order of the account keys within each role class
// (signer-writable after the fee payer, signer-read-only, writable, read-only) and re-points the
// instructions at them: the same transaction for the runtime, compiled differently.
func reorderWithinClasses(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	tx, err := solana.TransactionFromBytes(raw)
	require.NoError(tb, err)
	m := &tx.Message
	h, n := m.Header, len(m.AccountKeys)
	bounds := []int{1, int(h.NumRequiredSignatures) - int(h.NumReadonlySignedAccounts), int(h.NumRequiredSignatures), n - int(h.NumReadonlyUnsignedAccounts), n}
	for c := 0; c+1 < len(bounds); c++ {
		for i, j := bounds[c], bounds[c+1]-1; i < j; i, j = i+1, j-1 {
			swapKeys(m, i, j)
		}
	}
	out, err := tx.MarshalBinary()
	require.NoError(tb, err)
	return out
}

// swapKeys swaps account keys i and j of m and re-points the instructions at them.
func swapKeys(m *solana.Message, i, j int) {
	m.AccountKeys[i], m.AccountKeys[j] = m.AccountKeys[j], m.AccountKeys[i]
	remap := func(x uint16) uint16 {
		switch int(x) {
		case i:
			return uint16(j)
		case j:
			return uint16(i)
		}
		return x
	}
	for k := range m.Instructions {
		in := &m.Instructions[k]
		in.ProgramIDIndex = remap(in.ProgramIDIndex)
		accts := make([]uint16, len(in.Accounts))
		for a, x := range in.Accounts {
			accts[a] = remap(x)
		}
		in.Accounts = accts
	}
}

// TestSolanaSignHonest: the honest transactions, as the sandbox builds them, with and without a
// compute budget and with their accounts in another order within each role class, are signed; the
// signature verifies over the message bytes received, and the fee is reported.
func TestSolanaSignHonest(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	cb := func(in []solana.Instruction, budget ...solana.Instruction) []solana.Instruction {
		return append(budget, in...)
	}
	cases := []struct {
		name      string
		intent    Intent
		instrs    []solana.Instruction
		wantStake string
		wantVote  string
		wantFee   uint64 // computed by hand, see each row
	}{
		// One signature, no priority fee: 5,000 lamports.
		{"stake", f.stakeIntent(), f.stakeInstrs(), f.derived.String(), f.vote.String(), 5_000},
		// 5,000 + ceil(10,000 × 50,000 / 1,000,000) = 5,000 + 500.
		{"stake, unit limit then price", f.stakeIntent(), cb(f.stakeInstrs(), computeLimit(50_000), computePrice(10_000)), f.derived.String(), f.vote.String(), 5_500},
		{"stake, unit price then limit", f.stakeIntent(), cb(f.stakeInstrs(), computePrice(10_000), computeLimit(50_000)), f.derived.String(), f.vote.String(), 5_500},
		// No limit: 3 instructions × 200,000 units. 5,000 + ceil(100,001 × 600,000 / 1,000,000)
		// = 5,000 + ceil(60,000.6) = 65,001.
		{"stake, unit price only", f.stakeIntent(), cb(f.stakeInstrs(), computePrice(100_001)), f.derived.String(), f.vote.String(), 65_001},
		// A limit without a price costs nothing beyond the base fee.
		{"stake, unit limit only", f.stakeIntent(), cb(f.stakeInstrs(), computeLimit(DefaultMaxComputeUnitLimit)), f.derived.String(), f.vote.String(), 5_000},
		// CreateAccountWithSeed without the base account, which is the funding account (as
		// @solana/web3.js builds it): the same instruction, the base's signature the funder's.
		{"stake, create without the base account", f.stakeIntent(), append([]solana.Instruction{f.createWithSeedTwoAccounts(f.derived)}, f.stakeInstrs()[1:]...), f.derived.String(), f.vote.String(), 5_000},
		{"unstake", f.unstakeIntent(), f.unstakeInstrs(), f.stakeAccount.String(), "", 5_000},
		// No limit: 1 instruction × 200,000 units; ceil(1 × 200,000 / 1,000,000) = 1.
		{"unstake, unit price of 1", f.unstakeIntent(), cb(f.unstakeInstrs(), computePrice(1)), f.stakeAccount.String(), "", 5_001},
		{"withdraw", f.withdrawIntent(), f.withdrawInstrs(), f.stakeAccount.String(), "", 5_000},
		// Exactly the default cap: 5,000 + 1,000,000 × 95,000 / 1,000,000 = 100,000.
		{"withdraw, fee at the cap", f.withdrawIntent(), cb(f.withdrawInstrs(), computeLimit(95_000), computePrice(DefaultMaxComputeUnitPrice)), f.stakeAccount.String(), "", 100_000},
	}
	for _, tc := range cases {
		for _, reorder := range []bool{false, true} {
			name := tc.name
			if reorder {
				name += ", accounts reordered within their role class"
			}
			t.Run(name, func(t *testing.T) {
				unsigned := f.txBytes(t, f.staker, tc.instrs...)
				if reorder {
					before := unsigned
					unsigned = reorderWithinClasses(t, unsigned)
					require.NotEqual(t, before, unsigned, "the reordering changes the bytes")
				}
				signed, err := s.Sign(context.Background(), base64.StdEncoding.EncodeToString(unsigned), tc.intent)
				require.NoError(t, err)
				assert.Equal(t, tc.wantStake, signed.StakeAccount)
				assert.Equal(t, tc.wantVote, signed.VoteAccount)
				assert.Equal(t, f.blockhash.String(), signed.RecentBlockhash)
				assert.Equal(t, tc.wantFee, signed.FeeLamports)

				raw, err := base64.StdEncoding.DecodeString(signed.SignedTransaction)
				require.NoError(t, err)
				require.Len(t, raw, len(unsigned))
				msg := unsigned[1+64:]
				assert.Equal(t, msg, raw[1+64:], "message bytes unchanged")
				sig := raw[1 : 1+64]
				assert.True(t, ed25519.Verify(f.stakerKey.Public().(ed25519.PublicKey), msg, sig), "signature verifies against the message")
				assert.Equal(t, solana.SignatureFromBytes(sig).String(), signed.Signature)

				tx, err := solana.TransactionFromBytes(raw)
				require.NoError(t, err)
				require.NoError(t, tx.VerifySignatures(), "solana-go accepts the signed transaction")

				again, err := s.Sign(context.Background(), base64.StdEncoding.EncodeToString(unsigned), tc.intent)
				require.NoError(t, err)
				assert.Equal(t, signed, again, "signing is deterministic")
			})
		}
	}
}

// TestReorderAcrossClassesRefused: moving a key into another role class is not a reordering the
// gate forgives, even when every instruction still points at the same keys.
func TestReorderAcrossClassesRefused(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	tx, err := solana.TransactionFromBytes(f.txBytes(t, f.staker, f.stakeInstrs()...))
	require.NoError(t, err)
	// Key 1 is the stake account (the only writable unsigned key); the last is read-only.
	last := len(tx.Message.AccountKeys) - 1
	swapKeys(&tx.Message, 1, last)
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	_, err = s.Verify(base64.StdEncoding.EncodeToString(raw), f.stakeIntent())
	require.ErrorIs(t, err, ErrVerification)
	assert.Contains(t, err.Error(), "account 1 (")
	assert.Contains(t, err.Error(), "flags: want read-only, got writable")
}
