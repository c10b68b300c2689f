package jobs

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"

	"github.com/stakeflow/stakeflow/apiclient"
)

// Bounds the records are checked against before they are stored (see checkAPY, checkReward,
// checkSSV). A record outside them is stored flagged with the reason, never dropped and never
// silently as true.
const (
	// MinAPY and MaxAPY bound an APY, in percent (the unit the service's figures are in: 3.1 is
	// 3.1%). Below -100% a stake would lose more than itself, which no chain can take. Above
	// 1000% is two orders of magnitude past what any network the service serves pays (the
	// highest issuance among them is under 20% a year), so such a figure is an error, not a
	// yield. A negative APY within the bounds is kept unflagged: penalties (Ethereum's
	// inactivity leak, slashing) can make a period's consensus yield negative.
	MinAPY = -100
	MaxAPY = 1000
	// MinSSVAmount and MaxSSVAmount bound an SSV request's amountPerValidator, in ETH: a
	// validator activates with 32 ETH, and a compounding (0x02) validator holds at most 2048
	// ETH (EIP-7251).
	MinSSVAmount = 32
	MaxSSVAmount = 2048
)

// rewardTolerance is how far netAmount may be from amount minus fee and still be rounding: two
// gwei (the consensus layer counts in gwei, and each of the three values may be rounded to one),
// or one part in a billion of the largest of the three (the service's figures are doubles),
// whichever is larger.
var (
	rewardToleranceAbs = big.NewRat(2, 1_000_000_000)
	rewardToleranceRel = big.NewRat(1, 1_000_000_000)
)

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// maxExponent bounds the exponent of a number written as d.ddde±n that is stored as plain decimal
// text: past it the text would be thousands of digits long.
const maxExponent = 400

// decimalText is the service's number n as the store's plain decimal text, exactly: "1e12" is
// "1000000000000", "1.5E-3" is "0.0015". "" stays "" (absent). A number whose exponent is
// beyond maxExponent is an error: it cannot be stored as text.
func decimalText(n json.Number) (string, error) {
	s := string(n)
	if s == "" {
		return "", nil
	}
	m := jsonNumber.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("%q is not a number", s)
	}
	if m[3] == "" {
		return s, nil
	}
	var exp int
	if _, err := fmt.Sscanf(m[3][1:], "%d", &exp); err != nil || exp > maxExponent || exp < -maxExponent {
		return "", fmt.Errorf("%q is beyond what can be stored exactly (exponent past ±%d)", s, maxExponent)
	}
	neg := strings.HasPrefix(s, "-")
	intPart, frac := m[1], strings.TrimPrefix(m[2], ".")
	digits := intPart + frac
	point := len(intPart) + exp // position of the decimal point in digits
	switch {
	case point <= 0:
		digits = strings.Repeat("0", 1-point) + digits
		point = 1
	case point > len(digits):
		digits += strings.Repeat("0", point-len(digits))
	}
	out := strings.TrimLeft(digits[:point], "0")
	if out == "" {
		out = "0"
	}
	if f := digits[point:]; f != "" {
		out += "." + f
	}
	if neg {
		out = "-" + out
	}
	return out, nil
}

// flags collects the reasons a record is flagged.
type flags []string

func (f *flags) add(format string, args ...any) { *f = append(*f, fmt.Sprintf(format, args...)) }

func (f flags) String() string { return strings.Join(f, "; ") }

// number is field's value as exact decimal text for the store, and as a rational for checks (nil
// when absent or unstorable, which is flagged).
func (f *flags) number(field string, n json.Number) (string, *big.Rat) {
	s, err := decimalText(n)
	if err != nil {
		f.add("%s %v", field, err)
		return "", nil
	}
	if s == "" {
		return "", nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		f.add("%s %q is not a number", field, s)
		return "", nil
	}
	return s, r
}

func (f *flags) period(start, end time.Time) {
	if !start.IsZero() && !end.IsZero() && end.Before(start) {
		f.add("the period ends (%s) before it starts (%s)", end.UTC().Format(time.RFC3339), start.UTC().Format(time.RFC3339))
	}
}

// checkAPY is rec as a store row, flagged when it contradicts itself or what a chain can pay:
// an APY outside [MinAPY, MaxAPY] percent, a negative execution-layer APY (priority fees and MEV
// are paid to validators, never taken from them), a period that ends before it starts.
func checkAPY(network string, rec apiclient.NetworkAPYRecord) APY {
	var f flags
	row := APY{Network: network, Period: rec.StakingPeriodNumber, PeriodStart: rec.StakingPeriodStart.Time,
		PeriodEnd: rec.StakingPeriodEnd.Time, UpdatedAt: rec.UpdatedAt.Time}
	var exec *big.Rat
	for _, v := range []struct {
		field string
		n     json.Number
		to    *string
		r     **big.Rat
	}{
		{"networkApy", rec.NetworkAPY, &row.NetworkAPY, nil},
		{"consensusLayerApy", rec.ConsensusLayerAPY, &row.ConsensusAPY, nil},
		{"executionLayerApy", rec.ExecutionLayerAPY, &row.ExecutionAPY, &exec},
	} {
		s, r := f.number(v.field, v.n)
		*v.to = s
		if v.r != nil {
			*v.r = r
		}
		switch {
		case r == nil:
		case r.Cmp(big.NewRat(MinAPY, 1)) < 0:
			f.add("%s %s%% is below %d%%: a stake cannot lose more than itself", v.field, s, MinAPY)
		case r.Cmp(big.NewRat(MaxAPY, 1)) > 0:
			f.add("%s %s%% is above %d%%: beyond what any staking network pays", v.field, s, MaxAPY)
		}
	}
	if exec != nil && exec.Sign() < 0 {
		f.add("executionLayerApy %s%% is negative: execution-layer rewards (priority fees, MEV) are paid to validators, never taken", row.ExecutionAPY)
	}
	f.period(rec.StakingPeriodStart.Time, rec.StakingPeriodEnd.Time)
	row.Flag = f.String()
	return row
}

// checkReward is one reward of rec as a store row, flagged when it contradicts itself: netAmount
// not amount minus fee within rounding (rewardTolerance), a negative fee (the fee is the share the
// validator takes), a negative execution reward (priority fees and MEV are never negative), a
// period that ends before it starts. A negative consensus or staking amount is kept unflagged:
// penalties and slashing can take more than a period earns, and the interface does not say
// otherwise.
func checkReward(network, address string, rec apiclient.DelegatorRewardRecord, rw apiclient.Reward) Reward {
	var f flags
	validator := rw.Validator
	if validator == "" {
		validator = rec.Validator
	}
	row := Reward{Network: network, Address: address, Period: rec.StakingPeriod, Type: string(rw.Type),
		Validator: validator, Currency: string(rw.Currency), Recipient: rw.Recipient,
		PeriodStart: rec.StakingPeriodStart.Time, PeriodEnd: rec.StakingPeriodEnd.Time, NotFinalized: rec.NotFinalized}
	var amount, net, fee *big.Rat
	row.Amount, amount = f.number("amount", rw.Amount)
	row.NetAmount, net = f.number("netAmount", rw.NetAmount)
	row.Fee, fee = f.number("fee", rw.Fee)
	if amount != nil && net != nil && fee != nil {
		want := new(big.Rat).Sub(amount, fee)
		diff := new(big.Rat).Abs(new(big.Rat).Sub(net, want))
		largest := new(big.Rat).Abs(amount)
		for _, r := range []*big.Rat{net, fee} {
			if a := new(big.Rat).Abs(r); a.Cmp(largest) > 0 {
				largest = a
			}
		}
		tol := new(big.Rat).Mul(largest, rewardToleranceRel)
		if tol.Cmp(rewardToleranceAbs) < 0 {
			tol = rewardToleranceAbs
		}
		if diff.Cmp(tol) > 0 {
			f.add("netAmount %s is not amount %s minus fee %s (%s), beyond rounding", row.NetAmount, row.Amount, row.Fee, ratText(want))
		}
	}
	if fee != nil && fee.Sign() < 0 {
		f.add("fee %s is negative: the validator's fee is a share it takes from the rewards", row.Fee)
	}
	if amount != nil && amount.Sign() < 0 && rw.Type == apiclient.RewardTypeExecution {
		f.add("execution reward %s is negative: priority fees and MEV are paid to validators, never taken", row.Amount)
	}
	f.period(rec.StakingPeriodStart.Time, rec.StakingPeriodEnd.Time)
	row.Flag = f.String()
	return row
}

// checkSSV is r as a store row seen at at, flagged when it cannot be a set-up request: fewer than
// one validator, or an amount per validator that is not a decimal or outside [MinSSVAmount,
// MaxSSVAmount] ETH.
func checkSSV(r apiclient.SetupRequest, at time.Time) SSVRequest {
	var f flags
	row := SSVRequest{ID: r.ID, Status: r.Status, ValidatorsCount: r.ValidatorsCount, Type: r.Type,
		SSVOwnerAddress: r.SSVOwnerAddress, WithdrawalAddress: r.WithdrawalAddress, FeeRecipientAddress: r.FeeRecipientAddress, UpdatedAt: at}
	if r.ValidatorsCount < 1 {
		f.add("validatorsCount %d is below 1", r.ValidatorsCount)
	}
	if r.AmountPerValidator != "" {
		amount, ok := new(big.Rat).SetString(r.AmountPerValidator)
		s, err := decimalText(json.Number(r.AmountPerValidator))
		switch {
		case !ok || err != nil:
			f.add("amountPerValidator %q is not a decimal", r.AmountPerValidator)
		case amount.Cmp(big.NewRat(MinSSVAmount, 1)) < 0 || amount.Cmp(big.NewRat(MaxSSVAmount, 1)) > 0:
			row.AmountPerValidator = s
			f.add("amountPerValidator %s ETH is outside %d to %d ETH, what one validator can hold", s, MinSSVAmount, MaxSSVAmount)
		default:
			row.AmountPerValidator = s
		}
	}
	row.Flag = f.String()
	return row
}

// ratText is r as decimal text, exact when r is a finite decimal (as a difference of two is).
func ratText(r *big.Rat) string {
	for prec := 0; prec <= 60; prec++ {
		s := r.FloatString(prec)
		if back, ok := new(big.Rat).SetString(s); ok && back.Cmp(r) == 0 {
			return s
		}
	}
	return r.FloatString(60)
}
