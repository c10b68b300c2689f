package starter

import (
	"fmt"
	"strconv"
	"strings"
)

// parseLamports reads an amount given either as whole lamports or as SOL with at most nine
// decimals; exactly one of the two must be given.
func parseLamports(lamports, sol string) (uint64, error) {
	switch {
	case lamports != "" && sol != "":
		return 0, fmt.Errorf("give --lamports or --sol, not both")
	case lamports != "":
		if strings.HasPrefix(lamports, "+") || strings.HasPrefix(lamports, "-") {
			return 0, fmt.Errorf("--lamports %q: want a positive whole number", lamports)
		}
		n, err := strconv.ParseUint(lamports, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("--lamports %q: want a positive whole number that fits in 64 bits", lamports)
		}
		if n == 0 {
			return 0, fmt.Errorf("--lamports: must be more than zero")
		}
		return n, nil
	case sol != "":
		return parseSOL(sol)
	}
	return 0, nil
}

func parseSOL(s string) (uint64, error) {
	bad := func(why string) (uint64, error) { return 0, fmt.Errorf("--sol %q: %s", s, why) }
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && (!hasDot || frac == "") {
		return bad("want a number such as 2 or 0.5")
	}
	if hasDot && frac == "" {
		return bad("want digits after the decimal point")
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return bad("want a positive decimal number (digits and one point only)")
		}
	}
	if len(frac) > 9 {
		return bad("more than 9 decimals: the smallest unit is 1 lamport (0.000000001 SOL)")
	}
	frac += strings.Repeat("0", 9-len(frac))
	if whole == "" {
		whole = "0"
	}
	w, err := strconv.ParseUint(whole, 10, 64)
	if err != nil || w > (1<<63-1)/1_000_000_000 {
		return bad("too large")
	}
	f, _ := strconv.ParseUint(frac, 10, 64)
	n := w*1_000_000_000 + f
	if n == 0 {
		return bad("must be more than zero")
	}
	return n, nil
}
