package evmchain

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/polygonmeta"
)

func eventShape(e abi.Event) string {
	var in []string
	for _, a := range e.Inputs {
		s := a.Type.String() + " " + a.Name
		if a.Indexed {
			s += " indexed"
		}
		in = append(in, s)
	}
	return e.Name + "(" + strings.Join(in, ", ") + ")"
}

// TestStandInEventsAreMainnets: the stand-in StakingInfo's events are those of Polygon's
// StakingInfo in npm @maticnetwork/meta@2.4.59 (names, types, indexed-ness), and the stand-in
// EventsHub's those of contracts/staking/EventsHub.sol at 0xPolygon/pos-contracts@ff11f0e0
// (transcribed: the package has no EventsHub). The stand-in ValidatorShare declares no event but
// ERC-20 Transfer: it emits the others through them, as mainnet's does.
func TestStandInEventsAreMainnets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m, err := polygonmeta.Install(ctx)
	require.NoError(t, err)
	pub, err := m.ABI(polygonmeta.Mainnet, "StakingInfo")
	require.NoError(t, err)
	si, err := Artifact(ContractStakingInfo)
	require.NoError(t, err)
	require.NotEmpty(t, si.ABI.Events)
	for name, e := range si.ABI.Events {
		pe, ok := pub.Events[name]
		if assert.True(t, ok, "Polygon's StakingInfo has no %s", name) {
			assert.Equal(t, eventShape(pe), eventShape(e))
		}
	}
	for _, name := range []string{"ShareMinted", "StakeUpdate", "DelegatorClaimedRewards", "DelegatorRestaked"} {
		assert.Contains(t, si.ABI.Events, name, "the share emits %s through the StakingInfo", name)
	}
	hub, err := Artifact(ContractEventsHub)
	require.NoError(t, err)
	want := map[string]string{
		"ShareBurnedWithId":      "ShareBurnedWithId(uint256 validatorId indexed, address user indexed, uint256 amount indexed, uint256 tokens, uint256 nonce)",
		"DelegatorUnstakeWithId": "DelegatorUnstakeWithId(uint256 validatorId indexed, address user indexed, uint256 amount, uint256 nonce)",
		"SharesTransfer":         "SharesTransfer(uint256 validatorId indexed, address from indexed, address to indexed, uint256 value)",
	}
	require.Len(t, hub.ABI.Events, len(want))
	for name, shape := range want {
		assert.Equal(t, shape, eventShape(hub.ABI.Events[name]))
	}
	share, err := Artifact(ContractValidatorShare)
	require.NoError(t, err)
	assert.Equal(t, []string{"Transfer"}, keys(share.ABI.Events))
	pubShare, err := m.ABI(polygonmeta.Mainnet, "ValidatorShare")
	require.NoError(t, err)
	assert.Equal(t, eventShape(pubShare.Events["Transfer"]), eventShape(share.ABI.Events["Transfer"]), "ERC-20 Transfer")
}

func keys(m map[string]abi.Event) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
