package evm

import (
	"context"
	"testing"
)

// BenchmarkSignDelegate measures decode + verify + sign of ethers' delegate transaction.
func BenchmarkSignDelegate(b *testing.B) {
	v := loadVectors(b)
	s := testSigner(b, v)
	x := v.vector(b, "delegate")
	in := intentFor(b, v, x, false)
	raw := mustHex(b, x.Unsigned)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sign(ctx, in, raw); err != nil {
			b.Fatal(err)
		}
	}
}
