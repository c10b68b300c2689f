package all_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/modules/all"
	evmmod "github.com/stakeflow/stakeflow/modules/evm"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
)

// eigenPodManagers are EigenLayer's EigenPodManager proxies as EigenLayer publishes them
// (Layr-Labs/eigenlayer-contracts README.md, "Current Deployment Contracts", commit
// 029b0c83ab9dea009878786daa33ea4b200b7ad1). Sepolia's pods are paused there ("all EigenPod
// functionality is PAUSED"), so no profile names one for Sepolia.
var eigenPodManagers = map[string]string{"mainnet": "0x91E677b07F7AF907ec9a428aafA9fc14a0d3A338"}

// standInDeployer is geth --dev's development account, which deploys every stand-in contract of
// the local stack (harness/gethdev): an address it created is a stand-in's.
var standInDeployer = common.HexToAddress("0x71562b71999873DB5b286dF957af199Ec94617F7")

// loadProfile parses a shipped profile the way cmd/worker does, with only what a deployment adds
// (the service and its token), and returns the configuration and the profile's raw settings.
func loadProfile(t *testing.T, name string) (worker.Config, map[string]any) {
	t.Helper()
	path := filepath.Join("..", "..", "deploy", "config", name)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var settings map[string]any
	require.NoError(t, json.Unmarshal(raw, &settings))
	cfg := worker.Config{Modules: all.Modules()}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	cfg.Register(fs)
	require.NoError(t, cli.Parse(fs, []string{"--config", path,
		"--service-url", "https://staking.example.com", "--service-token-file", "/run/token"}, "config"))
	require.NoError(t, cfg.Validate(), "%s with a service URL and token file is a valid configuration", name)
	return cfg, settings
}

// TestShippedProfilesNameOnlyPublishedContracts: deploy/config/worker.mainnet.json and
// worker.testnet.json configure every chain module on public networks of the catalogue, with no
// stand-in override (no --solana-genesis: the catalogue's hash is proven), and every contract
// address they name is the published one for its network: Polygon's from the pinned
// @maticnetwork/meta package and Polygon's source (evm.PolygonDefaults, which
// TestPolygonDefaultsMatchSources holds to them), EigenLayer's from its deployment list. None is
// zero, and none is an address the stand-ins' deployer created.
func TestShippedProfilesNameOnlyPublishedContracts(t *testing.T) {
	hexAddr := regexp.MustCompile(`0x[0-9a-fA-F]{40}`)
	standIns := map[common.Address]bool{standInDeployer: true}
	for n := uint64(0); n < 1000; n++ {
		standIns[crypto.CreateAddress(standInDeployer, n)] = true
	}
	for name, want := range map[string]struct{ solana, evm, celestia, hyperliquid string }{
		"worker.mainnet.json": {"mainnet-beta", "mainnet", networks.CelestiaMainnet, "mainnet"},
		"worker.testnet.json": {"testnet", "sepolia", networks.CelestiaMocha, "testnet"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, settings := loadProfile(t, name)
			for _, m := range cfg.Modules {
				assert.True(t, m.Enabled(), "module %s is configured", m.Name())
			}
			sol, ok := module.Find[*solanamod.Module](cfg.Modules)
			require.True(t, ok)
			assert.Equal(t, []string{want.solana}, cli.SortedKeys(sol.RPC))
			assert.Empty(t, sol.Genesis, "no genesis override: the RPC must serve the network's own")

			evm, ok := module.Find[*evmmod.Module](cfg.Modules)
			require.True(t, ok)
			assert.Equal(t, []string{want.evm}, cli.SortedKeys(evm.RPC))
			published := evmmod.PolygonDefaults[want.evm]
			for flagName, got := range map[string]cli.StringMap{
				"polygon-token": evm.PolygonToken, "polygon-stake-manager": evm.PolygonStakeManager, "polygon-events-hub": evm.PolygonEventsHub,
			} {
				wantAddr := map[string]string{"polygon-token": published.Token, "polygon-stake-manager": published.StakeManager,
					"polygon-events-hub": published.EventsHub}[flagName]
				require.NotEmpty(t, wantAddr, "%s has a published %s", want.evm, flagName)
				assert.Equal(t, map[string]string{want.evm: wantAddr}, map[string]string(got), "--%s", flagName)
			}
			if pm, ok := eigenPodManagers[want.evm]; ok {
				assert.Equal(t, map[string]string{want.evm: pm}, map[string]string(evm.EigenPodManager))
			} else {
				assert.Empty(t, evm.EigenPodManager, "EigenLayer publishes no working pod manager on %s", want.evm)
			}

			// Every address the file holds: not zero, not a stand-in's.
			text, err := json.Marshal(settings)
			require.NoError(t, err)
			addrs := hexAddr.FindAllString(string(text), -1)
			require.NotEmpty(t, addrs)
			for _, a := range addrs {
				addr := common.HexToAddress(a)
				assert.NotEqual(t, common.Address{}, addr, "a zero address in %s", name)
				assert.False(t, standIns[addr], "%s in %s is an address of the local stack's stand-ins", a, name)
				assert.Equal(t, addr.Hex(), a, "%s is written with its EIP-55 checksum", a)
			}

			// Endpoints are https URLs of the named networks, never the local stack's.
			for _, k := range []string{"solana-rpc", "evm-rpc", "celestia-rest", "hyperliquid-api"} {
				v, _ := settings[k].(string)
				require.NotEmpty(t, v, k)
				assert.Regexp(t, `^[a-z0-9-]+=https://[^/]+`, v, k)
				assert.NotContains(t, v, "127.0.0.1", k)
				assert.NotContains(t, v, "localhost", k)
			}
			assert.True(t, strings.HasPrefix(settings["celestia-rest"].(string), want.celestia+"="))
			assert.True(t, strings.HasPrefix(settings["hyperliquid-api"].(string), want.hyperliquid+"="))
		})
	}
}
