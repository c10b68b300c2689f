package signer

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"
)

// The hot path of every signature is decode, verify against the intent, then sign. These
// benchmarks split it so that each part's cost can be set against a raw ed25519 signature
// (BenchmarkEd25519Raw) and against decode plus raw signature (BenchmarkDecodeEd25519Raw).
// BenchmarkSolanaSignVsFloor times Sign and that floor in alternation and reports their ratio,
// which holds steady on a busy machine where separate runs drift apart.

// BenchmarkSolanaDecode measures decoding the base64 wire transaction alone.
func BenchmarkSolanaDecode(b *testing.B) {
	f := newFixture()
	unsigned := f.tx64(b, f.staker, f.stakeInstrs()...)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decodeSolanaTx(unsigned); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSolanaVerify measures decode plus verification against the intent, without signing.
func BenchmarkSolanaVerify(b *testing.B) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	unsigned := f.tx64(b, f.staker, f.stakeInstrs()...)
	intent := f.stakeIntent()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify(unsigned, intent); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeEd25519Raw is the floor the full Sign path is held to: decode the wire
// transaction and sign its message with ed25519, with no verification.
func BenchmarkDecodeEd25519Raw(b *testing.B) {
	f := newFixture()
	unsigned := f.tx64(b, f.staker, f.stakeInstrs()...)
	b.ReportAllocs()
	for b.Loop() {
		t, _, err := decodeSolanaTx(unsigned)
		if err != nil {
			b.Fatal(err)
		}
		_ = ed25519.Sign(f.stakerKey, t.message())
	}
}

// BenchmarkSolanaSignParallel measures the full Sign path from several goroutines, as a worker
// signing for many workflows at once does.
func BenchmarkSolanaSignParallel(b *testing.B) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	unsigned := f.tx64(b, f.staker, f.stakeInstrs()...)
	intent := f.stakeIntent()
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Sign(ctx, unsigned, intent); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSolanaSignVsFloor runs the full Sign path and its floor (decode plus raw ed25519, as
// BenchmarkDecodeEd25519Raw) in alternation, so that both see the same machine load, and reports
// each one's time and their ratio (sign/floor).
func BenchmarkSolanaSignVsFloor(b *testing.B) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	unsigned := f.tx64(b, f.staker, f.stakeInstrs()...)
	intent := f.stakeIntent()
	ctx := context.Background()
	var floor, sign time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		t, _, err := decodeSolanaTx(unsigned)
		if err != nil {
			b.Fatal(err)
		}
		_ = ed25519.Sign(f.stakerKey, t.message())
		t1 := time.Now()
		if _, err := s.Sign(ctx, unsigned, intent); err != nil {
			b.Fatal(err)
		}
		sign += time.Since(t1)
		floor += t1.Sub(t0)
		n++
	}
	b.ReportMetric(float64(floor.Nanoseconds())/float64(n), "floor-ns/op")
	b.ReportMetric(float64(sign.Nanoseconds())/float64(n), "sign-ns/op")
	b.ReportMetric(float64(sign)/float64(floor), "sign/floor")
}
