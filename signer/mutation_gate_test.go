package signer

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Behaviour the mutation run (make mutation, docs/mutation.md) found untested: each test here
// fails when one of the gremlins' changes to the verifier is made.

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
