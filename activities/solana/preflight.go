package solana

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/amount"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
)

// LamportsPerSignature is the base fee of one signature; a stake transaction carries the
// staker's only. A priority fee the service adds comes on top and is known once it is built.
const LamportsPerSignature = 5_000

// Decimals: 1 SOL = 10^9 lamports, the runtime's LAMPORTS_PER_SOL (solana-go's
// solana.LAMPORTS_PER_SOL, constants.go).
const Decimals = 9

// FormatSOL renders lamports as SOL, exactly (no float rounding).
func FormatSOL(lamports uint64) string {
	return amount.FromUint64(lamports).Format(Decimals) + " SOL"
}

// PreflightInput is a transaction to check against the staker's balance, who pays for it.
type PreflightInput struct {
	Network   string    `json:"network"`
	Operation Operation `json:"operation"`
	Staker    string    `json:"staker"`
	// Lamports is what a stake moves from the staker's balance (zero for the other operations,
	// whose amount comes out of the stake account).
	Lamports uint64 `json:"lamports,omitempty"`
	// FeeLamports is the fee of the built transaction when it is known; zero counts the base fee
	// of one signature.
	FeeLamports uint64 `json:"feeLamports,omitempty"`
}

// PreflightResult is what the staker holds and what the stake needs, in lamports.
type PreflightResult struct {
	Balance uint64 `json:"balance"`
	// Needed is the amount plus, for a stake, the new stake account's rent-exempt minimum, plus
	// the fee.
	Needed uint64 `json:"needed"`
	Rent   uint64 `json:"rent,omitempty"`
	Fee    uint64 `json:"fee"`
	// MinimumDelegation is the chain's minimum delegation a stake was checked against.
	MinimumDelegation uint64 `json:"minimumDelegation,omitempty"`
}

// Preflight reads the staker's balance from the worker's own RPC and refuses, as
// activities.ErrInsufficientFunds, a transaction the balance cannot pay for: for a stake the
// amount, the new stake account's rent-exempt minimum and the fee; for the others the fee. A stake
// whose stake account would delegate less than the chain's minimum delegation above its
// rent-exempt reserve (getStakeMinimumDelegation and getMinimumBalanceForRentExemption, read each
// time: the stake program's own, which a feature activation changes) is refused first, as
// activities.ErrInvalidInput, naming the amount, the reserve and the minimum. It runs before anything is
// signed.
func (a *Activities) Preflight(ctx context.Context, in PreflightInput) (PreflightResult, error) {
	r, err := a.chain(in.Network)
	if err != nil {
		return PreflightResult{}, err
	}
	stake := in.Operation == OpStake
	var minimum, rent uint64
	if stake {
		if rent, err = r.RentExemptMinimum(ctx, solchain.StakeAccountSize); err != nil {
			return PreflightResult{}, chainErr("rent-exempt minimum of a stake account", err)
		}
		if minimum, err = r.MinimumDelegation(ctx); err != nil {
			return PreflightResult{}, chainErr("minimum delegation", err)
		}
		// The stake account holds the amount (CreateAccountWithSeed's lamports) and delegates
		// what is above its rent-exempt reserve: the stake program's DelegateStake refuses less
		// than the minimum delegation (InsufficientDelegation).
		if in.Lamports < rent || in.Lamports-rent < minimum {
			return PreflightResult{Rent: rent, MinimumDelegation: minimum}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("stake of %s would delegate %s above the stake account's rent-exempt reserve of %s, under the chain's minimum delegation of %s (getStakeMinimumDelegation on %s): stake at least %s; nothing was signed",
					FormatSOL(in.Lamports), FormatSOL(in.Lamports-min(rent, in.Lamports)), FormatSOL(rent), FormatSOL(minimum), in.Network, FormatSOL(rent+minimum)),
				activities.ErrInvalidInput, nil)
		}
	}
	balance, err := r.Balance(ctx, in.Staker)
	if err != nil {
		return PreflightResult{}, chainErr("balance of "+in.Staker, err)
	}
	res := PreflightResult{Balance: balance, Fee: in.FeeLamports, Rent: rent, MinimumDelegation: minimum}
	if res.Fee == 0 {
		res.Fee = LamportsPerSignature
	}
	if !stake {
		in.Lamports = 0
	}
	needed, ok := sum(in.Lamports, res.Rent, res.Fee)
	if ok && balance >= needed {
		res.Needed = needed
		return res, nil
	}
	what := fmt.Sprintf("the %s needs %s in fees", in.Operation, FormatSOL(res.Fee))
	if stake {
		what = fmt.Sprintf("the stake needs %s plus %s rent for the stake account plus %s in fees",
			FormatSOL(in.Lamports), FormatSOL(res.Rent), FormatSOL(res.Fee))
	}
	return res, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("insufficient funds: staker %s holds %s, %s; nothing was signed", in.Staker, FormatSOL(balance), what),
		activities.ErrInsufficientFunds, nil)
}

// sum adds lamports, reporting false on overflow.
func sum(vs ...uint64) (uint64, bool) {
	var t uint64
	for _, v := range vs {
		if t+v < t {
			return 0, false
		}
		t += v
	}
	return t, true
}
