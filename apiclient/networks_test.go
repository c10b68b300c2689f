package apiclient

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stakeflow/stakeflow/chain/networks"
)

// TestChainEndpointsAcceptExactlyTheCatalogueNetworks: the client's checks of the chains'
// endpoints (3 Celestia, 6 Hyperliquid, 7 and 10 to 13 Solana, 9 TON) accept every network of the
// chain's catalogue and refuse, before any request, names the catalogue lacks.
func TestChainEndpointsAcceptExactlyTheCatalogueNetworks(t *testing.T) {
	for _, tc := range []struct {
		chain   string
		names   []string
		allowed []string
		outside []string
	}{
		{"celestia", networks.Celestia.Names(), celestiaNetworks, []string{"mocha-4", "celestia", "mainnet"}},
		{"hyperliquid", networks.Hyperliquid.Names(), hyperliquidNetworks, []string{"Mainnet", "mainnet-beta"}},
		{"solana", networks.Solana.Names(), solanaNetworks, []string{"devnet", "mainnet"}},
		{"solana unified", networks.Solana.Names(), unifiedNetworks[ChainSolana], []string{"devnet", "mainnet"}},
		{"ton", networks.TON.Names(), tonNetworks, []string{"devnet", "mainnet-beta"}},
	} {
		for _, n := range tc.names {
			assert.NoError(t, checkNetwork(n, tc.allowed), "%s: %q", tc.chain, n)
		}
		for _, n := range append(tc.outside, "") {
			assert.Error(t, checkNetwork(n, tc.allowed), "%s: %q", tc.chain, n)
		}
	}
}
