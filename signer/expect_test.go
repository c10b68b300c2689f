package signer

import (
	"bytes"
	"context"
	"encoding/hex"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handKeys are keys whose bytes can be written out by hand.
var (
	handStaker = solana.PublicKeyFromBytes(bytes.Repeat([]byte{0x11}, 32))
	handVote   = solana.PublicKeyFromBytes(bytes.Repeat([]byte{0x22}, 32))
	handStake  = solana.PublicKeyFromBytes(bytes.Repeat([]byte{0x33}, 32)) // an existing stake account
)

// handStakeProgram is the stake program id, Stake11111111111111111111111111111111111111,
// as 32 bytes.
const handStakeProgram = "06a1d8179137542a983437bdfe2a7ab2557f535c8a78722b68a49dc000000000"

// handAccount is an account an instruction names, with the role the message gives it.
type handAccount struct {
	key      solana.PublicKey
	signer   bool
	writable bool
}

// TestExpectedInstructionBytesByHand pins the instructions the gate expects to bytes written out
// by hand from the published layouts, independently of solana-go's encoders:
//
//   - every system and stake instruction starts with its index in the program's instruction
//     enum as a little-endian u32: system CreateAccountWithSeed = 3; stake Initialize = 0,
//     DelegateStake = 2, Withdraw = 4, Deactivate = 5;
//   - then bincode fields: integers little-endian, public keys as their 32 bytes, strings as a
//     u64 length and the bytes;
//   - CreateAccountWithSeed{base, seed, lamports u64, space u64, owner};
//     Initialize{Authorized{staker, withdrawer}, Lockup{unix_timestamp i64, epoch u64,
//     custodian}}; Withdraw{lamports u64}; DelegateStake and Deactivate carry no data;
//   - compute budget instructions start with a u8 index: SetComputeUnitLimit = 2 (u32 units),
//     SetComputeUnitPrice = 3 (u64 micro-lamports).
//
// Accounts, in the order the programs read them: CreateAccountWithSeed (funding [signer,
// writable], new account [writable], base [signer]); Initialize (stake account [writable], rent
// sysvar); DelegateStake (stake account [writable], vote account, clock sysvar, stake history
// sysvar, stake config, stake authority [signer]); Deactivate (stake account [writable], clock
// sysvar, stake authority [signer]); Withdraw (stake account [writable], recipient [writable],
// clock sysvar, stake history sysvar, withdraw authority [signer]). The staker pays, so it is a
// writable signer wherever it appears.
func TestExpectedInstructionBytesByHand(t *testing.T) {
	staker := strings.Repeat("11", 32)
	newStake, err := solana.CreateWithSeed(handStaker, "ab", solana.StakeProgramID)
	require.NoError(t, err)
	payer := handAccount{handStaker, true, true}
	ro := func(k solana.PublicKey) handAccount { return handAccount{k, false, false} }

	require.Equal(t, handStakeProgram, hex.EncodeToString(solana.StakeProgramID[:]))
	for _, tc := range []struct {
		name   string
		intent Intent
		c      choices
		want   []struct {
			program  solana.PublicKey
			accounts []handAccount
			data     string
		}
	}{
		{name: "stake", intent: Intent{Chain: "solana", Operation: OpStake, Staker: handStaker.String(), Lamports: 2_000_000_000, VoteAccount: handVote.String()},
			c: choices{seed: "ab"},
			want: []struct {
				program  solana.PublicKey
				accounts []handAccount
				data     string
			}{
				{solana.SystemProgramID, []handAccount{payer, {newStake, false, true}, payer},
					"03000000" + staker + // CreateAccountWithSeed, base
						"0200000000000000" + "6162" + // seed "ab": length 2, then 'a' 'b'
						"0094357700000000" + // 2,000,000,000 lamports = 0x77359400
						"c800000000000000" + // 200 bytes
						handStakeProgram}, // owner
				{solana.StakeProgramID, []handAccount{{newStake, false, true}, ro(solana.SysVarRentPubkey)},
					"00000000" + staker + staker + // Initialize, staker, withdrawer
						"0000000000000000" + "0000000000000000" + strings.Repeat("00", 32)}, // no lockup
				{solana.StakeProgramID, []handAccount{{newStake, false, true}, ro(handVote), ro(solana.SysVarClockPubkey),
					ro(solana.SysVarStakeHistoryPubkey), ro(solana.SysVarStakeConfigPubkey), payer},
					"02000000"}, // DelegateStake
			}},
		{name: "unstake with a compute budget", intent: Intent{Chain: "solana", Operation: OpUnstake, Staker: handStaker.String(), StakeAccount: handStake.String()},
			c: choices{budget: budget{hasLimit: true, unitLimit: 50_000, unitPrice: 10_000}},
			want: []struct {
				program  solana.PublicKey
				accounts []handAccount
				data     string
			}{
				{solana.ComputeBudget, nil, "02" + "50c30000"},         // SetComputeUnitLimit 50,000 = 0xc350
				{solana.ComputeBudget, nil, "03" + "1027000000000000"}, // SetComputeUnitPrice 10,000 = 0x2710
				{solana.StakeProgramID, []handAccount{{handStake, false, true}, ro(solana.SysVarClockPubkey), payer},
					"05000000"}, // Deactivate
			}},
		{name: "withdraw", intent: Intent{Chain: "solana", Operation: OpWithdraw, Staker: handStaker.String(), StakeAccount: handStake.String(), Lamports: 1_500_000_000},
			want: []struct {
				program  solana.PublicKey
				accounts []handAccount
				data     string
			}{
				{solana.StakeProgramID, []handAccount{{handStake, false, true}, payer, ro(solana.SysVarClockPubkey),
					ro(solana.SysVarStakeHistoryPubkey), payer},
					"04000000" + "002f685900000000"}, // Withdraw 1,500,000,000 lamports = 0x59682f00
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pi, err := parseIntent(tc.intent)
			require.NoError(t, err)
			c := tc.c
			c.vote = handVote
			// The compute budget instructions are rebuilt from their values, as the gate does.
			s := NewSolana(nil, SolanaPolicy{})
			if c.budget.hasLimit {
				raw := parsedTx(t, handStaker, computeLimit(c.budget.unitLimit), computePrice(c.budget.unitPrice))
				c.budget, err = s.chooseBudget(raw, pi.Operation)
				require.NoError(t, err)
			}
			e, err := expect(&pi, &c)
			require.NoError(t, err)
			require.Len(t, e.tx.instrs, len(tc.want))
			for i, w := range tc.want {
				got := e.tx.instrs[i]
				assert.Equal(t, w.program, e.tx.keys[got.programIndex], "instruction %d program", i)
				assert.Equal(t, w.data, hex.EncodeToString(got.data), "instruction %d data", i)
				require.Len(t, got.accounts, len(w.accounts), "instruction %d accounts", i)
				for a, wa := range w.accounts {
					k := got.accounts[a]
					assert.Equal(t, wa.key, e.tx.keys[k], "instruction %d account %d", i, a)
					h := e.tx.header
					signer := int(k) < int(h.NumRequiredSignatures)
					writable := int(k) < int(h.NumRequiredSignatures-h.NumReadonlySignedAccounts) ||
						(!signer && int(k) < len(e.tx.keys)-int(h.NumReadonlyUnsignedAccounts))
					assert.Equal(t, wa.signer, signer, "instruction %d account %d signs", i, a)
					assert.Equal(t, wa.writable, writable, "instruction %d account %d is writable", i, a)
				}
			}
		})
	}
}

// parsedTx is a parsed transaction of instrs paid by payer.
func parsedTx(t *testing.T, payer solana.PublicKey, instrs ...solana.Instruction) *wireTx {
	t.Helper()
	tx, err := parseWireTx(newFixture().txBytes(t, payer, instrs...))
	require.NoError(t, err)
	return tx
}

// TestMaxFee: the fee rule, against amounts computed by hand.
func TestMaxFee(t *testing.T) {
	limit := func(units uint32, price uint64) budget {
		return budget{hasLimit: true, unitLimit: units, unitPrice: price}
	}
	for _, tc := range []struct {
		name       string
		signatures int
		b          budget
		staking    int
		want       uint64
	}{
		{"no compute budget", 1, budget{}, 3, 5_000},
		{"two signatures", 2, budget{}, 1, 10_000},
		{"limit without price", 1, limit(200_000, 0), 3, 5_000},
		{"1,000,000 micro-lamports × 200,000 units", 1, limit(200_000, 1_000_000), 3, 205_000},
		{"a part of a lamport is paid whole: 3 × 1 / 1e6", 1, limit(1, 3), 1, 5_001},
		{"exact lamports: 10 × 100,000 / 1e6", 1, limit(100_000, 10), 1, 5_001},
		{"just over a lamport: 10 × 100,001 / 1e6", 1, limit(100_001, 10), 1, 5_002},
		{"price without limit: 3 instructions × 200,000 units", 1, budget{unitPrice: 1_000_000}, 3, 605_000},
		{"price without limit: 8 instructions, at most 1,400,000 units", 1, budget{unitPrice: 1_000_000}, 8, 1_405_000},
		{"saturates", 1, limit(1_400_000, math.MaxUint64), 1, math.MaxUint64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, maxFee(tc.signatures, tc.b, tc.staking).total)
		})
	}
}

// TestGateNamesFirstDifference: the gate on its own names the first difference in the operator's
// terms.
func TestGateNamesFirstDifference(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	pi, err := parseIntent(f.stakeIntent())
	require.NoError(t, err)
	withData := func(in solana.Instruction, mod func([]byte)) solana.Instruction {
		d := append([]byte(nil), mustData(in)...)
		mod(d)
		return solana.NewInstruction(in.ProgramID(), in.Accounts(), d)
	}
	for _, tc := range []struct {
		name   string
		instrs func([]solana.Instruction) []solana.Instruction
		mod    func([]byte)
		want   string
	}{
		{"lockup epoch", func(in []solana.Instruction) []solana.Instruction {
			in[1] = withData(in[1], func(d []byte) { d[4+32+32+8] = 1 })
			return in
		}, nil, "instruction 1 (stake.Initialize) data: want 116 bytes, from byte 76: 00000000"},
		{"vote account", func(in []solana.Instruction) []solana.Instruction {
			in[2] = delegate(f.derived, f.otherVote, f.staker)
			return in
		}, nil, "(unexpected): want no such account, got " + f.otherVote.String()},
		{"extra instruction", func(in []solana.Instruction) []solana.Instruction {
			return append(in, deactivate(f.derived, solana.SysVarClockPubkey, f.staker, true))
		}, nil, "instructions: want 3 instructions, got 4 instructions, the first extra one stake.Deactivate"},
		{"header", nil, func(b []byte) { b[1+64+2]-- }, "account 2 ("},
		{"unexpected account", func(in []solana.Instruction) []solana.Instruction {
			in[2] = withAccount(in[2], f.stranger)
			return in
		}, nil, "(unexpected): want no such account, got " + f.stranger.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := f.stakeInstrs()
			if tc.instrs != nil {
				in = tc.instrs(in)
			}
			raw := f.txBytes(t, f.staker, in...)
			if tc.mod != nil {
				tc.mod(raw)
			}
			tx, err := parseWireTx(raw)
			require.NoError(t, err)
			_, err = s.gate(tx, &pi)
			require.ErrorIs(t, err, ErrVerification)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// flipContext is a context that is live the first n times it is asked, and cancelled after.
type flipContext struct {
	context.Context
	live atomic.Int32
}

func (c *flipContext) Err() error {
	if c.live.Add(-1) >= 0 {
		return nil
	}
	return context.Canceled
}

// TestSolanaSignCanceledDuring: a context cancelled while Sign runs gives the context's error, not
// the verification's verdict, and no signature.
func TestSolanaSignCanceledDuring(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	for name, unsigned := range map[string]string{
		"honest":  f.tx64(t, f.staker, f.stakeInstrs()...),
		"hostile": f.tx64(t, f.staker, append(f.stakeInstrs(), computePrice(1))...),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := &flipContext{Context: context.Background()}
			ctx.live.Store(1) // live when Sign starts
			signed, err := s.Sign(ctx, unsigned, f.stakeIntent())
			require.ErrorIs(t, err, context.Canceled)
			assert.NotErrorIs(t, err, ErrVerification)
			assert.Nil(t, signed)
		})
	}
}

// TestCompileMatchesSolanaGo: the expected message compile lays out is, account for account and
// instruction for instruction, the message solana-go's NewTransaction compiles from the same
// instructions (the library the sandbox builds with), for instructions with signers, read-only
// signers, writable and read-only accounts and repeated keys.
func TestCompileMatchesSolanaGo(t *testing.T) {
	k := func(b byte) solana.PublicKey { return solana.PublicKeyFromBytes(bytes.Repeat([]byte{b}, 32)) }
	payer, other, w1, w2, r1 := k(1), k(2), k(3), k(4), k(5)
	prog1, prog2 := solana.StakeProgramID, solana.SystemProgramID
	instrs := []solana.Instruction{
		solana.NewInstruction(solana.ComputeBudget, nil, []byte{2, 0, 0x0d, 3, 0}),
		solana.NewInstruction(prog1, solana.AccountMetaSlice{solana.Meta(w1).WRITE(), solana.Meta(r1), solana.Meta(other).SIGNER()}, []byte{1}),
		solana.NewInstruction(prog2, solana.AccountMetaSlice{solana.Meta(payer).WRITE().SIGNER(), solana.Meta(w2).WRITE(), solana.Meta(r1), solana.Meta(w1)}, []byte{2, 3}),
		solana.NewInstruction(prog1, solana.AccountMetaSlice{solana.Meta(other).SIGNER().WRITE(), solana.Meta(w2)}, nil),
	}
	want := parsedTx(t, payer, instrs...)
	got, err := compile(payer, instrs, want.blockhash)
	require.NoError(t, err)
	require.Equal(t, want.header, got.header)
	require.Equal(t, want.keys, got.keys)
	require.Equal(t, want.sigCount, got.sigCount)
	require.Len(t, got.instrs, len(want.instrs))
	for i := range want.instrs {
		assert.Equal(t, want.instrs[i].programIndex, got.instrs[i].programIndex, "instruction %d program", i)
		assert.Equal(t, want.instrs[i].accounts, got.instrs[i].accounts, "instruction %d accounts", i)
		assert.Equal(t, len(want.instrs[i].data), len(got.instrs[i].data), "instruction %d data", i)
		assert.True(t, bytes.Equal(want.instrs[i].data, got.instrs[i].data), "instruction %d data", i)
	}
}

// TestEncodersMatchSolanaGo: each encoder writes exactly the bytes solana-go's builder writes for
// the same instruction (the library the sandbox builds with), and the accounts expect lists are
// the builder's, but for the seed-derived stake account, which is never a signer.
func TestEncodersMatchSolanaGo(t *testing.T) {
	k := func(b byte) solana.PublicKey { return solana.PublicKeyFromBytes(bytes.Repeat([]byte{b}, 32)) }
	staker, vote, stakeAcc := k(1), k(2), k(3)
	data := func(ix solana.Instruction) []byte {
		t.Helper()
		b, err := ix.Data()
		require.NoError(t, err)
		return b
	}
	for _, seed := range []string{"", "stake:0", strings.Repeat("s", solana.MaxSeedLength)} {
		for _, lamports := range []uint64{1, 2_000_000_000, math.MaxUint64} {
			ix := system.NewCreateAccountWithSeedInstruction(staker, seed, lamports, stakeAccountSpace, solana.StakeProgramID, staker, stakeAcc, staker).Build()
			assert.Equal(t, data(ix), encodeCreateWithSeed(staker, seed, lamports, stakeAccountSpace, solana.StakeProgramID), "CreateAccountWithSeed %q %d", seed, lamports)
			assert.Equal(t, data(stake.NewWithdrawInstruction(lamports, stakeAcc, staker, staker).Build()), encodeWithdraw(lamports), "Withdraw %d", lamports)
		}
	}
	assert.Equal(t, data(stake.NewInitializeInstruction(staker, k(4), stakeAcc).Build()), encodeInitialize(staker, k(4)), "Initialize")
	assert.Equal(t, data(stake.NewDelegateStakeInstruction(vote, staker, stakeAcc).Build()), encodeNoArgs(stake.Instruction_DelegateStake), "DelegateStake")
	assert.Equal(t, data(stake.NewDeactivateInstruction(stakeAcc, staker).Build()), encodeNoArgs(stake.Instruction_Deactivate), "Deactivate")

	// The accounts of the unstake and withdraw instructions expect builds are the builders'.
	for _, tc := range []struct {
		op      Operation
		builder solana.Instruction
	}{
		{OpUnstake, stake.NewDeactivateInstruction(stakeAcc, staker).Build()},
		{OpWithdraw, stake.NewWithdrawInstruction(7, stakeAcc, staker, staker).Build()},
	} {
		e, err := expect(&parsedIntent{Intent: Intent{Operation: tc.op, Lamports: 7}, staker: staker, stakeAccount: stakeAcc}, &choices{})
		require.NoError(t, err)
		want := parsedTx(t, staker, tc.builder)
		got := e.tx
		require.Equal(t, want.header, got.header, "%s", tc.op)
		require.Equal(t, want.keys, got.keys, "%s", tc.op)
		require.Equal(t, want.instrs[0].accounts, got.instrs[0].accounts, "%s", tc.op)
		require.Equal(t, want.instrs[0].data, got.instrs[0].data, "%s", tc.op)
	}
}
