package networks

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The expected values are the outside facts, copied from their sources (not from the catalogue):
// the public Solana RPCs' getGenesisHash, EIP-155 chain ids, celestiaorg/networks chain ids, the
// Hyperliquid docs' hyperliquidChain values and the staking service contract's TON networks.

func TestSolanaCatalogueIsThePublicClustersGenesisHashes(t *testing.T) {
	assert.Equal(t, Catalogue[string]{
		{"mainnet-beta", "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"},
		{"testnet", "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"},
	}, Solana)
}

func TestEVMCatalogueIsTheEIP155ChainIDs(t *testing.T) {
	assert.Equal(t, Catalogue[uint64]{{"mainnet", 1}, {"sepolia", 11155111}, {"dev", 1337}}, EVM)
}

func TestCelestiaCatalogueIsTheCelestiaChainIDs(t *testing.T) {
	assert.Equal(t, Catalogue[string]{{"celestia-mainnet-beta", "celestia"}, {"celestia-mocha-testnet", "mocha-4"}}, Celestia)
	assert.True(t, Celestia.Has(CelestiaMainnet))
	assert.True(t, Celestia.Has(CelestiaMocha))
}

func TestHyperliquidCatalogueIsTheDocumentedHyperliquidChain(t *testing.T) {
	assert.Equal(t, Catalogue[string]{{"mainnet", "Mainnet"}, {"testnet", "Testnet"}}, Hyperliquid)
}

func TestTONCatalogueIsEndpoint9sNetworks(t *testing.T) {
	assert.Equal(t, []string{"mainnet", "testnet"}, TON.Names())
}

func TestCatalogueLookups(t *testing.T) {
	id, ok := EVM.ID("sepolia")
	assert.True(t, ok)
	assert.Equal(t, uint64(11155111), id)
	_, ok = EVM.ID("goerli")
	assert.False(t, ok)
	assert.False(t, Solana.Has("devnet"))
	assert.False(t, Solana.Has(""))
	names := Solana.Names()
	names[0] = "changed"
	assert.Equal(t, "mainnet-beta", Solana[0].Name, "Names returns a copy")
}
