package signer

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
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
	assert.Equal(t, DefaultMaxFeeLamports, p.MaxFeeLamports)
	p = NewSolana(nil, SolanaPolicy{MaxComputeUnitPrice: 5, MaxComputeUnitLimit: 7, MaxFeeLamports: 9}).Policy()
	assert.Equal(t, uint64(5), p.MaxComputeUnitPrice)
	assert.Equal(t, uint32(7), p.MaxComputeUnitLimit)
	assert.Equal(t, uint64(9), p.MaxFeeLamports)
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
