package celestia

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
