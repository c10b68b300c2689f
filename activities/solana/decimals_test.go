package solana

import (
	"math/big"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// Decimals is the chain's own: 10^Decimals lamports are solana-go's LAMPORTS_PER_SOL.
func TestDecimalsAreLamportsPerSOL(t *testing.T) {
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(Decimals), nil)
	if unit.Cmp(new(big.Int).SetUint64(solana.LAMPORTS_PER_SOL)) != 0 {
		t.Fatalf("10^%d = %s lamports, LAMPORTS_PER_SOL is %d", Decimals, unit, solana.LAMPORTS_PER_SOL)
	}
}

// FormatSOL writes lamports as SOL exactly; expected values by hand (1 SOL = 10^9 lamports).
func TestFormatSOL(t *testing.T) {
	for lamports, want := range map[uint64]string{
		0: "0 SOL", 1: "0.000000001 SOL", 1_500_000_000: "1.5 SOL", 2_000_000_000: "2 SOL",
		18446744073709551615: "18446744073.709551615 SOL",
	} {
		if got := FormatSOL(lamports); got != want {
			t.Errorf("FormatSOL(%d) = %q, want %q", lamports, got, want)
		}
	}
}
