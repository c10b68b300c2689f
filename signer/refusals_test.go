package signer

import (
	"encoding/base64"
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Refusals of hostile transactions at the edges of what the verifier knows (message versions,
// instruction discriminators, short instructions, the header), each naming what it refuses.

// TestRefusesVersionedMessageSayingWhich: a v0 message is refused as what it is, with its number
// of address lookup tables when it has some.
func TestRefusesVersionedMessageSayingWhich(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	v0 := func(opts ...solana.TransactionOption) string {
		tx, err := solana.NewTransaction(f.stakeInstrs(), f.blockhash, append(opts, solana.TransactionPayer(f.staker))...)
		require.NoError(t, err)
		tx.Message.SetVersion(solana.MessageVersionV0)
		b, err := tx.MarshalBinary()
		require.NoError(t, err)
		return base64.StdEncoding.EncodeToString(b)
	}
	table := pubOf(testKey(90))
	for _, tc := range []struct {
		name string
		tx   string
		got  string
	}{
		{"no lookup table", v0(), "v0"},
		{"one lookup table", v0(solana.TransactionAddressTables(map[solana.PublicKey]solana.PublicKeySlice{
			table: {solana.SysVarClockPubkey, solana.SysVarStakeHistoryPubkey},
		})), "v0 with 1 address lookup tables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Verify(tc.tx, f.stakeIntent())
			var ve *VerificationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, VerificationError{Check: "message version", Want: "legacy", Got: tc.got}, *ve)
		})
	}
}

// TestRefusesInstructionsPastKnownDiscriminators: an instruction whose discriminator is one past
// the last this verifier names, for each program a staking transaction may use (system 12,
// UpgradeNonceAccount; stake 18, past MoveLamports; compute budget 5, past
// SetLoadedAccountsDataSizeLimit), is refused naming its position, and never makes the verifier
// fail any other way.
func TestRefusesInstructionsPastKnownDiscriminators(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	u32 := func(d uint32) []byte { return binary.LittleEndian.AppendUint32(nil, d) }
	for _, tc := range []struct {
		name string
		ix   solana.Instruction
	}{
		{"system", solana.NewInstruction(solana.SystemProgramID, solana.AccountMetaSlice{meta(f.staker, true, true)}, u32(12))},
		{"stake", solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{meta(f.stakeAccount, true, false)}, u32(18))},
		{"compute budget", solana.NewInstruction(solana.ComputeBudget, nil, []byte{5})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() {
				_, err = s.Verify(f.tx64(t, f.staker, append([]solana.Instruction{tc.ix}, f.unstakeInstrs()...)...), f.unstakeIntent())
			})
			require.ErrorIs(t, err, ErrVerification)
			assert.Contains(t, err.Error(), "instruction #0")
		})
	}
}

// TestRefusesShortComputeBudgetNamingIt: a SetComputeUnitLimit (discriminator 2 of the compute
// budget program) cut to its discriminator is refused under its name, for its length.
func TestRefusesShortComputeBudgetNamingIt(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	short := solana.NewInstruction(solana.ComputeBudget, nil, []byte{2})
	_, err := s.Verify(f.tx64(t, f.staker, append([]solana.Instruction{short}, f.unstakeInstrs()...)...), f.unstakeIntent())
	var ve *VerificationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, VerificationError{Check: "instruction #0 computeBudget.SetComputeUnitLimit", Want: "5 bytes of data", Got: "1 bytes"}, *ve)
}

// TestRefusesOneAccountTransferNamingIt: a system Transfer that lists a single account (no
// recipient) in place of the unstake is refused, named by its amount, and never makes the
// verifier fail any other way.
func TestRefusesOneAccountTransferNamingIt(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	data := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, 2), 5) // Transfer of 5 lamports
	transfer := solana.NewInstruction(solana.SystemProgramID, solana.AccountMetaSlice{meta(f.staker, true, true)}, data)
	var err error
	require.NotPanics(t, func() {
		_, err = s.Verify(f.tx64(t, f.staker, transfer), f.unstakeIntent())
	})
	require.ErrorIs(t, err, ErrVerification)
	assert.Contains(t, err.Error(), "#0 system.Transfer of 5 lamports")
}

// TestNamedChecksOfTheHeader: the named checks refuse, in the operator's terms, a message with a
// second signer (listing exactly the signers the header requires), a header that makes more
// accounts read-only than there are besides the fee payer, and an account listed twice (naming
// both places).
func TestNamedChecksOfTheHeader(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	// Offsets in a one-signature legacy wire transaction: count, signature, then the header.
	const header = 1 + 64
	const keys = header + 3 + 1
	unstake := func() []byte { return f.txBytes(t, f.staker, f.unstakeInstrs()...) }
	for _, tc := range []struct {
		name string
		raw  func() []byte
		want VerificationError
	}{
		{"second signer", func() []byte {
			// The stranger signs the deactivation: two signers, staker then stranger.
			return f.txBytes(t, f.staker, deactivate(f.stakeAccount, solana.SysVarClockPubkey, f.stranger, true))
		}, VerificationError{Check: "required signers", Want: "only the staker " + f.staker.String(),
			Got: "2 signers [" + f.staker.String() + ", " + f.stranger.String() + "]"}},
		{"every account read-only", func() []byte {
			b := unstake()
			b[header+2] = b[keys-1] // as many read-only unsigned accounts as accounts
			return b
		}, VerificationError{Check: "message header", Want: "at most 3 read-only unsigned accounts", Got: "4"}},
		{"account listed twice", func() []byte {
			b := unstake()
			copy(b[keys+3*32:keys+4*32], b[keys+1*32:keys+2*32]) // the last of 4 keys is the second one again
			return b
		}, VerificationError{Check: "account keys", Want: "no duplicates"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.raw()
			_, err := s.Verify(base64.StdEncoding.EncodeToString(raw), f.unstakeIntent())
			var ve *VerificationError
			require.ErrorAs(t, err, &ve)
			if tc.want.Got == "" {
				second := solana.PublicKeyFromBytes(raw[keys+32 : keys+64])
				tc.want.Got = second.String() + " at indexes 1 and 3"
			}
			assert.Equal(t, tc.want, *ve)
		})
	}
}
