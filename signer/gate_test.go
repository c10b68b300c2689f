package signer

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The verifier's gate at its edges: the longest seed, the roles the message header gives each
// account, what a refusal names, and the fee cap's arithmetic.

// TestStakeWithLongestSeedIsSigned: Solana allows a seed of up to 32 bytes (MAX_SEED_LEN), so a
// stake whose new account is derived from a 32-byte seed is verified and signed, and its stake
// account is the address solana-go derives; one more byte is refused.
func TestStakeWithLongestSeedIsSigned(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	stakeTx := func(seed string) (string, solana.PublicKey) {
		derived, err := solana.CreateWithSeed(f.staker, seed, solana.StakeProgramID)
		if err != nil {
			// solana-go refuses to derive it: build on any address, the signer must refuse the seed.
			derived = f.derived
		}
		return f.tx64(t, f.staker,
			must(createStakeAccountIx(f.staker, derived, seed, f.lamports)),
			must(initializeIx(derived, f.staker, f.staker)),
			must(delegateIx(derived, f.vote, f.staker))), derived
	}

	seed := strings.Repeat("s", 32)
	tx, derived := stakeTx(seed)
	signed, err := s.Sign(context.Background(), tx, f.stakeIntent())
	require.NoError(t, err, "a stake from a 32-byte seed")
	assert.Equal(t, derived.String(), signed.StakeAccount)

	tx, _ = stakeTx(seed + "s")
	_, err = s.Sign(context.Background(), tx, f.stakeIntent())
	require.ErrorIs(t, err, ErrVerification, "a stake from a 33-byte seed")
	assert.Contains(t, err.Error(), "new stake account seed")
}

// TestRoleAtFollowsMessageHeader: the role the gate reads for each account of a message is the
// one Solana's message header gives it (the first NumRequiredSignatures accounts sign, the last
// NumReadonlySignedAccounts of those and the last NumReadonlyUnsignedAccounts of the others are
// read-only), as solana-go's Message reads it.
func TestRoleAtFollowsMessageHeader(t *testing.T) {
	keys := make([]solana.PublicKey, 7)
	for i := range keys {
		keys[i] = pubOf(testKey(byte(10 * (i + 1))))
	}
	for signers := 1; signers <= 4; signers++ {
		for roSigned := 0; roSigned < signers; roSigned++ {
			for roUnsigned := 0; roUnsigned <= len(keys)-signers; roUnsigned++ {
				h := solana.MessageHeader{NumRequiredSignatures: uint8(signers), NumReadonlySignedAccounts: uint8(roSigned), NumReadonlyUnsignedAccounts: uint8(roUnsigned)}
				ref := solana.Message{Header: h, AccountKeys: keys}
				tx := &wireTx{header: h, keys: keys}
				for i, k := range keys {
					want := role{signer: ref.IsSigner(k), writable: ref.IsWritableStatic(k)}
					assert.Equal(t, want, roleAt(tx, i), "header %+v, account %d", h, i)
				}
			}
		}
	}
}

// TestGateNamesAccountsByRole: when a delegation lists its accounts out of order, the gate names
// what it wanted and what it found by their roles: the vote account where the clock sysvar is.
func TestGateNamesAccountsByRole(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	pi, err := parseIntent(f.stakeIntent())
	require.NoError(t, err)
	in := f.stakeInstrs()
	metas := in[2].Accounts()
	metas[1], metas[2] = metas[2], metas[1] // vote account and clock sysvar swapped
	in[2] = solana.NewInstruction(in[2].ProgramID(), metas, mustData(in[2]))
	tx, err := parseWireTx(f.txBytes(t, f.staker, in...))
	require.NoError(t, err)

	_, err = s.gate(tx, &pi)
	require.ErrorIs(t, err, ErrVerification)
	var ve *VerificationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "instruction 2 (stake.DelegateStake) account 1", ve.Check)
	assert.Equal(t, "vote account", ve.Want)
	assert.Equal(t, "clock sysvar", ve.Got)
}

// TestGateRefusesDuplicatedFeePayer: a message that lists the fee payer twice is refused by the
// gate on its own, as a duplicate of account 0.
func TestGateRefusesDuplicatedFeePayer(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	for _, intent := range []Intent{f.stakeIntent(), f.unstakeIntent(), f.withdrawIntent()} {
		t.Run(string(intent.Operation), func(t *testing.T) {
			pi, err := parseIntent(intent)
			require.NoError(t, err)
			var in []solana.Instruction
			switch intent.Operation {
			case OpStake:
				in = f.stakeInstrs()
			case OpUnstake:
				in = f.unstakeInstrs()
			default:
				in = f.withdrawInstrs()
			}
			tx, err := parseWireTx(f.txBytes(t, f.staker, in...))
			require.NoError(t, err)
			// The staker once more, as the last (read-only, unsigned) account.
			tx.keys = append(tx.keys, f.staker)
			tx.header.NumReadonlyUnsignedAccounts++

			_, err = s.gate(tx, &pi)
			require.ErrorIs(t, err, ErrVerification)
			assert.Contains(t, err.Error(), fmt.Sprintf("account %d (staker): want each account once, got %s again (first at account 0)", len(tx.keys)-1, f.staker))
		})
	}
}

// TestGateRefusesMissingInstruction: a stake that lists every account of the expected one but
// leaves out its DelegateStake is refused by the gate on its own, counting the instructions.
func TestGateRefusesMissingInstruction(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	pi, err := parseIntent(f.stakeIntent())
	require.NoError(t, err)
	tx, err := parseWireTx(f.txBytes(t, f.staker, f.stakeInstrs()...))
	require.NoError(t, err)
	tx.instrs = tx.instrs[:2]

	_, err = s.gate(tx, &pi)
	require.ErrorIs(t, err, ErrVerification)
	assert.Contains(t, err.Error(), "instructions: want 3 instructions, got 2 instructions")
}

// TestGateShowsDataFromFirstDifference: the gate shows instruction data from the first byte that
// differs, at most 16 bytes of it, with "…" when there is more; when one is the other plus a
// trailing byte, it shows the byte too many and nothing for the shorter.
func TestGateShowsDataFromFirstDifference(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	withData := func(in solana.Instruction, mod func([]byte) []byte) solana.Instruction {
		return solana.NewInstruction(in.ProgramID(), in.Accounts(), mod(append([]byte(nil), mustData(in)...)))
	}
	for _, tc := range []struct {
		name      string
		intent    Intent
		instrs    func() []solana.Instruction
		check     string
		want, got string
	}{
		{"withdraw with a trailing byte", f.withdrawIntent(), func() []solana.Instruction {
			in := f.withdrawInstrs()
			in[0] = withData(in[0], func(d []byte) []byte { return append(d, 0x07) })
			return in
		}, "instruction 0 (stake.Withdraw) data", "12 bytes, from byte 12: ", "13 bytes, from byte 12: 07"},
		{"withdraw one byte short", f.withdrawIntent(), func() []solana.Instruction {
			in := f.withdrawInstrs()
			in[0] = withData(in[0], func(d []byte) []byte { return d[:11] })
			return in
		}, "instruction 0 (stake.Withdraw) data", "12 bytes, from byte 11: 00", "11 bytes, from byte 11: "},
		{"custodian differs in its last 16 bytes", f.stakeIntent(), func() []solana.Instruction {
			in := f.stakeInstrs()
			in[1] = withData(in[1], func(d []byte) []byte { d[100] = 0xaa; return d })
			return in
		}, "instruction 1 (stake.Initialize) data", "116 bytes, from byte 100: " + strings.Repeat("00", 16), "116 bytes, from byte 100: aa" + strings.Repeat("00", 15)},
		{"custodian differs in its last 17 bytes", f.stakeIntent(), func() []solana.Instruction {
			in := f.stakeInstrs()
			in[1] = withData(in[1], func(d []byte) []byte { d[99] = 0xaa; return d })
			return in
		}, "instruction 1 (stake.Initialize) data", "116 bytes, from byte 99: " + strings.Repeat("00", 16) + "…", "116 bytes, from byte 99: aa" + strings.Repeat("00", 15) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pi, err := parseIntent(tc.intent)
			require.NoError(t, err)
			tx, err := parseWireTx(f.txBytes(t, f.staker, tc.instrs()...))
			require.NoError(t, err)
			_, err = s.gate(tx, &pi)
			var ve *VerificationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, VerificationError{Check: tc.check, Want: tc.want, Got: tc.got}, *ve)
		})
	}
}

// TestMaxFeeAgreesWithExactArithmetic: the fee is 5,000 lamports per signature plus the unit
// price × the unit limit in micro-lamports, rounded up to whole lamports, and saturates at the
// largest uint64 instead of wrapping, as exact integer arithmetic (math/big) has it, also at the
// edge where the priority fee alone reaches 2^64 - 1 lamports.
func TestMaxFeeAgreesWithExactArithmetic(t *testing.T) {
	exact := func(signatures int, price uint64, limit uint64) uint64 {
		p := new(big.Int).Mul(new(big.Int).SetUint64(price), new(big.Int).SetUint64(limit))
		p.Add(p, big.NewInt(999_999))
		p.Div(p, big.NewInt(1_000_000)) // rounded up
		p.Add(p, big.NewInt(5_000*int64(signatures)))
		if !p.IsUint64() {
			return math.MaxUint64
		}
		return p.Uint64()
	}
	// (2^32 + 1) × 1,000,000 micro-lamports × (2^32 - 1) units is (2^64 - 1) lamports exactly.
	edge := uint64(1<<32+1) * 1_000_000
	for _, tc := range []struct {
		price uint64
		limit uint32
	}{
		{0, 0}, {1, 1}, {999_999, 1}, {1_000_000, 1}, {1_000_001, 1},
		{edge - 1, math.MaxUint32}, {edge, math.MaxUint32}, {edge + 1, math.MaxUint32},
		{math.MaxUint64 / math.MaxUint32, math.MaxUint32},
		{math.MaxUint64, 1}, {math.MaxUint64, math.MaxUint32},
	} {
		for _, signatures := range []int{1, 2} {
			got := maxFee(signatures, budget{hasLimit: true, unitLimit: tc.limit, unitPrice: tc.price}, 1)
			assert.Equal(t, exact(signatures, tc.price, uint64(tc.limit)), got.total,
				"%d signatures, %d micro-lamports × %d units", signatures, tc.price, tc.limit)
		}
	}
}
