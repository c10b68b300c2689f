package amount

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// The kinds of error, for errors.Is.
var (
	// ErrSyntax: the text is not a plain decimal number under the package's rule.
	ErrSyntax = errors.New("not a plain amount")
	// ErrPrecision: more fractional digits than the chain's decimals.
	ErrPrecision = errors.New("finer than the chain's smallest unit")
	// ErrZero: zero where an operation's amount is meant.
	ErrZero = errors.New("zero amount")
	// ErrRange: more than the caller's bound (a uint64, a uint256).
	ErrRange = errors.New("amount out of range")
)

// Error is a refused amount: Input is what was given, Reason says what is wrong in words a person
// can act on, Kind is one of the Err values above.
type Error struct {
	Input  string
	Reason string
	Kind   error
}

// Error names the input and what is wrong.
func (e *Error) Error() string {
	if e.Kind == ErrZero {
		return e.Reason
	}
	return fmt.Sprintf("%q: %s", e.Input, e.Reason)
}

// Unwrap returns the kind.
func (e *Error) Unwrap() error { return e.Kind }

// Amount is an exact non-negative whole number of a chain's base unit. The zero value is zero.
// An Amount is immutable: its methods never change it and return copies of its value.
type Amount struct{ v *big.Int }

// FromUint64 is n base units.
func FromUint64(n uint64) Amount { return Amount{new(big.Int).SetUint64(n)} }

// FromBig is v base units; a negative v is refused (ErrRange).
func FromBig(v *big.Int) (Amount, error) {
	if v.Sign() < 0 {
		return Amount{}, &Error{Input: v.String(), Reason: "is negative", Kind: ErrRange}
	}
	return Amount{new(big.Int).Set(v)}, nil
}

// Parse reads a whole number of the base unit: digits only, no leading zero (except "0" itself).
func Parse(s string) (Amount, error) {
	if err := checkDigits(s, s, wholeBase); err != nil {
		return Amount{}, err
	}
	v, _ := new(big.Int).SetString(s, 10)
	return Amount{v}, nil
}

// ParseDecimal reads a decimal number of whole units ("1.5") of a chain whose base unit is
// 10^-decimals of the whole unit, and returns it in base units, exactly.
func ParseDecimal(s string, decimals int) (Amount, error) {
	if decimals < 0 {
		panic(fmt.Sprintf("amount: negative decimals %d", decimals))
	}
	whole, frac, hasPoint := strings.Cut(s, ".")
	what := fmt.Sprintf("a decimal number such as 2 or 0.5 (at most %d decimals)", decimals)
	if decimals == 0 {
		what = "a whole number"
	}
	if err := checkDigits(s, whole, what); err != nil {
		return Amount{}, err
	}
	if hasPoint {
		if err := checkFraction(s, frac, what); err != nil {
			return Amount{}, err
		}
		if len(frac) > decimals {
			return Amount{}, &Error{Input: s, Kind: ErrPrecision, Reason: fmt.Sprintf(
				"more than %d decimals: the smallest unit is %s", decimals, Amount{big.NewInt(1)}.Format(decimals))}
		}
	}
	v, _ := new(big.Int).SetString(whole+frac+strings.Repeat("0", decimals-len(frac)), 10)
	return Amount{v}, nil
}

// wholeBase is what Parse wants.
const wholeBase = "a whole number of the base unit"

// checkDigits checks part of input s is digits without a leading zero; what is what was wanted.
func checkDigits(s, part, what string) error {
	bad := func(reason string) error { return &Error{Input: s, Kind: ErrSyntax, Reason: reason} }
	switch {
	case s == "":
		return bad("want " + what + ", not nothing")
	case part == "" && strings.HasPrefix(s, "."):
		return bad("write a digit before the point (0" + s + ")")
	}
	if err := checkChars(s, what); err != nil {
		return err
	}
	if strings.Contains(s, ".") && part == s {
		// Parse: a point is not part of a whole number.
		return bad("want " + what + ", without a decimal point")
	}
	if len(part) > 1 && part[0] == '0' {
		return bad("write it without leading zeros")
	}
	return nil
}

// checkFraction checks the digits after the point.
func checkFraction(s, frac, what string) error {
	switch {
	case frac == "":
		return &Error{Input: s, Kind: ErrSyntax, Reason: "want digits after the decimal point"}
	case strings.Contains(frac, "."):
		return &Error{Input: s, Kind: ErrSyntax, Reason: "want " + what + ", with one decimal point at most"}
	}
	return nil
}

// checkChars names the first thing in s that is neither a digit nor a point.
func checkChars(s, what string) error {
	for _, c := range s {
		var reason string
		switch {
		case c >= '0' && c <= '9', c == '.':
			continue
		case c == '-' || c == '+':
			reason = "want " + what + ", without a sign"
		case c == 'e' || c == 'E':
			reason = "want " + what + ", without an exponent"
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			reason = "want " + what + ", without spaces"
		case what == wholeBase:
			reason = "want " + what + " (digits only)"
		default:
			reason = "want " + what + " (digits and a decimal point only)"
		}
		return &Error{Input: s, Kind: ErrSyntax, Reason: reason}
	}
	return nil
}

// big is the value, never nil.
func (a Amount) big() *big.Int {
	if a.v == nil {
		return new(big.Int)
	}
	return a.v
}

// Big is a copy of the value.
func (a Amount) Big() *big.Int { return new(big.Int).Set(a.big()) }

// IsZero reports whether a is zero.
func (a Amount) IsZero() bool { return a.big().Sign() == 0 }

// Positive refuses zero (ErrZero): the check of every amount an operation moves.
func (a Amount) Positive() error {
	if a.IsZero() {
		return &Error{Input: "0", Kind: ErrZero, Reason: "must be more than zero"}
	}
	return nil
}

// Uint64 is a as a uint64, or ErrRange when it does not fit.
func (a Amount) Uint64() (uint64, error) {
	if !a.big().IsUint64() {
		return 0, &Error{Input: a.String(), Kind: ErrRange, Reason: "is more than 2^64-1 (18446744073709551615)"}
	}
	return a.big().Uint64(), nil
}

// AtMost refuses a past max (ErrRange); what names max for the error ("a uint256").
func (a Amount) AtMost(max Amount, what string) error {
	if a.Cmp(max) > 0 {
		return &Error{Input: a.String(), Kind: ErrRange, Reason: "is more than " + what + " holds"}
	}
	return nil
}

// Cmp compares a and b: -1, 0 or +1.
func (a Amount) Cmp(b Amount) int { return a.big().Cmp(b.big()) }

// String is the base-unit whole number, as Parse reads it.
func (a Amount) String() string { return a.big().String() }

// Format writes a in whole units of a chain with the given decimals, exactly and without trailing
// zeros: 1500000000 with 9 is "1.5", 1 with 9 is "0.000000001", 0 is "0".
func (a Amount) Format(decimals int) string {
	s := a.String()
	if decimals <= 0 {
		return s
	}
	if len(s) <= decimals {
		s = strings.Repeat("0", decimals-len(s)+1) + s
	}
	whole, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// MaxUint256 is 2^256-1, the largest amount an EVM contract takes.
var MaxUint256 = Amount{new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))}
