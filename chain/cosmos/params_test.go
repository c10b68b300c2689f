package cosmos

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Answers in the gRPC gateway's JSON form of the SDK's messages (cosmos-sdk v0.50.13, the line
// celestia-app v6 builds on): staking Params (proto/cosmos/staking/v1beta1/staking.proto; the
// unbonding time of celestia-app's pkg/appconsts/app_consts.go UnbondingTime, 337h since CIP-037,
// as a Duration "1213200s"), Bech32PrefixResponse (proto/cosmos/auth/v1beta1/query.proto) and the
// node service's ConfigResponse (proto/cosmos/base/node/v1beta1/query.proto; celestia-app's
// app/test/std_sdk_test.go, commit 74614c2e4df0b409deb7e31320ce9ce3790efb78, expects
// minimum_gas_price "0.004000000000000000utia" from a node with its default).
const (
	nodeInfoMocha = `{"default_node_info":{"network":"mocha-4","version":"0.38.17"},"application_version":{"name":"celestia-app"}}`
	stakingParams = `{"params":{"unbonding_time":"1213200s","max_validators":100,"max_entries":7,"historical_entries":10000,"bond_denom":"utia","min_commission_rate":"0.050000000000000000"}}`
	bech32Answer  = `{"bech32_prefix":"celestia"}`
	nodeConfig    = `{"minimum_gas_price":"0.004000000000000000utia","pruning_keep_recent":"0","pruning_interval":"0","halt_height":"0"}`
)

// paramServer answers the routes in answers; a route mapped to "" is not served (501, the
// gateway's Unimplemented), one absent answers 404.
func paramServer(t *testing.T, answers map[string]string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.URL.Path]
		switch {
		case !ok:
			http.Error(w, `{"code":5,"message":"Not Found","details":[]}`, http.StatusNotFound)
		case body == "":
			http.Error(w, `{"code":12,"message":"unknown service cosmos.base.node.v1beta1.Service","details":[]}`, http.StatusNotImplemented)
		default:
			_, _ = w.Write([]byte(body))
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func celestiaAnswers() map[string]string {
	return map[string]string{
		"/cosmos/base/tendermint/v1beta1/node_info": nodeInfoMocha,
		routeStakingParams:                          stakingParams,
		routeBech32:                                 bech32Answer,
		routeNodeConfig:                             nodeConfig,
	}
}

// celestiaExpect is the catalogue's Celestia: utia, celestia, and a gas price in milli-utia.
func celestiaExpect(priceMilli int64) Expect {
	return Expect{BondDenom: "utia", AccountPrefix: "celestia", GasPrice: big.NewRat(priceMilli, 1000), DefaultMinGasPrice: big.NewRat(4, 1000)}
}

func TestReadParamsReadsTheChainsAnswers(t *testing.T) {
	ts := paramServer(t, celestiaAnswers())
	p, err := New(ts.URL, "mocha-4", nil).ReadParams(context.Background())
	require.NoError(t, err)
	assert.Equal(t, Params{BondDenom: "utia", UnbondingTime: 14*24*time.Hour + time.Hour, AccountPrefix: "celestia", MinGasPrices: "0.004000000000000000utia"}, p)
}

func TestVerifyProvesTheChainsParameters(t *testing.T) {
	ctx := context.Background()
	c := New(paramServer(t, celestiaAnswers()).URL, "mocha-4", nil).WithExpect(celestiaExpect(4))
	require.NoError(t, c.Verify(ctx))
	assert.True(t, c.Verified())
	assert.Equal(t, 337*time.Hour, c.Params().UnbondingTime)
	// A higher configured price than the node's minimum is fine.
	require.NoError(t, New(c.base, "mocha-4", nil).WithExpect(celestiaExpect(10)).Verify(ctx))
}

func TestVerifyRefusesAChainThatAnswersOtherParameters(t *testing.T) {
	for name, tc := range map[string]struct {
		route, answer string
		price         int64
		want          []string
	}{
		"bond denom": {routeStakingParams, `{"params":{"unbonding_time":"1814400s","bond_denom":"uatom"}}`, 4,
			[]string{"bond denom", `"uatom"`, `configured "utia"`}},
		"account prefix": {routeBech32, `{"bech32_prefix":"cosmos"}`, 4,
			[]string{"account prefix", `"cosmos"`, `configured "celestia"`}},
		"node minimum gas price above the configured one": {routeNodeConfig, nodeConfig, 2,
			[]string{"minimum gas price", "0.004000000000000000utia", "above the configured gas price 0.002utia"}},
		"no minimum set: the application's default applies": {routeNodeConfig, `{"minimum_gas_price":""}`, 2,
			[]string{"minimum gas price", "the application's default 0.004utia", "0.002utia"}},
		"a minimum among other denoms": {routeNodeConfig, `{"minimum_gas_price":"0.100000000000000000ibc/C4CFF46FD6DE35CA4CF4CE031E643C8FDC9BA4B99AE598E9B0ED98FE3A2319F9,0.010000000000000000utia"}`, 4,
			[]string{"0.010000000000000000utia"}},
	} {
		t.Run(name, func(t *testing.T) {
			answers := celestiaAnswers()
			answers[tc.route] = tc.answer
			c := New(paramServer(t, answers).URL, "mocha-4", nil).WithExpect(celestiaExpect(tc.price))
			err := c.Verify(context.Background())
			require.ErrorIs(t, err, ErrNetworkUnverified)
			var pm *ParamMismatch
			require.ErrorAs(t, err, &pm)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.False(t, c.Verified())
			_, err = c.Account(context.Background(), "celestia1known")
			require.ErrorIs(t, err, ErrNetworkUnverified, "nothing is read from an unproven chain")
		})
	}
}

func TestVerifyKeepsTheCataloguedValuesOfRoutesTheNodeDoesNotServe(t *testing.T) {
	answers := celestiaAnswers()
	answers[routeNodeConfig] = "" // 501
	delete(answers, routeBech32)  // 404
	c := New(paramServer(t, answers).URL, "mocha-4", nil).WithExpect(celestiaExpect(2))
	require.NoError(t, c.Verify(context.Background()))
	assert.Equal(t, []string{routeBech32, routeNodeConfig}, c.Params().Unanswered)

	// The staking params are not optional.
	delete(answers, routeStakingParams)
	c = New(paramServer(t, answers).URL, "mocha-4", nil).WithExpect(celestiaExpect(2))
	require.ErrorIs(t, c.Verify(context.Background()), ErrUnavailable)
	assert.False(t, c.Verified())
}

func TestNodeMinGasPrice(t *testing.T) {
	def := big.NewRat(4, 1000)
	for text, want := range map[string]string{
		"0.002000000000000000utia":          "1/500",
		"":                                  "1/250",
		"0.5uatom":                          "<nil>",
		"0.000001000000000000utia,0.1uatom": "1/1000000",
		"12utia":                            "12/1",
	} {
		got, _, err := nodeMinGasPrice(text, "utia", def)
		require.NoError(t, err, text)
		assert.Equal(t, want, fmt.Sprint(got), text)
	}
	for _, bad := range []string{"utia", "0.0.1utia", "-1utia"} {
		_, _, err := nodeMinGasPrice(bad, "utia", def)
		require.ErrorIs(t, err, ErrUnavailable, bad)
	}
}
