package evm

import (
	"flag"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/cli"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

const (
	token   = "0x00000000000000000000000000000000000000a1"
	manager = "0x00000000000000000000000000000000000000b2"
	share7  = "0x00000000000000000000000000000000000000c3"
	hub     = "0x00000000000000000000000000000000000000e4"
)

func evmArgs(extra ...string) []string {
	return append([]string{"--evm-rpc", "dev=http://127.0.0.1:8545", "--evm-keys", "/keys", "--evm-passphrase-file", "/pass",
		"--polygon-token", "dev=" + token, "--polygon-stake-manager", "dev=" + manager,
		"--polygon-events-hub", "dev=" + hub,
		"--polygon-validator-shares", share7 + "=7"}, extra...)
}

func parseEVM(t *testing.T, args ...string) Config {
	t.Helper()
	m := New()
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	m.Flags(fs)
	require.NoError(t, cli.Parse(fs, args, ""))
	return m.Config
}

func TestConfigOffByDefault(t *testing.T) {
	c := parseEVM(t)
	require.False(t, c.enabled())
	require.NoError(t, c.validate())
	require.Equal(t, uint(50), c.SlippageBps, "the documented default slippage")
}

func TestConfigRefusesWhatIsWrongNamingIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"keys without an rpc", []string{"--evm-keys", "/keys"}, "--evm-keys is set but --evm-rpc names no network"},
		{"unknown network", evmArgs("--evm-rpc", "polygon=http://x:1"), `--evm-rpc: unknown network "polygon"`},
		{"not a url", evmArgs("--evm-rpc", "dev=localhost"), `--evm-rpc dev: "localhost" is not an http(s) URL`},
		{"no keys", []string{"--evm-rpc", "dev=http://127.0.0.1:8545"}, "--evm-keys is required"},
		{"token missing", evmArgs("--polygon-token", "sepolia="+token), "--polygon-token dev: is required"},
		{"token for a network without rpc", evmArgs("--polygon-token", "dev="+token+",sepolia="+token), `--polygon-token names network "sepolia", which has no --evm-rpc`},
		{"stake manager not hex", evmArgs("--polygon-stake-manager", "dev=0xZZ"), `--polygon-stake-manager dev: "0xZZ" is not a 0x-prefixed 20-byte hex address`},
		{"events hub missing", evmArgs("--polygon-events-hub", "sepolia="+hub), "--polygon-events-hub dev: is required"},
		{"events hub for a network without rpc", evmArgs("--polygon-events-hub", "dev="+hub+",mainnet="+hub), `--polygon-events-hub names network "mainnet", which has no --evm-rpc`},
		{"events hub without an rpc", []string{"--polygon-events-hub", "dev=" + hub}, "--polygon-events-hub is set but --evm-rpc names no network"},
		{"zero token", evmArgs("--polygon-token", "dev=0x0000000000000000000000000000000000000000"), "is the zero address"},
		{"share without id", evmArgs("--polygon-validator-shares", share7+"=x"), `validator id "x" is not a positive whole number`},
		{"slippage above 100%", evmArgs("--polygon-slippage-bps", "10001"), "--polygon-slippage-bps 10001: want at most 10000"},
		{"fee cap not wei", evmArgs("--evm-max-fee-wei", "0.5"), `--evm-max-fee-wei: "0.5" is not a positive whole number of wei`},
		{"negative replace-after", evmArgs("--evm-replace-after", "-1s"), "--evm-replace-after -1s: want a positive duration"},
		{"negative resend-every", evmArgs("--evm-resend-every", "-2s"), "--evm-resend-every -2s: want a positive duration"},
		{"dual below single", evmArgs("--polygon-approval-threshold-wei", "100", "--polygon-dual-approval-threshold-wei", "99"), "is below --polygon-approval-threshold-wei 100"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := parseEVM(t, tt.args...)
			require.ErrorContains(t, c.validate(), tt.want)
		})
	}
}

func TestConfigSignerPolicyIsAcceptedBySigner(t *testing.T) {
	c := parseEVM(t, evmArgs("--evm-max-fee-per-gas-gwei", "30", "--evm-max-fee-wei", "1000000000000000")...)
	require.NoError(t, c.validate())
	p, err := c.SignerPolicy("dev")
	require.NoError(t, err)
	require.Equal(t, uint64(1337), p.ChainID)
	require.Equal(t, common.HexToAddress(token), p.POLToken)
	require.Equal(t, common.HexToAddress(manager), p.StakeManager)
	require.Equal(t, []signerevm.ValidatorShare{{ValidatorID: 7, Address: common.HexToAddress(share7)}}, p.ValidatorShares)
	require.Equal(t, big.NewInt(30_000_000_000), p.MaxFeePerGas, "30 gwei in wei")
	require.Equal(t, big.NewInt(1_000_000_000_000_000), p.MaxTotalFee)
	require.Equal(t, uint32(50), p.SlippageBps)
	_, err = signerevm.New(nil, p)
	require.NoError(t, err, "the signer takes the policy as the flags make it")
}

// TestMainnetNeedsNoAddress: on mainnet and Sepolia the POL token, StakeManager and EventsHub
// default to Polygon's (values typed here from npm @maticnetwork/meta@2.4.59 and
// 0xPolygon/pos-contracts script/validatorShare-upgrade/input.json); a value given wins.
func TestMainnetNeedsNoAddress(t *testing.T) {
	c := parseEVM(t, "--evm-rpc", "mainnet=https://eth.example,sepolia=https://sepolia.example", "--evm-keys", "/keys", "--evm-passphrase-file", "/pass",
		"--polygon-token", "sepolia="+token)
	require.NoError(t, c.validate())
	p, err := c.SignerPolicy("mainnet")
	require.NoError(t, err)
	require.Equal(t, uint64(1), p.ChainID)
	require.Equal(t, common.HexToAddress("0x455e53CBB86018Ac2B8092FdCd39d8444aFFC3F6"), p.POLToken)
	require.Equal(t, common.HexToAddress("0x5e3Ef299fDDf15eAa0432E6e66473ace8c13D908"), p.StakeManager)
	h, err := c.contract("--polygon-events-hub", "mainnet")
	require.NoError(t, err)
	require.Equal(t, common.HexToAddress("0x6dF5CB08d3f0193C768C8A01f42ac4424DC5086b"), h)
	p, err = c.SignerPolicy("sepolia")
	require.NoError(t, err)
	require.Equal(t, common.HexToAddress(token), p.POLToken, "the value given wins over the default")
	require.Equal(t, common.HexToAddress("0x4AE8f648B1Ec892B6cc68C89cc088583964d08bE"), p.StakeManager)
	h, err = c.contract("--polygon-events-hub", "sepolia")
	require.NoError(t, err)
	require.Equal(t, common.HexToAddress("0x700e0f2AfBd92e2b3fF91CAD8C62A564690ddf39"), h)
}
