// Package polygonmeta installs, for tests, Polygon's published staking addresses and ABIs: the npm
// package @maticnetwork/meta at exactly 2.4.59 (package.json and package-lock.json here, installed
// with `npm ci` through harness/sandbox/npmcache into the user cache, once), and reads them.
//
// The package holds network/<net>/<version>/index.json (Main.ChainId, Main.Contracts:
// StakeManagerProxy, EventsHubProxy, StakingInfo, ValidatorShare, ...) and ABIs without bytecode
// in network/<net>/<version>/artifacts/plasma/<Contract>.json. Its ABIs predate the POL migration
// and lack the EventsHub: those facts come from the published contract source (see docs/polygon.md).
package polygonmeta

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/accounts/abi"

	"github.com/stakeflow/stakeflow/harness/sandbox/npmcache"
)

//go:embed package.json package-lock.json
var project embed.FS

// Version is the pinned version of @maticnetwork/meta.
const Version = "2.4.59"

// Mainnet and Sepolia are the package's versions of Polygon PoS whose L1 is Ethereum mainnet and
// Sepolia (Amoy's index.json names Main.ChainId 11155111).
const (
	Mainnet = "mainnet/v1"
	Sepolia = "testnet/amoy"
)

// Meta is an installed copy of the package.
type Meta struct{ dir string }

// Install installs the package (once per user cache) and returns it.
func Install(ctx context.Context) (*Meta, error) {
	files, err := npmcache.FilesFromFS(project, ".")
	if err != nil {
		return nil, err
	}
	cache, err := npmcache.DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	const pkg = "node_modules/@maticnetwork/meta/package.json"
	dir, err := npmcache.Install(ctx, cache, npmcache.Project{Name: "maticnetwork-meta", Files: files, Require: []string{pkg}})
	if err != nil {
		return nil, fmt.Errorf("polygonmeta: install @maticnetwork/meta@%s: %w", Version, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, pkg))
	if err != nil {
		return nil, err
	}
	var v struct{ Version string }
	if err := json.Unmarshal(b, &v); err != nil || v.Version != Version {
		return nil, fmt.Errorf("polygonmeta: installed @maticnetwork/meta is %q, want %s (%v)", v.Version, Version, err)
	}
	return &Meta{dir: filepath.Join(dir, "node_modules/@maticnetwork/meta/network")}, nil
}

// Main is the Main section of a network's index.json (the L1 side).
type Main struct {
	ChainID   uint64         `json:"ChainId"`
	Contracts map[string]any `json:"Contracts"`
}

// Main reads network's Main section (network is Mainnet or Sepolia).
func (m *Meta) Main(network string) (Main, error) {
	b, err := os.ReadFile(filepath.Join(m.dir, network, "index.json"))
	if err != nil {
		return Main{}, err
	}
	var idx struct{ Main Main }
	if err := json.Unmarshal(b, &idx); err != nil {
		return Main{}, fmt.Errorf("polygonmeta: %s/index.json: %w", network, err)
	}
	return idx.Main, nil
}

// Address is Main.Contracts[name] of network, as written there.
func (m *Meta) Address(network, name string) (string, error) {
	main, err := m.Main(network)
	if err != nil {
		return "", err
	}
	a, ok := main.Contracts[name].(string)
	if !ok {
		return "", fmt.Errorf("polygonmeta: %s has no Main.Contracts.%s", network, name)
	}
	return a, nil
}

// ABI reads artifacts/plasma/<contract>.json of network.
func (m *Meta) ABI(network, contract string) (abi.ABI, error) {
	b, err := os.ReadFile(filepath.Join(m.dir, network, "artifacts", "plasma", contract+".json"))
	if err != nil {
		return abi.ABI{}, err
	}
	var art struct{ ABI json.RawMessage }
	if err := json.Unmarshal(b, &art); err != nil {
		return abi.ABI{}, fmt.Errorf("polygonmeta: %s %s: %w", network, contract, err)
	}
	return abi.JSON(bytes.NewReader(art.ABI))
}
