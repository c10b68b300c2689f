package cosmos

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// The routes of the chain's parameters, in the Cosmos SDK's gRPC-gateway form (cosmos-sdk
// v0.50.13, the SDK line celestia-app v6 builds on (its go.mod, through celestiaorg/cosmos-sdk):
//   - proto/cosmos/staking/v1beta1/query.proto, Query.Params: Params{unbonding_time (a
//     Duration: "1213200s"), max_validators, max_entries, historical_entries, bond_denom,
//     min_commission_rate};
//   - proto/cosmos/auth/v1beta1/query.proto, Query.Bech32Prefix ("Since: cosmos-sdk 0.46"):
//     Bech32PrefixResponse{bech32_prefix};
//   - proto/cosmos/base/node/v1beta1/query.proto, Service.Config: ConfigResponse{minimum_gas_price,
//     pruning_keep_recent, pruning_interval, halt_height}; client/grpc/node/service.go answers
//     minimum_gas_price with the node's local minimum, sdk.DecCoins.String() ("0.004000000000000000utia",
//     several joined by commas, "" when app.toml sets none).
const (
	routeStakingParams = "/cosmos/staking/v1beta1/params"
	routeBech32        = "/cosmos/auth/v1beta1/bech32"
	routeNodeConfig    = "/cosmos/base/node/v1beta1/config"
)

// Params is what the chain answers about itself beyond its chain id.
type Params struct {
	// BondDenom is the staking params' bond denom.
	BondDenom string
	// UnbondingTime is the staking params' unbonding time.
	UnbondingTime time.Duration
	// AccountPrefix is the bech32 prefix of account addresses ("" when the route is not served).
	AccountPrefix string
	// MinGasPrices is the node's local minimum gas prices as it answers them (sdk.DecCoins
	// text; "" when it sets none or the route is not served).
	MinGasPrices string
	// Unanswered lists the optional routes the node does not serve (404 or 501): their values
	// stay the catalogued ones.
	Unanswered []string
}

// ReadParams reads the staking params (bond denom, unbonding time), the bech32 account prefix
// and the node's minimum gas prices. The staking params are required; the other two routes are
// optional (older SDKs and some gateways do not serve them): a 404 or 501 lists them in
// Unanswered.
func (c *Client) ReadParams(ctx context.Context) (Params, error) {
	var p Params
	var staking struct {
		Params struct {
			UnbondingTime string `json:"unbonding_time"`
			BondDenom     string `json:"bond_denom"`
		} `json:"params"`
	}
	found, err := c.get(ctx, routeStakingParams, &staking)
	if err != nil {
		return Params{}, err
	}
	if !found {
		return Params{}, fmt.Errorf("%w: %s %s: not found", ErrUnavailable, c.base, routeStakingParams)
	}
	d, err := time.ParseDuration(staking.Params.UnbondingTime)
	if err != nil || d <= 0 || staking.Params.BondDenom == "" {
		return Params{}, fmt.Errorf("%w: %s: unbonding time %q, bond denom %q", ErrUnavailable, routeStakingParams, staking.Params.UnbondingTime, staking.Params.BondDenom)
	}
	p.BondDenom, p.UnbondingTime = staking.Params.BondDenom, d

	var bech struct {
		Prefix string `json:"bech32_prefix"`
	}
	switch found, err := c.optional(ctx, routeBech32, &bech); {
	case err != nil:
		return Params{}, err
	case !found:
		p.Unanswered = append(p.Unanswered, routeBech32)
	case bech.Prefix == "":
		return Params{}, fmt.Errorf("%w: %s: empty bech32 prefix", ErrUnavailable, routeBech32)
	default:
		p.AccountPrefix = bech.Prefix
	}

	var cfg struct {
		MinimumGasPrice *string `json:"minimum_gas_price"`
	}
	switch found, err := c.optional(ctx, routeNodeConfig, &cfg); {
	case err != nil:
		return Params{}, err
	case !found || cfg.MinimumGasPrice == nil:
		p.Unanswered = append(p.Unanswered, routeNodeConfig)
	default:
		p.MinGasPrices = *cfg.MinimumGasPrice
	}
	return p, nil
}

// optional is get for a route the node may not serve: found is false on a 404 or a 501.
func (c *Client) optional(ctx context.Context, path string, out any) (bool, error) {
	found, err := c.get(ctx, path, out)
	var ns *notServedError
	if errors.As(err, &ns) {
		return false, nil
	}
	return found, err
}

// Params is what the chain answered at the last successful Verify with an Expect (nil before).
func (c *Client) Params() *Params { return c.params.Load() }

// notServedError is a 501 (the gateway's Unimplemented): ErrUnavailable.
type notServedError struct{ method, path string }

func (e *notServedError) Error() string {
	return fmt.Sprintf("%v: %s %s: not implemented by the node", ErrUnavailable, e.method, e.path)
}

func (e *notServedError) Unwrap() error { return ErrUnavailable }

// Expect is what the chain must answer for the client to be proven, beyond its chain id.
type Expect struct {
	// BondDenom is the staking denomination (Celestia: utia).
	BondDenom string
	// AccountPrefix is the bech32 prefix of account addresses (Celestia: celestia).
	AccountPrefix string
	// GasPrice is the price every transaction pays, in BondDenom per gas: the node's minimum
	// must not be above it.
	GasPrice *big.Rat
	// DefaultMinGasPrice is the node's minimum when it answers none (an empty
	// minimum_gas_price): the application's own default (nil: none).
	DefaultMinGasPrice *big.Rat
}

// Parameters named by a ParamMismatch.
const (
	ParamBondDenom     = "bond denom"
	ParamAccountPrefix = "account prefix"
	ParamMinGasPrice   = "minimum gas price"
)

// ParamMismatch is a chain parameter the chain answers differently from what is configured.
type ParamMismatch struct {
	// Param is ParamBondDenom, ParamAccountPrefix or ParamMinGasPrice.
	Param string
	// Configured is the configured (or catalogued) value; Chain is the chain's answer.
	Configured, Chain string
	// Route is where the chain answered.
	Route string
}

func (e *ParamMismatch) Error() string {
	if e.Param == ParamMinGasPrice {
		return fmt.Sprintf("the node's %s (%s) is %s, above the configured gas price %s", e.Param, e.Route, e.Chain, e.Configured)
	}
	return fmt.Sprintf("the chain's %s (%s) is %q, configured %q", e.Param, e.Route, e.Chain, e.Configured)
}

// Check compares the chain's answers with e: every answered value must match; a node minimum
// gas price above e.GasPrice is refused (the node would refuse every transaction). Routes not
// answered keep the catalogued values and pass.
func (e Expect) Check(p Params) error {
	var errs []error
	if e.BondDenom != "" && p.BondDenom != e.BondDenom {
		errs = append(errs, &ParamMismatch{Param: ParamBondDenom, Configured: e.BondDenom, Chain: p.BondDenom, Route: routeStakingParams})
	}
	if e.AccountPrefix != "" && p.AccountPrefix != "" && p.AccountPrefix != e.AccountPrefix {
		errs = append(errs, &ParamMismatch{Param: ParamAccountPrefix, Configured: e.AccountPrefix, Chain: p.AccountPrefix, Route: routeBech32})
	}
	if e.GasPrice != nil && !slices.Contains(p.Unanswered, routeNodeConfig) {
		floor, text, err := nodeMinGasPrice(p.MinGasPrices, e.BondDenom, e.DefaultMinGasPrice)
		switch {
		case err != nil:
			errs = append(errs, err)
		case floor != nil && floor.Cmp(e.GasPrice) > 0:
			errs = append(errs, &ParamMismatch{Param: ParamMinGasPrice, Configured: decimal(e.GasPrice) + e.BondDenom, Chain: text, Route: routeNodeConfig})
		}
	}
	return errors.Join(errs...)
}

// nodeMinGasPrice is the node's minimum gas price in denom from its DecCoins text; an empty text
// is the application's default (def). A text naming other denoms only sets no minimum in denom.
func nodeMinGasPrice(text, denom string, def *big.Rat) (*big.Rat, string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		if def == nil {
			return nil, "", nil
		}
		return def, "none set (the application's default " + decimal(def) + denom + ")", nil
	}
	for _, coin := range strings.Split(text, ",") {
		i := strings.IndexFunc(coin, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 {
			return nil, "", fmt.Errorf("%w: %s: minimum gas price %q is not a decimal coin list", ErrUnavailable, routeNodeConfig, text)
		}
		amount, d := coin[:i], coin[i:]
		if d != denom {
			continue
		}
		v, ok := new(big.Rat).SetString(amount)
		if !ok || v.Sign() < 0 {
			return nil, "", fmt.Errorf("%w: %s: minimum gas price %q is not a decimal coin list", ErrUnavailable, routeNodeConfig, text)
		}
		return v, coin, nil
	}
	return nil, "", nil
}

// decimal prints r without trailing zeros ("0.004").
func decimal(r *big.Rat) string {
	s := r.FloatString(18)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// WithExpect sets what Verify proves beyond the chain id; call it before the client is used.
func (c *Client) WithExpect(e Expect) *Client {
	c.expect = &e
	return c
}
