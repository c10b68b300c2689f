package amount

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// maxUint256 is 2^256-1 written out (as go-ethereum's math.MaxBig256 prints it).
const maxUint256 = "115792089237316195423570985008687907853269984665640564039457584007913129639935"

// Expected values are computed by hand: 1 SOL = 10^9 lamports, 1 POL = 10^18 wei, 1 TIA = 10^6
// utia, 1 HYPE = 10^8 HyperCore wei, 1 TON = 10^9 nanoton.
func TestParseDecimalReadsExactly(t *testing.T) {
	for _, tt := range []struct {
		in       string
		decimals int
		want     string
	}{
		{"1.5", 9, "1500000000"},
		{"2", 9, "2000000000"},
		{"0.5", 9, "500000000"},
		{"0.000000001", 9, "1"},
		{"1.000000001", 9, "1000000001"},
		{"1.50", 9, "1500000000"},
		{"0", 9, "0"},
		{"0.0", 9, "0"},
		{"18446744073.709551615", 9, "18446744073709551615"}, // max uint64 lamports
		{"0.000000000000000001", 18, "1"},
		{"123456789.123456789123456789", 18, "123456789123456789123456789"},
		{"115792089237316195423570985008687907853269984665640564039457.584007913129639935", 18, maxUint256},
		{"2.000001", 6, "2000001"},
		{"0.000001", 6, "1"},
		{"12.12345678", 8, "1212345678"},
		{"2.5", 8, "250000000"},
		{"3.000000007", 9, "3000000007"},
		{"42", 0, "42"},
	} {
		got, err := ParseDecimal(tt.in, tt.decimals)
		if err != nil {
			t.Errorf("ParseDecimal(%q, %d): %v", tt.in, tt.decimals, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("ParseDecimal(%q, %d) = %s, want %s", tt.in, tt.decimals, got, tt.want)
		}
	}
}

func TestParseReadsBaseUnits(t *testing.T) {
	for _, in := range []string{"0", "1", "42", "18446744073709551615", "18446744073709551616", maxUint256, "1" + strings.Repeat("0", 100)} {
		got, err := Parse(in)
		if err != nil || got.String() != in {
			t.Errorf("Parse(%q) = %s, %v; want %s", in, got, err, in)
		}
	}
	n, err := Parse("18446744073709551615")
	if err != nil {
		t.Fatal(err)
	}
	if u, err := n.Uint64(); err != nil || u != math.MaxUint64 {
		t.Errorf("max uint64 lamports: Uint64() = %d, %v", u, err)
	}
	past, _ := Parse("18446744073709551616")
	if _, err := past.Uint64(); !errors.Is(err, ErrRange) {
		t.Errorf("2^64 lamports: Uint64() error %v, want ErrRange", err)
	}
	top, _ := Parse(maxUint256)
	if err := top.AtMost(MaxUint256, "a uint256"); err != nil {
		t.Errorf("2^256-1 wei refused: %v", err)
	}
	over, _ := Parse("115792089237316195423570985008687907853269984665640564039457584007913129639936")
	if err := over.AtMost(MaxUint256, "a uint256"); !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "more than a uint256 holds") {
		t.Errorf("2^256 wei: %v, want ErrRange naming a uint256", err)
	}
}

func TestRefusedInputs(t *testing.T) {
	for _, tt := range []struct {
		in       string
		decimals int // -1: Parse (base units)
		kind     error
		reason   string
	}{
		{"-1", 9, ErrSyntax, "without a sign"},
		{"-1", -1, ErrSyntax, "without a sign"},
		{"+1", 9, ErrSyntax, "without a sign"},
		{"+1", -1, ErrSyntax, "without a sign"},
		{"1e3", 9, ErrSyntax, "without an exponent"},
		{"1e3", -1, ErrSyntax, "without an exponent"},
		{"1E-3", 8, ErrSyntax, "without an exponent"},
		{" 1", 9, ErrSyntax, "without spaces"},
		{"1 ", -1, ErrSyntax, "without spaces"},
		{"1\n", 6, ErrSyntax, "without spaces"},
		{"01", 9, ErrSyntax, "without leading zeros"},
		{"01", -1, ErrSyntax, "without leading zeros"},
		{"0042", -1, ErrSyntax, "without leading zeros"},
		{"00.5", 9, ErrSyntax, "without leading zeros"},
		{".5", 9, ErrSyntax, "a digit before the point (0.5)"},
		{"1.", 9, ErrSyntax, "digits after the decimal point"},
		{"1..2", 9, ErrSyntax, "one decimal point at most"},
		{"1.2.3", 9, ErrSyntax, "one decimal point at most"},
		{"1.5", -1, ErrSyntax, "without a decimal point"},
		{"", 9, ErrSyntax, "not nothing"},
		{"", -1, ErrSyntax, "not nothing"},
		{"abc", 9, ErrSyntax, "digits and a decimal point only"},
		{"abc", -1, ErrSyntax, "(digits only)"},
		{"١", -1, ErrSyntax, "(digits only)"},
		{"0x10", -1, ErrSyntax, "(digits only)"},
		{"1_000", -1, ErrSyntax, "(digits only)"},
		{"١", 9, ErrSyntax, "digits and a decimal point only"}, // an Arabic-Indic digit one
		{"1.0000000001", 9, ErrPrecision, "more than 9 decimals: the smallest unit is 0.000000001"},
		{"1.0000000000", 9, ErrPrecision, "more than 9 decimals"},
		{"1.0000001", 6, ErrPrecision, "more than 6 decimals: the smallest unit is 0.000001"},
		{"0.000000001", 8, ErrPrecision, "more than 8 decimals: the smallest unit is 0.00000001"},
		{"1.0", 0, ErrPrecision, "more than 0 decimals: the smallest unit is 1"},
	} {
		var err error
		if tt.decimals < 0 {
			_, err = Parse(tt.in)
		} else {
			_, err = ParseDecimal(tt.in, tt.decimals)
		}
		var e *Error
		switch {
		case err == nil:
			t.Errorf("%q (decimals %d) accepted", tt.in, tt.decimals)
		case !errors.Is(err, tt.kind) || !errors.As(err, &e):
			t.Errorf("%q (decimals %d): %v, want kind %v", tt.in, tt.decimals, err, tt.kind)
		case e.Input != tt.in || !strings.HasPrefix(err.Error(), strconv.Quote(tt.in)+": "):
			t.Errorf("%q (decimals %d): %q does not name the input", tt.in, tt.decimals, err)
		case !strings.Contains(err.Error(), tt.reason):
			t.Errorf("%q (decimals %d): %q does not say %q", tt.in, tt.decimals, err, tt.reason)
		}
	}
}

func TestPositiveRefusesZeroOnly(t *testing.T) {
	for _, in := range []string{"0", "0.0", "0.000000000"} {
		a, err := ParseDecimal(in, 9)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if err := a.Positive(); !errors.Is(err, ErrZero) || err.Error() != "must be more than zero" {
			t.Errorf("%q: Positive() = %v, want ErrZero", in, err)
		}
	}
	if err := (Amount{}).Positive(); !errors.Is(err, ErrZero) {
		t.Errorf("the zero Amount: Positive() = %v, want ErrZero", err)
	}
	one, _ := Parse("1")
	if err := one.Positive(); err != nil {
		t.Errorf("1: Positive() = %v", err)
	}
}

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		base     string
		decimals int
		want     string
	}{
		{"1500000000", 9, "1.5"},
		{"1", 9, "0.000000001"},
		{"0", 9, "0"},
		{"1000000000", 9, "1"},
		{"18446744073709551615", 9, "18446744073.709551615"},
		{"1000000000000000000", 18, "1"},
		{"1", 18, "0.000000000000000001"},
		{"123456789500000000000000000", 18, "123456789.5"},
		{maxUint256, 18, "115792089237316195423570985008687907853269984665640564039457.584007913129639935"},
		{"2000001", 6, "2.000001"},
		{"1212345678", 8, "12.12345678"},
		{"250000000", 8, "2.5"},
		{"42", 0, "42"},
	} {
		a, err := Parse(tt.base)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Format(tt.decimals); got != tt.want {
			t.Errorf("%s.Format(%d) = %q, want %q", tt.base, tt.decimals, got, tt.want)
		}
	}
	if got := (Amount{}).Format(9); got != "0" {
		t.Errorf("the zero Amount formats as %q", got)
	}
}

// For random values up to 2^300 and every decimals up to 40, Format and ParseDecimal are inverse,
// and so are String and Parse.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2026))
	for i := range 3000 {
		bits := r.IntN(300) + 1
		v := new(big.Int)
		for range (bits + 63) / 64 {
			v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(r.Uint64()))
		}
		v.Rsh(v, uint(((bits+63)/64)*64-bits))
		if i%10 == 0 { // round numbers, whose fractions are all zeros
			v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(r.IntN(20))), nil))
		}
		a, err := FromBig(v)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := Parse(a.String()); err != nil || b.Cmp(a) != 0 {
			t.Fatalf("Parse(%s) = %s, %v", a, b, err)
		}
		for d := 0; d <= 40; d++ {
			s := a.Format(d)
			b, err := ParseDecimal(s, d)
			if err != nil || b.Cmp(a) != 0 {
				t.Fatalf("ParseDecimal(Format(%s, %d) = %q) = %s, %v", a, d, s, b, err)
			}
		}
	}
}

// Whatever ParseDecimal accepts, Format writes back the same, less a fraction's trailing zeros.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"1.5", "0", "0.10", "01", ".5", "1e3", "10.0", "18446744073.709551615"} {
		f.Add(s, uint8(9))
	}
	f.Fuzz(func(t *testing.T, s string, d uint8) {
		a, err := ParseDecimal(s, int(d%40))
		if err != nil {
			return
		}
		want := s
		if whole, frac, ok := strings.Cut(s, "."); ok {
			want = strings.TrimSuffix(whole+"."+strings.TrimRight(frac, "0"), ".")
		}
		if got := a.Format(int(d % 40)); got != want {
			t.Fatalf("ParseDecimal(%q, %d).Format = %q", s, d%40, got)
		}
	})
}

func TestFromBigRefusesNegative(t *testing.T) {
	if _, err := FromBig(big.NewInt(-1)); !errors.Is(err, ErrRange) {
		t.Errorf("FromBig(-1): %v, want ErrRange", err)
	}
	v := big.NewInt(7)
	a, _ := FromBig(v)
	v.SetInt64(8)
	if a.String() != "7" {
		t.Errorf("an Amount changed with the big.Int it was made from: %s", a)
	}
}
