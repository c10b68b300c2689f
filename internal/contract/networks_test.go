package contract_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stakeflow/stakeflow/chain/networks"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/workflows"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

// networkRefused reports whether err refuses the input's network (other fields, left empty here,
// are refused with their own field name).
func networkRefused(err error) bool {
	var ie *workflows.InputError
	return errors.As(err, &ie) && ie.Field == "network"
}

// TestWorkflowsAcceptExactlyTheCatalogueNetworks: each workflow's input check accepts every
// network of its chain's catalogue and refuses names the catalogue lacks (another chain's
// network, the public clusters stakeflow does not operate).
func TestWorkflowsAcceptExactlyTheCatalogueNetworks(t *testing.T) {
	for _, tc := range []struct {
		chain    string
		names    []string
		outside  []string
		validate func(network string) error
	}{
		{"solana", networks.Solana.Names(), []string{"devnet", "mainnet", "localnet"},
			func(n string) error { return wfsolana.StakeInput{Network: n}.Validate() }},
		{"polygon", networks.EVM.Names(), []string{"goerli", "holesky", "mainnet-beta"},
			func(n string) error { return wfpolygon.DelegateInput{Network: n}.Validate() }},
		{"eigenlayer", networks.EVM.Names(), []string{"goerli", "holesky", "testnet"},
			func(n string) error { return wfeigenlayer.CheckpointInput{Network: n}.Validate() }},
		{"hyperliquid", networks.Hyperliquid.Names(), []string{"Mainnet", "sepolia", "mainnet-beta"},
			func(n string) error { return wfhyperliquid.WithdrawInput{Network: n}.Validate() }},
		{"ton", networks.TON.Names(), []string{"devnet", "sepolia", "mainnet-beta"},
			func(n string) error { return wfton.WatchInput{Network: n}.Validate() }},
	} {
		for _, n := range tc.names {
			assert.False(t, networkRefused(tc.validate(n)), "%s refuses its catalogue's network %q", tc.chain, n)
		}
		for _, n := range append(tc.outside, "") {
			assert.True(t, networkRefused(tc.validate(n)), "%s accepts %q, which its catalogue lacks", tc.chain, n)
		}
	}
}

// TestCelestiaSignerChainIDsAreTheCatalogues: the Celestia signer knows exactly the catalogue's
// networks, with the catalogue's chain ids.
func TestCelestiaSignerChainIDsAreTheCatalogues(t *testing.T) {
	for _, n := range networks.Celestia {
		id, err := signercosmos.ChainID(n.Name)
		assert.NoError(t, err, n.Name)
		assert.Equal(t, n.ID, id, n.Name)
	}
	for _, n := range []string{"mocha-4", "celestia", "mainnet", "testnet", ""} {
		_, err := signercosmos.ChainID(n)
		assert.ErrorIs(t, err, signercosmos.ErrIntent, n)
	}
}
