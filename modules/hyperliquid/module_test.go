package hyperliquid

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/cli"
)

func parseHyperliquid(t *testing.T, args ...string) *Module {
	t.Helper()
	m := New()
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	m.Flags(fs)
	require.NoError(t, cli.Parse(fs, args, ""))
	return m
}

func TestHyperliquidConfig(t *testing.T) {
	m := parseHyperliquid(t)
	require.False(t, m.Enabled())
	require.NoError(t, m.Validate())

	keys := []string{"--hyperliquid-keys", "/keys", "--hyperliquid-passphrase-file", "/pass"}
	m = parseHyperliquid(t, append(keys, "--hyperliquid-api", "testnet=http://127.0.0.1:9000/hyperliquid/testnet")...)
	require.True(t, m.Enabled())
	require.NoError(t, m.Validate(), "its own keys, no EVM setting")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no keys", []string{"--hyperliquid-api", "testnet=http://x:1"}, "--hyperliquid-keys and --hyperliquid-passphrase-file are required"},
		{"unknown network", append(keys, "--hyperliquid-api", "devnet=http://x:1"), `unknown network "devnet"`},
		{"not a url", append(keys, "--hyperliquid-api", "mainnet=api.hyperliquid"), `--hyperliquid-api mainnet: "api.hyperliquid" is not an http(s) URL`},
		{"chain id not hex", append(keys, "--hyperliquid-api", "mainnet=http://x:1", "--hyperliquid-signature-chain-ids", "421614"), `"421614" is not a 0x hex chain id`},
		{"chain ids without api", []string{"--hyperliquid-signature-chain-ids", "0x66eee"}, "--hyperliquid-api names no network"},
		{"keys without api", keys, "--hyperliquid-api names no network"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorContains(t, parseHyperliquid(t, tt.args...).Validate(), tt.want)
		})
	}
}
