package signer

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// b58Inputs returns byte strings whose base58 encodings cover the edge cases: all zeros, all
// 0xff, leading zero bytes of every count, single set bits, and random keys and signatures.
func b58Inputs() [][]byte {
	var in [][]byte
	for _, n := range []int{0, 1, 2, 3, 4, 5, 31, 32, 33, 63, 64, 65, 100} {
		in = append(in, make([]byte, n), bytes.Repeat([]byte{0xff}, n))
	}
	for z := 0; z <= 32; z++ {
		b := bytes.Repeat([]byte{0xff}, 32)
		clear(b[:z])
		in = append(in, b)
		c := make([]byte, 32)
		if z < 32 {
			c[z] = 1
		}
		in = append(in, c)
	}
	for bit := 0; bit < 256; bit++ {
		b := make([]byte, 32)
		b[bit/8] = 0x80 >> (bit % 8)
		in = append(in, b)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := make([]byte, []int{32, 64, 1 + r.IntN(80)}[i%3])
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		for j := 0; j < r.IntN(4) && j < len(b); j++ {
			b[j] = 0
		}
		in = append(in, b)
	}
	return in
}

func TestEncodeBase58MatchesReference(t *testing.T) {
	for _, b := range b58Inputs() {
		require.Equal(t, base58.Encode(b), encodeBase58(b), "% x", b)
	}
}

// TestDecodeBase58KeyMatchesReference holds decodeBase58Key to solana.PublicKeyFromBase58: the
// same strings are accepted, with the same keys.
func TestDecodeBase58KeyMatchesReference(t *testing.T) {
	var cases []string
	for _, b := range b58Inputs() {
		s := base58.Encode(b)
		cases = append(cases, s, "1"+s, s+"1", strings.TrimPrefix(s, "1"), s+" ", " "+s)
		if len(s) > 1 {
			cases = append(cases, s[1:], s[:len(s)-1], s[:len(s)/2]+"0"+s[len(s)/2+1:], s[:len(s)/2]+"é"+s[len(s)/2+1:])
		}
	}
	cases = append(cases, "", "1", strings.Repeat("1", 31), strings.Repeat("1", 32), strings.Repeat("1", 33),
		strings.Repeat("z", 43), strings.Repeat("z", 44), strings.Repeat("z", 45), "11111111111111111111111111111112",
		"JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFG", "JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFH",
		"5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1", "\x00", "\xff", "not-an-address")
	for _, s := range cases {
		want, werr := solana.PublicKeyFromBase58(s)
		got, ok := decodeBase58Key(s)
		require.Equal(t, werr == nil, ok, "%q: reference error %v", s, werr)
		if ok {
			require.Equal(t, want, got, "%q", s)
			assert.Equal(t, s, encodeBase58(got[:]), "an accepted address is the canonical spelling of its key")
		}
	}
}

// FuzzBase58 holds the base58 encoder and address decoder to the reference implementation on
// arbitrary input, and checks that every address accepted is spelled canonically.
func FuzzBase58(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add(make([]byte, 32), strings.Repeat("1", 32))
	f.Add(bytes.Repeat([]byte{0xff}, 64), "JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFG")
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		if got, want := encodeBase58(b), base58.Encode(b); got != want {
			t.Fatalf("encodeBase58(% x) = %q, want %q", b, got, want)
		}
		for _, s := range []string{s, base58.Encode(b)} {
			want, werr := solana.PublicKeyFromBase58(s)
			got, ok := decodeBase58Key(s)
			if ok != (werr == nil) || (ok && got != want) {
				t.Fatalf("decodeBase58Key(%q) = %v, %v; reference %v, %v", s, got, ok, want, werr)
			}
			// The signer returns an intent's address as given; that is sound only if every
			// accepted spelling is the canonical one.
			if ok && encodeBase58(got[:]) != s {
				t.Fatalf("decodeBase58Key accepts %q, which is not the canonical %q", s, encodeBase58(got[:]))
			}
		}
	})
}

func BenchmarkEncodeBase58(b *testing.B) {
	f := newFixture()
	sig := make([]byte, 64)
	for i := range sig {
		sig[i] = byte(255 - i)
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"key", f.staker[:]}, {"signature", sig}} {
		b.Run(tc.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = encodeBase58(tc.in)
			}
		})
		b.Run(tc.name+"/reference", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = base58.Encode(tc.in)
			}
		})
	}
}

func BenchmarkDecodeBase58Key(b *testing.B) {
	s := newFixture().staker.String()
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeBase58Key(s); !ok {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := solana.PublicKeyFromBase58(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestEncodeBase64MatchesStd(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 1300; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		require.Equal(t, base64.StdEncoding.EncodeToString(b), encodeBase64(b), "%d bytes", n)
	}
}
