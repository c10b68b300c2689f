package worker

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/cli"
)

func parseHyperliquid(t *testing.T, args ...string) (HyperliquidConfig, EVMConfig) {
	t.Helper()
	var h HyperliquidConfig
	var e EVMConfig
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	h.Register(fs)
	e.Register(fs)
	require.NoError(t, cli.Parse(fs, args, ""))
	return h, e
}

func TestHyperliquidConfig(t *testing.T) {
	h, e := parseHyperliquid(t)
	require.False(t, h.Enabled())
	require.NoError(t, h.Validate(e))

	keys := []string{"--evm-keys", "/keys", "--evm-passphrase-file", "/pass"}
	h, e = parseHyperliquid(t, append(keys, "--hyperliquid-api", "testnet=http://127.0.0.1:9000/hyperliquid/testnet")...)
	require.NoError(t, h.Validate(e), "the EVM keys without any EVM network")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no keys", []string{"--hyperliquid-api", "testnet=http://x:1"}, "--evm-keys and --evm-passphrase-file are required"},
		{"unknown network", append(keys, "--hyperliquid-api", "devnet=http://x:1"), `unknown network "devnet"`},
		{"not a url", append(keys, "--hyperliquid-api", "mainnet=api.hyperliquid"), `--hyperliquid-api mainnet: "api.hyperliquid" is not an http(s) URL`},
		{"chain id not hex", append(keys, "--hyperliquid-api", "mainnet=http://x:1", "--hyperliquid-signature-chain-ids", "421614"), `"421614" is not a 0x hex chain id`},
		{"chain ids without api", []string{"--hyperliquid-signature-chain-ids", "0x66eee"}, "--hyperliquid-api names no network"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, e := parseHyperliquid(t, tt.args...)
			require.ErrorContains(t, h.Validate(e), tt.want)
		})
	}
}

// TestConfigHyperliquidUsesEVMKeysWithoutEVMRPC: the whole configuration accepts EVM keys with
// --hyperliquid-api and no --evm-rpc.
func TestConfigHyperliquidUsesEVMKeysWithoutEVMRPC(t *testing.T) {
	c := Config{
		Temporal: cli.Temporal{Address: "127.0.0.1:7233", Namespace: "default"}, TaskQueue: "stakeflow",
		ServiceURL: "http://127.0.0.1:1", ServiceTokenFile: "/token", SolanaKeys: cli.StringList{"/k"},
		SolanaRPC: cli.StringMap{"testnet": "http://127.0.0.1:8899"}, Store: "sqlite:/tmp/x.db",
		EVM:         EVMConfig{Keys: "/keys", PassphraseFile: "/pass"},
		Hyperliquid: HyperliquidConfig{API: cli.StringMap{"mainnet": "https://api.example"}},
	}
	err := c.Validate()
	if err != nil {
		require.NotContains(t, err.Error(), "--evm-keys is set but --evm-rpc names no network")
		require.NotContains(t, err.Error(), "hyperliquid")
	}
}
