package signer

import (
	"context"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultCapsAtTheirBounds: a signer with no caps configured (the worker's flags at 0) signs a
// transaction at each default cap docs/configuration.md states and refuses one just past it: total fee 100,000
// lamports, compute-unit limit 200,000, unit price 1,000,000 micro-lamports.
func TestDefaultCapsAtTheirBounds(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	for _, tc := range []struct {
		name   string
		budget []solana.Instruction
		want   string // "" = signed; otherwise a part of the refusal
	}{
		// 5,000 + 1,000,000 × 95,000 / 1,000,000 = 100,000 lamports.
		{"fee at 100,000 lamports", []solana.Instruction{computeLimit(95_000), computePrice(1_000_000)}, ""},
		{"fee at 100,001 lamports", []solana.Instruction{computeLimit(95_001), computePrice(1_000_000)}, "100001 lamports"},
		{"unit limit 200,000", []solana.Instruction{computeLimit(200_000)}, ""},
		{"unit limit 200,001", []solana.Instruction{computeLimit(200_001)}, "want at most 200000 units, got 200001"},
		{"unit price 1,000,000", []solana.Instruction{computeLimit(10), computePrice(1_000_000)}, ""},
		{"unit price 1,000,001", []solana.Instruction{computeLimit(10), computePrice(1_000_001)}, "1000001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := f.tx64(t, f.staker, append(tc.budget, f.unstakeInstrs()...)...)
			signed, err := s.Sign(context.Background(), tx, f.unstakeIntent())
			if tc.want == "" {
				require.NoError(t, err)
				assert.NotEmpty(t, signed.Signature)
				return
			}
			require.ErrorIs(t, err, ErrVerification)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
