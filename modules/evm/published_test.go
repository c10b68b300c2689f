package evm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/harness/polygonmeta"
)

// TestPolygonDefaultsMatchSources holds PolygonDefaults to npm @maticnetwork/meta@2.4.59: each
// network's StakeManager and EventsHub are the package's StakeManagerProxy and EventsHubProxy of
// the Polygon network on that L1, whose Main.ChainId is the catalogue's. (The POL token is not in
// the package; its source is named beside PolygonDefaults.)
func TestPolygonDefaultsMatchSources(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m, err := polygonmeta.Install(ctx)
	require.NoError(t, err)
	for network, version := range map[string]string{"mainnet": polygonmeta.Mainnet, "sepolia": polygonmeta.Sepolia} {
		def, ok := PolygonDefaults[network]
		require.True(t, ok, network)
		main, err := m.Main(version)
		require.NoError(t, err)
		id, _ := networks.EVM.ID(network)
		assert.Equal(t, id, main.ChainID, "%s: the package's %s runs on chain %d", network, version, main.ChainID)
		for name, got := range map[string]string{"StakeManagerProxy": def.StakeManager, "EventsHubProxy": def.EventsHub} {
			want, err := m.Address(version, name)
			require.NoError(t, err)
			assert.True(t, strings.EqualFold(want, got), "%s %s: default %s, package %s", network, name, got, want)
		}
		for _, a := range []string{def.Token, def.StakeManager, def.EventsHub} {
			_, err := hexAddress(a)
			assert.NoError(t, err, "%s default %s", network, a)
		}
	}
	assert.Len(t, PolygonDefaults, 2, "every default network is checked here")
}
