package celestia

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
	"github.com/stakeflow/stakeflow/internal/cli"
)

func TestConfigValidate(t *testing.T) {
	valid := func() Config {
		return Config{REST: cli.StringMap{"celestia-mocha-testnet": "http://127.0.0.1:1317"}, Keys: "k", PassphraseFile: "p",
			Validators: cli.StringList{"celestiavaloper1u3drplq4vr90nnwz0tvnrhetc82heq8halazeh"}, GasPriceMilli: 2}
	}
	c := valid()
	require.NoError(t, c.validate())
	require.NoError(t, (&Config{}).validate(), "off")
	for name, tc := range map[string]struct {
		mod  func(*Config)
		want string
	}{
		"unknown network": {func(c *Config) { c.REST = cli.StringMap{"celestia": "http://x"} }, `unknown Celestia network "celestia"`},
		"not a URL":       {func(c *Config) { c.REST["celestia-mocha-testnet"] = "127.0.0.1:1317" }, "not an http(s) URL"},
		"no keys":         {func(c *Config) { c.Keys = "" }, "--celestia-keys"},
		"account validator": {func(c *Config) {
			c.Validators = cli.StringList{"celestia1pkptre7fdkl6gfrzlesjjvhxhlc3r4gm2ukn2h"}
		}, "prefix"},
		"under minimum gas":  {func(c *Config) { c.GasPriceMilli = 1 }, "under the chain's minimum"},
		"keys without a RPC": {func(c *Config) { c.REST = nil }, "names no network"},
	} {
		t.Run(name, func(t *testing.T) {
			c := valid()
			tc.mod(&c)
			err := c.validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestNetworkStaysUnreadyOnAChainWithOtherParameters: a REST endpoint that serves the network's
// chain id but another bond denom, account prefix, or a node minimum gas price above the
// configured one keeps the network unproven, and the reason names the setting, the configured
// value and the chain's; a node that does not serve an optional route keeps the catalogued value.
func TestNetworkStaysUnreadyOnAChainWithOtherParameters(t *testing.T) {
	ledger := celestiachain.New(celestiachain.Options{ChainID: "mocha-4", UnbondingTime: 337 * time.Hour})
	for name, tc := range map[string]struct {
		priceMilli uint64
		override   map[string]string // route -> answer ("": 501, not served)
		want       []string          // in the reason; none: proven
	}{
		"the stand-in Celestia, default price": {priceMilli: DefaultGasPriceMilli},
		"bond denom": {DefaultGasPriceMilli, map[string]string{"/cosmos/staking/v1beta1/params": `{"params":{"unbonding_time":"1213200s","bond_denom":"uatom"}}`},
			[]string{`the bond denom is "uatom" on the chain (/cosmos/staking/v1beta1/params), "utia" in Celestia's catalogue`}},
		"account prefix": {DefaultGasPriceMilli, map[string]string{"/cosmos/auth/v1beta1/bech32": `{"bech32_prefix":"cosmos"}`},
			[]string{`the account prefix is "cosmos" on the chain (/cosmos/auth/v1beta1/bech32), "celestia" in Celestia's catalogue`}},
		"price under the app's default": {priceMilli: 2,
			want: []string{"--celestia-gas-price-milli 2 (0.002utia) is under the node's minimum gas price none set (the application's default 0.004utia)"}},
		"price under the node's setting": {DefaultGasPriceMilli, map[string]string{"/cosmos/base/node/v1beta1/config": `{"minimum_gas_price":"0.010000000000000000utia"}`},
			[]string{"--celestia-gas-price-milli 4 (0.004utia) is under the node's minimum gas price 0.010000000000000000utia (/cosmos/base/node/v1beta1/config)"}},
		"both":                       {2, map[string]string{"/cosmos/auth/v1beta1/bech32": `{"bech32_prefix":"osmo"}`}, []string{`"osmo"`, "--celestia-gas-price-milli 2"}},
		"optional routes not served": {2, map[string]string{"/cosmos/auth/v1beta1/bech32": "", "/cosmos/base/node/v1beta1/config": ""}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if body, ok := tc.override[r.URL.Path]; ok {
					if body == "" {
						http.Error(w, `{"code":12,"message":"Not Implemented"}`, http.StatusNotImplemented)
						return
					}
					_, _ = w.Write([]byte(body))
					return
				}
				ledger.Handler().ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			c := Config{REST: cli.StringMap{"celestia-mocha-testnet": ts.URL}, GasPriceMilli: tc.priceMilli}
			n := &network{rest: cosmoschain.New(ts.URL, "mocha-4", nil).WithExpect(c.expect()), name: "celestia-mocha-testnet", priceMilli: tc.priceMilli, logger: zap.NewNop()}
			n.check(context.Background())
			if tc.want == nil {
				require.NoError(t, n.Verified())
				return
			}
			err := n.Verified()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "celestia celestia-mocha-testnet: the REST endpoint is not proven to serve chain mocha-4")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
