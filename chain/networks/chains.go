package networks

// Solana lists the Solana clusters the staking service serves (endpoints 7 and 10 to 13) by their
// names there, with their genesis hashes (base58), which a Solana RPC must serve (getGenesisHash)
// before the worker trusts it. Source: the public clusters' RPCs (api.mainnet-beta.solana.com,
// api.testnet.solana.com) answering getGenesisHash; docs.solana.com/clusters names the clusters.
var Solana = Catalogue[string]{
	{Name: "mainnet-beta", ID: "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"},
	{Name: "testnet", ID: "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"},
}

// EVM lists the Ethereum networks Polygon staking and EigenLayer checkpoints run on, with their
// EIP-155 chain ids, which the JSON-RPC must serve (eth_chainId) and every signed transaction
// carries. Source: EIP-155 / chainlist.org (mainnet 1, Sepolia 11155111); dev is a local
// `geth --dev` node, whose chain id is 1337 (go-ethereum params.AllDevChainProtocolChanges).
var EVM = Catalogue[uint64]{
	{Name: "mainnet", ID: 1},
	{Name: "sepolia", ID: 11155111},
	{Name: "dev", ID: 1337},
}

// Celestia lists the Celestia networks of endpoint 3 by their names there, with their Cosmos chain
// ids, which the REST endpoint must serve (node_info's network) and every signed transaction
// carries. Source: the celestiaorg/networks repository (celestia/chain.json "celestia",
// mocha-4/chain.json "mocha-4") and the Celestia docs' network pages.
var Celestia = Catalogue[string]{
	{Name: "celestia-mainnet-beta", ID: "celestia"},
	{Name: "celestia-mocha-testnet", ID: "mocha-4"},
}

// The Celestia networks' names, for code and tests that name one.
const (
	CelestiaMainnet = "celestia-mainnet-beta"
	CelestiaMocha   = "celestia-mocha-testnet"
)

// Hyperliquid lists the Hyperliquid networks of endpoint 6, with the hyperliquidChain value a
// user-signed action carries on each. Source: the Hyperliquid docs (API > Exchange endpoint,
// "hyperliquidChain": "Mainnet" on mainnet, "Testnet" on testnet) and the official Python SDK.
// The signatureChainId an action is signed under is a signer policy, not a network identity
// (signer/hyperliquid DefaultSignatureChainID).
var Hyperliquid = Catalogue[string]{
	{Name: "mainnet", ID: "Mainnet"},
	{Name: "testnet", ID: "Testnet"},
}

// TON lists the TON networks endpoint 9 serves. Names only: stakeflow signs nothing on TON and
// proves no RPC, so no identity is needed. Source: the staking service's contract (endpoint 9).
var TON = Catalogue[struct{}]{
	{Name: "mainnet"},
	{Name: "testnet"},
}
