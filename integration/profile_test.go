//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/module"
	celestiamod "github.com/stakeflow/stakeflow/modules/celestia"
	evmmod "github.com/stakeflow/stakeflow/modules/evm"
	hyperliquidmod "github.com/stakeflow/stakeflow/modules/hyperliquid"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
)

// networkIdentity is what a real network answers when asked who it is, written here from the
// networks' own publications (not from the product's catalogue):
//   - Solana genesis hashes: `solana genesis-hash` of each cluster, as Solana's documentation
//     lists them (docs.solana.com, "Clusters");
//   - EVM chain ids: EIP-155 (chainid.network, ethereum-lists/chains _data/chains/eip155-<id>.json);
//   - Celestia chain ids: celestiaorg/networks (celestia/chain-id.txt, mocha-4/chain-id.txt) and
//     cosmos/chain-registry celestia/chain.json, testnets/celestiatestnet3/chain.json.
type networkIdentity struct {
	profile                 string
	solanaNet, solanaHash   string
	evmNet                  string
	evmChainID              uint64
	celestiaNet, celestiaID string
	hyperliquidNet          string
}

var shippedProfiles = []networkIdentity{
	{profile: "worker.mainnet.json",
		solanaNet: "mainnet-beta", solanaHash: "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
		evmNet: "mainnet", evmChainID: 1,
		celestiaNet: "celestia-mainnet-beta", celestiaID: "celestia",
		hyperliquidNet: "mainnet"},
	{profile: "worker.testnet.json",
		solanaNet: "testnet", solanaHash: "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY",
		evmNet: "sepolia", evmChainID: 11155111,
		celestiaNet: "celestia-mocha-testnet", celestiaID: "mocha-4",
		hyperliquidNet: "testnet"},
}

// TestShippedProfilesBecomeReady: a worker started from deploy/config/worker.mainnet.json (and
// worker.testnet.json), given only what a deployment adds (Temporal, the staking service and its
// token, key files) and each chain endpoint pointed at a local stand-in that answers as the real
// network does (its genesis hash, chain id, node info), proves every network and becomes ready
// with every chain's module. The profile itself names each network's contracts; the stand-ins
// serve none of them, so nothing here can have been shaped by the local stack.
func TestShippedProfilesBecomeReady(t *testing.T) {
	base := st.WorkerConfig()
	sol, ok := module.Find[*solanamod.Module](base.Modules)
	require.True(t, ok)
	evm, ok := module.Find[*evmmod.Module](base.Modules)
	require.True(t, ok)
	cel, ok := module.Find[*celestiamod.Module](base.Modules)
	require.True(t, ok)
	hl, ok := module.Find[*hyperliquidmod.Module](base.Modules)
	require.True(t, ok)

	for _, p := range shippedProfiles {
		t.Run(p.profile, func(t *testing.T) {
			rpc := newNetworkStandIn(t, p)
			prefix := "stakeflow-profile-" + strings.TrimSuffix(strings.TrimPrefix(p.profile, "worker."), ".json")
			url := splitWorker(t, prefix,
				"--config", filepath.Join("..", "deploy", "config", p.profile),
				"--task-queue-prefix", prefix,
				// What a deployment adds: its key files and payload keyset (the stack's), and its
				// endpoints (here the stand-ins of the networks the profile names).
				"--payload-keyset", payloadKeyset,
				"--solana-keys", sol.Keys.String(),
				"--evm-keys", evm.Keys, "--evm-passphrase-file", evm.PassphraseFile,
				"--celestia-keys", cel.Keys, "--celestia-passphrase-file", cel.PassphraseFile,
				"--hyperliquid-keys", hl.Keys, "--hyperliquid-passphrase-file", hl.PassphraseFile,
				"--solana-rpc", p.solanaNet+"="+rpc.URL,
				"--evm-rpc", p.evmNet+"="+rpc.URL,
				"--celestia-rest", p.celestiaNet+"="+rpc.URL,
				"--hyperliquid-api", p.hyperliquidNet+"="+rpc.URL,
			)
			body := readyBody(t, url)
			for _, m := range []string{"solana", "evm", "celestia", "hyperliquid", "ton", "jobs"} {
				assert.Contains(t, body, fmt.Sprintf("module %s (task queue %s-%s): ready", m, prefix, m))
			}
			t.Logf("asked of the network stand-in: %s", rpc.asked())
		})
	}
}

// networkStandIn answers, on one HTTP server, the identity questions a worker asks each chain's
// endpoint before it trusts it: Solana's getGenesisHash and EVM's eth_chainId (JSON-RPC on /),
// and Cosmos REST routes (GET), with the real network's answers in the real shapes.
type networkStandIn struct {
	*httptest.Server
	mu  sync.Mutex
	log map[string]int
}

func newNetworkStandIn(t *testing.T, id networkIdentity) *networkStandIn {
	s := &networkStandIn{log: map[string]int{}}
	rest := cosmosIdentity(id.celestiaID)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			s.note("GET " + r.URL.Path)
			body, ok := rest[r.URL.Path]
			if !ok {
				http.Error(w, `{"code":12,"message":"Not Implemented","details":[]}`, http.StatusNotImplemented)
				return
			}
			_, _ = io.WriteString(w, body)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &req); err != nil {
			http.Error(w, "not a JSON-RPC request", http.StatusBadRequest)
			return
		}
		s.note(req.Method)
		var result any
		switch req.Method {
		case "getGenesisHash":
			result = id.solanaHash
		case "eth_chainId":
			result = fmt.Sprintf("0x%x", id.evmChainID)
		case "net_version":
			result = fmt.Sprint(id.evmChainID)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32601, "message": "Method not found"}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *networkStandIn) note(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log[what]++
}

// asked lists what the stand-in was asked, sorted.
func (s *networkStandIn) asked() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.log))
	for k, n := range s.log {
		out = append(out, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// cosmosIdentity is what a Celestia REST endpoint of chain chainID answers about itself, in the
// shapes of cosmos-sdk's gRPC gateway (v0.50: cosmos/base/tendermint/v1beta1 GetNodeInfo,
// cosmos/staking/v1beta1 Params, cosmos/auth/v1beta1 Bech32Prefix, cosmos/base/node/v1beta1 Config)
// and with Celestia's values: bond denom utia and prefix celestia (cosmos/chain-registry
// celestia/chain.json), unbonding 337h (CIP-037; celestia-app pkg/appconsts UnbondingTime), and a
// node minimum gas price of 0.004 utia (celestia-app pkg/appconsts DefaultMinGasPrice).
func cosmosIdentity(chainID string) map[string]string {
	return map[string]string{
		"/cosmos/staking/v1beta1/params": `{"params":{"unbonding_time":"1213200s","max_validators":100,"max_entries":7,` +
			`"historical_entries":10000,"bond_denom":"utia","min_commission_rate":"0.050000000000000000"}}`,
		"/cosmos/auth/v1beta1/bech32":      `{"bech32_prefix":"celestia"}`,
		"/cosmos/base/node/v1beta1/config": `{"minimum_gas_price":"0.004000000000000000utia","pruning_keep_recent":"0","pruning_interval":"0","halt_height":"0"}`,
		"/cosmos/base/tendermint/v1beta1/node_info": `{"default_node_info":{"protocol_version":{"p2p":"8","block":"11","app":"0"},` +
			`"default_node_id":"0000000000000000000000000000000000000000","listen_addr":"tcp://0.0.0.0:26656","network":"` + chainID + `",` +
			`"version":"","channels":"","moniker":"stand-in","other":{"tx_index":"on","rpc_address":"tcp://0.0.0.0:26657"}},` +
			`"application_version":{"name":"celestia-app","app_name":"celestia-appd","version":"","git_commit":"","build_tags":"","go_version":"","build_deps":[],"cosmos_sdk_version":""}}`,
	}
}
