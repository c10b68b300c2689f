// Package amount is the one type for token amounts: Amount, an exact non-negative whole number of
// a chain's base unit (lamports, wei, utia, nanoton, HyperCore wei), backed by math/big.
//
// Every amount a person or a workflow input writes is read here, under one rule:
//
//   - Parse reads a whole number of the base unit ("1500000000" lamports); ParseDecimal reads a
//     decimal number of whole units with the chain's decimals ("1.5" SOL with 9).
//   - Only ASCII digits and, in ParseDecimal, one point with digits on both sides: no sign, no
//     exponent, no spaces, no underscores, no "0x".
//   - No leading zeros ("01", "00.5" are refused; "0" and "0.5" are fine): an amount has one
//     spelling, so the base-unit text of an accepted amount is exactly what Parse read, and no
//     reader can take "010" for octal. Trailing zeros of a fraction ("1.50") are fine.
//   - No more fractional digits than the chain's decimals, even zeros: "1.0000000000" SOL is
//     refused (10 digits, 9 decimals), so what was typed is always exactly representable.
//   - Zero parses (a balance or a reward read from a chain may be zero); an amount an operation
//     moves is checked with Positive, which every operation's validation calls.
//
// Format(decimals) writes an amount in whole units, exactly, without trailing zeros ("1.5",
// "0.000000001", "0"); ParseDecimal(a.Format(d), d) gives a back for every amount and every d.
//
// Errors are *Error values naming the input and what is wrong; errors.Is tells the kind
// (ErrSyntax, ErrPrecision, ErrZero, ErrRange). The flag or field name is the caller's to add.
//
// Amount lives at the module root, not under internal/, because the workflow packages, whose
// input types and validation are this module's public surface (an outside starter builds those
// inputs), validate with it, and an exported helper of theirs may return it.
package amount
