package starter

import (
	"errors"
	"fmt"

	"github.com/stakeflow/stakeflow/amount"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// unitFlags are the two flags an operation's amount is given with: one in the chain's base unit
// (--lamports), one in whole units with the chain's decimals (--sol).
type unitFlags struct {
	base, whole string
	decimals    int
}

var (
	solFlags = unitFlags{base: "--lamports", whole: "--sol", decimals: wfsolana.Decimals}
	polFlags = unitFlags{base: "--wei", whole: "--pol", decimals: wfpolygon.Decimals}
	tiaFlags = unitFlags{base: "--utia", whole: "--tia", decimals: wfcelestia.Decimals}
)

// errNoAmount: neither flag was given.
var errNoAmount = errors.New("no amount")

// parse reads an operation's amount from the one of the two flags that is given (base, whole:
// their values), under the amount package's rule; zero is refused. Neither given is errNoAmount.
func (f unitFlags) parse(base, whole string) (amount.Amount, error) {
	var a amount.Amount
	var err error
	flagName := f.base
	switch {
	case base != "" && whole != "":
		return a, fmt.Errorf("give %s or %s, not both", f.base, f.whole)
	case base != "":
		a, err = amount.Parse(base)
	case whole != "":
		flagName = f.whole
		a, err = amount.ParseDecimal(whole, f.decimals)
	default:
		return a, errNoAmount
	}
	if err == nil {
		err = a.Positive()
	}
	if err != nil {
		var e *amount.Error
		if errors.As(err, &e) && e.Kind == amount.ErrZero {
			return a, fmt.Errorf("%s: %w", flagName, err)
		}
		return a, fmt.Errorf("%s %w", flagName, err)
	}
	return a, nil
}

// parseLamports reads an amount given either as whole lamports or as SOL with at most nine
// decimals; at most one of the two may be given, and neither is zero.
func parseLamports(lamports, sol string) (uint64, error) {
	a, err := solFlags.parse(lamports, sol)
	if errors.Is(err, errNoAmount) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := a.Uint64()
	if err != nil {
		text, flagName := lamports, "--lamports"
		if sol != "" {
			text, flagName = sol, "--sol"
		}
		return 0, fmt.Errorf("%s %q: too large: at most 18446744073709551615 lamports fit in 64 bits", flagName, text)
	}
	return n, nil
}

// ParseWei reads an amount given either as whole wei or as POL with at most 18 decimals; exactly
// one of the two must be given. The result is decimal wei.
func ParseWei(wei, pol string) (string, error) {
	a, err := polFlags.parse(wei, pol)
	if errors.Is(err, errNoAmount) {
		return "", errors.New("give the amount with --pol or --wei")
	}
	return a.String(), err
}

// ParseUtia reads an amount given either as whole utia or as TIA with at most six decimals;
// exactly one of the two must be given. The result is decimal utia.
func ParseUtia(utia, tia string) (string, error) {
	a, err := tiaFlags.parse(utia, tia)
	if errors.Is(err, errNoAmount) {
		return "", errors.New("give the amount with --utia or --tia")
	}
	return a.String(), err
}
