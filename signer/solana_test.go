package signer

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/mr-tron/base58"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGoldenInstructions(t *testing.T) {
	f := newFixture()
	for _, tc := range []struct {
		name   string
		instrs []solana.Instruction
	}{
		{"stake", f.stakeInstrs()},
		{"unstake", f.unstakeInstrs()},
		{"withdraw", f.withdrawInstrs()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := toGolden(t, tc.instrs, f.tx64(t, f.staker, tc.instrs...))
			checkGolden(t, "golden/"+tc.name+".json", mustJSON(t, g))
		})
	}
}

// TestGoldenStakeAccountNotSigner pins the corrected metas: solana-go's builders mark the stake
// account as a signer, which a seed-derived account can never be.
func TestGoldenStakeAccountNotSigner(t *testing.T) {
	f := newFixture()
	for _, in := range f.stakeInstrs()[1:] {
		for _, m := range in.Accounts() {
			if m.PublicKey.Equals(f.derived) {
				assert.False(t, m.IsSigner, "stake account must not be a signer")
				assert.True(t, m.IsWritable, "stake account must be writable")
			}
		}
	}
	buggy := stake.NewInitializeInstruction(f.staker, f.staker, f.derived).Build()
	assert.True(t, buggy.Accounts()[0].IsSigner, "solana-go's Initialize builder marks the stake account as signer")
}

func TestSolanaSignCorrect(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	cases := []struct {
		name      string
		intent    Intent
		instrs    []solana.Instruction
		wantStake string
		wantVote  string
	}{
		{"stake", f.stakeIntent(), f.stakeInstrs(), f.derived.String(), f.vote.String()},
		{"stake with compute budget", f.stakeIntent(), append([]solana.Instruction{computeLimit(50_000), computePrice(10_000)}, f.stakeInstrs()...), f.derived.String(), f.vote.String()},
		{"stake with the base account listed", f.stakeIntent(), append([]solana.Instruction{
			system.NewCreateAccountWithSeedInstruction(f.staker, f.seed, f.lamports, stakeAccountSpace, solana.StakeProgramID, f.staker, f.derived, f.staker).Build(),
		}, f.stakeInstrs()[1:]...), f.derived.String(), f.vote.String()},
		{"unstake", f.unstakeIntent(), f.unstakeInstrs(), f.stakeAccount.String(), ""},
		{"withdraw with the staker as lockup custodian", f.withdrawIntent(), []solana.Instruction{
			withdrawCustodian(f.stakeAccount, f.staker, f.staker, 1_500_000_000, f.staker),
		}, f.stakeAccount.String(), ""},
		{"withdraw", f.withdrawIntent(), f.withdrawInstrs(), f.stakeAccount.String(), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			unsigned := f.txBytes(t, f.staker, tc.instrs...)
			signed, err := s.Sign(context.Background(), base64.StdEncoding.EncodeToString(unsigned), tc.intent)
			require.NoError(t, err)
			assert.Equal(t, tc.wantStake, signed.StakeAccount)
			assert.Equal(t, tc.wantVote, signed.VoteAccount)
			assert.Equal(t, f.blockhash.String(), signed.RecentBlockhash)

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

func TestSolanaVerifyEncodings(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	raw := f.txBytes(t, f.staker, f.stakeInstrs()...)
	for _, tc := range []struct{ enc, s string }{
		{"base64", base64.StdEncoding.EncodeToString(raw)},
		{"base64 (unpadded)", base64.RawStdEncoding.EncodeToString(raw)},
		{"hex", hex.EncodeToString(raw)},
		{"hex", "0x" + hex.EncodeToString(raw)},
		{"base58", base58.Encode(raw)},
		{"base64", "  " + base64.StdEncoding.EncodeToString(raw) + "\n"},
	} {
		t.Run(tc.enc, func(t *testing.T) {
			v, err := s.Verify(tc.s, f.stakeIntent())
			require.NoError(t, err)
			assert.Equal(t, tc.enc, v.Encoding)
			assert.Equal(t, f.derived.String(), v.StakeAccount)
			assert.Equal(t, f.seed, v.Seed)
			assert.Equal(t, f.lamports, v.Lamports)
		})
	}
}

func TestSolanaVerifyAllowList(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{AllowedVoteAccounts: []string{f.otherVote.String(), f.vote.String()}})
	in := f.stakeIntent()
	in.VoteAccount = ""
	v, err := s.Verify(f.tx64(t, f.staker, f.stakeInstrs()...), in)
	require.NoError(t, err)
	assert.Equal(t, f.vote.String(), v.VoteAccount)
}

func TestSolanaPolicyDefaults(t *testing.T) {
	p := NewSolana(nil, SolanaPolicy{}).Policy()
	assert.Equal(t, DefaultMaxComputeUnitPrice, p.MaxComputeUnitPrice)
	assert.Equal(t, DefaultMaxComputeUnitLimit, p.MaxComputeUnitLimit)
	p = NewSolana(nil, SolanaPolicy{MaxComputeUnitPrice: 5, MaxComputeUnitLimit: 7}).Policy()
	assert.Equal(t, uint64(5), p.MaxComputeUnitPrice)
	assert.Equal(t, uint32(7), p.MaxComputeUnitLimit)
}

// hostileCase is a transaction that must be refused, and the text the refusal must contain.
type hostileCase struct {
	name   string
	policy SolanaPolicy
	intent func(f *fixture) Intent
	tx     func(t *testing.T, f *fixture) string
	is     error
	want   []string
}

func hostileCases() []hostileCase {
	stakeIntent := func(f *fixture) Intent { return f.stakeIntent() }
	unstakeIntent := func(f *fixture) Intent { return f.unstakeIntent() }
	withdrawIntent := func(f *fixture) Intent { return f.withdrawIntent() }
	stakeWith := func(mod func(f *fixture, in []solana.Instruction) []solana.Instruction) func(t *testing.T, f *fixture) string {
		return func(t *testing.T, f *fixture) string { return f.tx64(t, f.staker, mod(f, f.stakeInstrs())...) }
	}
	raw := func(mod func(f *fixture, b []byte) string) func(t *testing.T, f *fixture) string {
		return func(t *testing.T, f *fixture) string { return mod(f, f.txBytes(t, f.staker, f.stakeInstrs()...)) }
	}
	return []hostileCase{
		{name: "wrong fee payer", intent: stakeIntent, is: ErrVerification, want: []string{"fee payer"},
			tx: func(t *testing.T, f *fixture) string { return f.tx64(t, f.stranger, f.stakeInstrs()...) }},
		{name: "extra system transfer to a stranger", intent: stakeIntent, is: ErrVerification,
			want: []string{"unexpected instruction", "system.Transfer of 5000 lamports to"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append(in, system.NewTransferInstruction(5000, f.staker, f.stranger).Build())
			})},
		{name: "transfer before the stake", intent: stakeIntent, is: ErrVerification, want: []string{"instruction 1 of stake", "system.Transfer"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{system.NewTransferInstruction(5000, f.staker, f.stranger).Build()}, in...)
			})},
		{name: "another vote account", intent: stakeIntent, is: ErrVerification, want: []string{"vote account", "want " + newFixture().vote.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[2] = delegate(f.derived, f.otherVote, f.staker)
				return in
			})},
		{name: "vote account not on allow-list", policy: SolanaPolicy{AllowedVoteAccounts: []string{newFixture().vote.String()}},
			intent: func(f *fixture) Intent { in := f.stakeIntent(); in.VoteAccount = ""; return in },
			is:     ErrVerification, want: []string{"allow-list"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[2] = delegate(f.derived, f.otherVote, f.staker)
				return in
			})},
		{name: "intended vote account not on allow-list", policy: SolanaPolicy{AllowedVoteAccounts: []string{newFixture().otherVote.String()}},
			intent: stakeIntent, is: ErrVerification, want: []string{"allow-list"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "no vote account intended and no allow-list", intent: func(f *fixture) Intent { in := f.stakeIntent(); in.VoteAccount = ""; return in },
			is: ErrVerification, want: []string{"vote account", "neither is set"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "malformed allow-list entry", policy: SolanaPolicy{AllowedVoteAccounts: []string{"not-an-address"}},
			intent: stakeIntent, is: ErrVerification, want: []string{"allow-list", "not-an-address"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "other stake amount", intent: stakeIntent, is: ErrVerification, want: []string{"stake amount", "want 2000000000 lamports, got 3000000000 lamports"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = f.createWithSeed(f.staker, f.seed, f.derived, 3_000_000_000, solana.StakeProgramID)
				return in
			})},
		{name: "new account not derived from its seed", intent: stakeIntent, is: ErrVerification, want: []string{"new stake account"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = f.createWithSeed(f.staker, "another-seed", f.derived, f.lamports, solana.StakeProgramID)
				return in
			})},
		{name: "new account owned by another program", intent: stakeIntent, is: ErrVerification, want: []string{"owner"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = f.createWithSeed(f.staker, f.seed, f.derived, f.lamports, solana.SystemProgramID)
				return in
			})},
		{name: "other base for the new account", intent: stakeIntent, is: ErrVerification, want: []string{"base"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				d, _ := solana.CreateWithSeed(f.stranger, f.seed, solana.StakeProgramID)
				in[0] = f.createWithSeed(f.stranger, f.seed, d, f.lamports, solana.StakeProgramID)
				return in
			})},
		{name: "CreateAccount needs the new account to sign", intent: stakeIntent, is: ErrVerification, want: []string{"required signers", newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = system.NewCreateAccountInstruction(f.lamports, stakeAccountSpace, solana.StakeProgramID, f.staker, f.stranger).Build()
				return in
			})},
		{name: "other stake account (unstake)", intent: unstakeIntent, is: ErrVerification, want: []string{"stake account", "want " + newFixture().stakeAccount.String()},
			tx: func(t *testing.T, f *fixture) string {
				return f.tx64(t, f.staker, deactivate(f.otherVote, solana.SysVarClockPubkey, f.staker, true))
			}},
		{name: "other stake account (withdraw)", intent: withdrawIntent, is: ErrVerification, want: []string{"stake account"},
			tx: func(t *testing.T, f *fixture) string {
				return f.tx64(t, f.staker, withdraw(f.otherVote, f.staker, f.staker, 1_500_000_000))
			}},
		{name: "other recipient", intent: withdrawIntent, is: ErrVerification, want: []string{"recipient", "got " + newFixture().stranger.String()},
			tx: func(t *testing.T, f *fixture) string {
				return f.tx64(t, f.staker, withdraw(f.stakeAccount, f.stranger, f.staker, 1_500_000_000))
			}},
		{name: "withdraw with a stranger as lockup custodian", intent: withdrawIntent, is: ErrVerification, want: []string{"lockup custodian"},
			tx: func(t *testing.T, f *fixture) string {
				return f.tx64(t, f.staker, withdrawCustodian(f.stakeAccount, f.staker, f.staker, 1_500_000_000, f.otherVote))
			}},
		{name: "other withdraw amount", intent: withdrawIntent, is: ErrVerification, want: []string{"withdraw amount"},
			tx: func(t *testing.T, f *fixture) string {
				return f.tx64(t, f.staker, withdraw(f.stakeAccount, f.staker, f.staker, 1_500_000_001))
			}},
		{name: "deactivate by another authority", intent: unstakeIntent, is: ErrVerification, want: []string{"stake authority"},
			tx: func(t *testing.T, f *fixture) string {
				return f.tx64(t, f.staker, deactivate(f.stakeAccount, solana.SysVarClockPubkey, f.stranger, false))
			}},
		{name: "deactivate with a substituted clock", intent: unstakeIntent, is: ErrVerification, want: []string{"clock sysvar"},
			tx: func(t *testing.T, f *fixture) string {
				return f.tx64(t, f.staker, deactivate(f.stakeAccount, f.stranger, f.staker, true))
			}},
		{name: "unstake carrying a withdraw", intent: unstakeIntent, is: ErrVerification, want: []string{"unexpected instruction", "stake.Withdraw"},
			tx: func(t *testing.T, f *fixture) string {
				return f.tx64(t, f.staker, append(f.unstakeInstrs(), withdraw(f.stakeAccount, f.stranger, f.staker, 1))...)
			}},
		{name: "extra stake Authorize", intent: stakeIntent, is: ErrVerification, want: []string{"stake.Authorize"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append(in, authorize(f.derived, f.stranger, f.staker))
			})},
		{name: "unknown program", intent: stakeIntent, is: ErrVerification, want: []string{"program", "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append(in, solana.NewInstruction(solana.MemoProgramID, nil, []byte("hi")))
			})},
		{name: "compute unit price over cap", policy: SolanaPolicy{MaxComputeUnitPrice: 100_000}, intent: stakeIntent, is: ErrVerification,
			want: []string{"compute unit price", "at most 100000", "got 100001"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computePrice(100_001)}, in...)
			})},
		{name: "compute unit price over default cap", intent: stakeIntent, is: ErrVerification, want: []string{"compute unit price"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computePrice(DefaultMaxComputeUnitPrice + 1)}, in...)
			})},
		{name: "compute unit limit over cap", policy: SolanaPolicy{MaxComputeUnitLimit: 200_000}, intent: stakeIntent, is: ErrVerification,
			want: []string{"compute unit limit"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computeLimit(200_001)}, in...)
			})},
		{name: "duplicate compute unit price", intent: stakeIntent, is: ErrVerification, want: []string{"at most one SetComputeUnitPrice"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computePrice(1), computePrice(2)}, in...)
			})},
		{name: "other compute budget instruction", intent: stakeIntent, is: ErrVerification, want: []string{"computeBudget.RequestHeapFrame"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{solana.NewInstruction(solana.ComputeBudget, nil, []byte{1, 0, 0, 1, 0})}, in...)
			})},
		{name: "stake account required to sign", intent: stakeIntent, is: ErrVerification, want: []string{"required signers", newFixture().derived.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = stake.NewInitializeInstruction(f.staker, f.staker, f.derived).Build()
				return in
			})},
		{name: "stake authority is a stranger", intent: stakeIntent, is: ErrVerification, want: []string{"stake authority", "got " + newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.stranger, f.staker, solana.PublicKey{}, 0)
				return in
			})},
		{name: "withdraw authority is a stranger", intent: stakeIntent, is: ErrVerification, want: []string{"withdraw authority", "got " + newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.staker, f.stranger, solana.PublicKey{}, 0)
				return in
			})},
		{name: "lockup custodian is a stranger", intent: stakeIntent, is: ErrVerification, want: []string{"lockup custodian"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.staker, f.staker, f.stranger, 0)
				return in
			})},
		{name: "lockup nobody can lift", intent: stakeIntent, is: ErrVerification, want: []string{"lockup", "epoch 999"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.staker, f.staker, solana.PublicKey{}, 999)
				return in
			})},
		{name: "delegate signed by a stranger", intent: stakeIntent, is: ErrVerification, want: []string{"required signers"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[2] = delegate(f.derived, f.vote, f.stranger)
				return in
			})},
		{name: "duplicate delegate", intent: stakeIntent, is: ErrVerification, want: []string{"unexpected instruction", "stake.DelegateStake"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append(in, delegate(f.derived, f.otherVote, f.staker))
			})},
		{name: "missing delegate", intent: stakeIntent, is: ErrVerification, want: []string{"instructions"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in[:2] })},
		{name: "durable nonce", intent: stakeIntent, is: ErrVerification, want: []string{"system.AdvanceNonceAccount"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{system.NewAdvanceNonceAccountInstruction(f.stranger, solana.SysVarRecentBlockHashesPubkey, f.staker).Build()}, in...)
			})},
		{name: "versioned message", intent: stakeIntent, is: ErrVerification, want: []string{"message version", "want legacy, got v0"},
			tx: func(t *testing.T, f *fixture) string {
				tx, err := solana.NewTransaction(f.stakeInstrs(), f.blockhash, solana.TransactionPayer(f.staker))
				require.NoError(t, err)
				tx.Message.SetVersion(solana.MessageVersionV0)
				b, err := tx.MarshalBinary()
				require.NoError(t, err)
				return base64.StdEncoding.EncodeToString(b)
			}},
		{name: "missing signature slot", intent: stakeIntent, is: ErrVerification, want: []string{"signature slots"},
			tx: raw(func(f *fixture, b []byte) string {
				return base64.StdEncoding.EncodeToString(append([]byte{0}, b[65:]...))
			})},
		{name: "garbage: empty", intent: stakeIntent, is: ErrDecode, want: []string{"empty"},
			tx: func(*testing.T, *fixture) string { return "" }},
		{name: "garbage: not any encoding", intent: stakeIntent, is: ErrDecode, want: []string{"not valid base64, base58 or hex"},
			tx: func(*testing.T, *fixture) string { return "!!not a transaction!!" }},
		{name: "garbage: base64 of noise", intent: stakeIntent, is: ErrDecode, want: []string{"not a well-formed transaction", "as base64"},
			tx: func(*testing.T, *fixture) string {
				return base64.StdEncoding.EncodeToString([]byte("hello, this is not a transaction"))
			}},
		{name: "garbage: truncated", intent: stakeIntent, is: ErrDecode, want: []string{"truncated"},
			tx: raw(func(f *fixture, b []byte) string { return base64.StdEncoding.EncodeToString(b[:len(b)-3]) })},
		{name: "garbage: trailing bytes", intent: stakeIntent, is: ErrDecode, want: []string{"left over"},
			tx: raw(func(f *fixture, b []byte) string { return base64.StdEncoding.EncodeToString(append(b, 0)) })},
		{name: "garbage: oversized", intent: stakeIntent, is: ErrDecode, want: []string{"longer than any encoding"},
			tx: func(*testing.T, *fixture) string { return string(make([]byte, 5000)) }},
		{name: "intent: other chain", intent: func(f *fixture) Intent { in := f.stakeIntent(); in.Chain = "ethereum"; return in },
			is: ErrIntent, want: []string{"chain"}, tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "intent: partial unstake", intent: func(f *fixture) Intent { in := f.unstakeIntent(); in.Lamports = 5; return in },
			is: ErrIntent, want: []string{"partial amount"}, tx: func(t *testing.T, f *fixture) string { return f.tx64(t, f.staker, f.unstakeInstrs()...) }},
		{name: "intent: unknown operation", intent: func(f *fixture) Intent { in := f.stakeIntent(); in.Operation = "redelegate"; return in },
			is: ErrIntent, want: []string{"redelegate"}, tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "intent says stake, tx unstakes", intent: stakeIntent, is: ErrVerification, want: []string{"stake.Deactivate"},
			tx: func(t *testing.T, f *fixture) string { return f.tx64(t, f.staker, f.unstakeInstrs()...) }},
	}
}

func TestSolanaRefusesHostile(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			s := NewSolana(f.keyring(), tc.policy)
			unsigned := tc.tx(t, f)
			intent := tc.intent(f)

			v, err := s.Verify(unsigned, intent)
			require.Error(t, err)
			assert.Nil(t, v)
			assert.ErrorIs(t, err, tc.is)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			if errors.Is(err, ErrVerification) {
				var ve *VerificationError
				require.ErrorAs(t, err, &ve)
				assert.NotEmpty(t, ve.Check)
			}

			signed, serr := s.Sign(context.Background(), unsigned, intent)
			assert.Nil(t, signed, "nothing is signed")
			assert.Equal(t, err.Error(), serr.Error())
		})
	}
}

func TestSolanaSignUnknownStaker(t *testing.T) {
	f := newFixture()
	s := NewSolana(&SolanaKeyring{}, SolanaPolicy{})
	_, err := s.Sign(context.Background(), f.tx64(t, f.staker, f.stakeInstrs()...), f.stakeIntent())
	require.ErrorIs(t, err, ErrUnknownKey)
	var uk *UnknownKeyError
	require.ErrorAs(t, err, &uk)
	assert.Equal(t, f.staker.String(), uk.Address)
	assert.Contains(t, err.Error(), f.staker.String())
}

func TestSolanaSignCanceled(t *testing.T) {
	f := newFixture()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewSolana(f.keyring(), SolanaPolicy{}).Sign(ctx, f.tx64(t, f.staker, f.stakeInstrs()...), f.stakeIntent())
	require.ErrorIs(t, err, context.Canceled)
}

func TestDecodeAmbiguous(t *testing.T) {
	f := newFixture()
	stakeTx := f.txBytes(t, f.staker, f.stakeInstrs()...)
	unstakeTx := f.txBytes(t, f.staker, f.unstakeInstrs()...)
	saved := solanaEncodings
	t.Cleanup(func() { solanaEncodings = saved })
	solanaEncodings = []decodeCandidate{
		{"first", func(string) ([]byte, error) { return stakeTx, nil }},
		{"same bytes again", func(string) ([]byte, error) { return stakeTx, nil }},
		{"second", func(string) ([]byte, error) { return unstakeTx, nil }},
	}
	_, _, err := decodeSolanaTx("anything")
	require.ErrorIs(t, err, ErrDecode)
	assert.Contains(t, err.Error(), "ambiguous encoding")
	assert.Contains(t, err.Error(), "first and as second")

	solanaEncodings = solanaEncodings[:2]
	tx, enc, err := decodeSolanaTx("anything")
	require.NoError(t, err, "two readings giving the same bytes are not ambiguous")
	assert.Equal(t, "first", enc)
	assert.Equal(t, stakeTx, tx.raw)
}

func TestCompactU16(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want int
		err  string
	}{
		{[]byte{0x00}, 0, ""},
		{[]byte{0x7f}, 127, ""},
		{[]byte{0x80, 0x01}, 128, ""},
		{[]byte{0xff, 0xff, 0x03}, 0xffff, ""},
		{[]byte{0x80, 0x00}, 0, "non-canonical"},
		{[]byte{0xff, 0xff, 0x04}, 0, "overflows"},
		{[]byte{0x80, 0x80, 0x80, 0x01}, 0, "longer than 3 bytes"},
		{[]byte{0x80}, 0, "truncated"},
	} {
		got, err := (&wireReader{b: tc.in}).compactU16()
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "% x", tc.in)
			continue
		}
		require.NoError(t, err, "% x", tc.in)
		assert.Equal(t, tc.want, got, "% x", tc.in)
	}
}

func BenchmarkSolanaSign(b *testing.B) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	unsigned := f.tx64(b, f.staker, f.stakeInstrs()...)
	intent := f.stakeIntent()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sign(ctx, unsigned, intent); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEd25519Raw(b *testing.B) {
	f := newFixture()
	msg := f.txBytes(b, f.staker, f.stakeInstrs()...)[65:]
	b.ReportAllocs()
	for b.Loop() {
		_ = ed25519.Sign(f.stakerKey, msg)
	}
}
