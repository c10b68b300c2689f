package evm

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/polygonmeta"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// polSource is where the facts the pinned package lacks come from: the POL functions and the
// EventsHub's events, transcribed from the published contract source.
const polSource = "0xPolygon/pos-contracts@ff11f0e08a43a207a3e7bcb7430771ba95d292ec"

// methodShape is a method's canonical signature and its output types; eventShape an event's
// name and inputs with their indexed flags.
func methodShape(m abi.Method) string {
	var outs []string
	for _, o := range m.Outputs {
		outs = append(outs, o.Type.String())
	}
	return m.Sig + " returns (" + strings.Join(outs, ",") + ")"
}

func eventShape(e abi.Event) string {
	var in []string
	for _, a := range e.Inputs {
		s := a.Type.String()
		if a.Indexed {
			s += " indexed"
		}
		in = append(in, s)
	}
	return e.Name + "(" + strings.Join(in, ",") + ")"
}

func installMeta(t *testing.T) *polygonmeta.Meta {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a cold npm ci included
	defer cancel()
	m, err := polygonmeta.Install(ctx)
	require.NoError(t, err)
	return m
}

// TestReadsMatchPublishedABIs holds every function the activities read and every event they
// parse to Polygon's published definitions: the ABIs of npm @maticnetwork/meta@2.4.59 (mainnet
// and Sepolia's) for the functions, and, for ShareBurnedWithId (the package has no EventsHub),
// contracts/staking/EventsHub.sol at polSource. A drift of name, argument or return types, or
// indexed-ness fails it.
func TestReadsMatchPublishedABIs(t *testing.T) {
	m := installMeta(t)
	// The contract of the package that defines each read (balanceOf is read from the POL token
	// and from a ValidatorShare, whose shares are an ERC-20).
	from := map[string][]string{
		"balanceOf": {"ERC20", "ValidatorShare"}, "allowance": {"ERC20"},
		"exchangeRate": {"ValidatorShare"}, "withdrawExchangeRate": {"ValidatorShare"}, "getLiquidRewards": {"ValidatorShare"},
		"unbondNonces": {"ValidatorShare"}, "unbonds_new": {"ValidatorShare"}, "validatorId": {"ValidatorShare"},
		"epoch": {"StakeManager"}, "withdrawalDelay": {"StakeManager"},
	}
	require.Len(t, readsABI.Methods, len(from), "every read has its source listed here")
	for _, network := range []string{polygonmeta.Mainnet, polygonmeta.Sepolia} {
		for name, m0 := range readsABI.Methods {
			contracts, ok := from[name]
			if !assert.True(t, ok, "read %s has no source", name) {
				continue
			}
			for _, c := range contracts {
				pub, err := m.ABI(network, c)
				require.NoError(t, err)
				pm, ok := pub.Methods[name]
				if assert.True(t, ok, "%s %s has no %s", network, c, name) {
					assert.Equal(t, methodShape(pm), methodShape(m0), "%s %s.%s", network, c, name)
				}
			}
		}
	}
	// unbonds_new's outputs are read by position: (shares, withdrawEpoch).
	pub, err := m.ABI(polygonmeta.Mainnet, "ValidatorShare")
	require.NoError(t, err)
	assert.Equal(t, []string{"shares", "withdrawEpoch"}, []string{pub.Methods["unbonds_new"].Outputs[0].Name, pub.Methods["unbonds_new"].Outputs[1].Name})
	// The ValidatorShare routes ShareBurnedWithId through its EventsHub: the package's share has
	// the eventsHub getter and no such event of its own.
	assert.Contains(t, pub.Methods, "eventsHub")
	assert.NotContains(t, pub.Events, "ShareBurnedWithId")

	// EventsHub.sol at polSource: event ShareBurnedWithId(uint256 indexed validatorId,
	// address indexed user, uint256 indexed amount, uint256 tokens, uint256 nonce).
	require.Len(t, readsABI.Events, 1)
	ev := readsABI.Events["ShareBurnedWithId"]
	assert.Equal(t, "ShareBurnedWithId(uint256 indexed,address indexed,uint256 indexed,uint256,uint256)", eventShape(ev), polSource)
	assert.Equal(t, []string{"validatorId", "user", "amount", "tokens", "nonce"}, argNames(ev.Inputs))
	assert.Equal(t, crypto.Keccak256Hash([]byte("ShareBurnedWithId(uint256,address,uint256,uint256,uint256)")), ev.ID)
}

// TestCallsMatchPublishedSources holds every call the signer builds and verifies to Polygon's
// definitions: approve to the package's ERC20; each POL function to its signature in
// contracts/staking/validatorShare/ValidatorShare.sol at polSource, its selector the Keccak of
// that signature and the one Polygon publishes, and its arguments and returns those of the
// pre-POL function of the package it mirrors (same body, the POL token instead of MATIC).
func TestCallsMatchPublishedSources(t *testing.T) {
	m := installMeta(t)
	calls := signerevm.ABI()
	want := []struct {
		method, source, selector, legacy string
	}{
		{signerevm.MethodApprove, "approve(address,uint256)", "095ea7b3", ""},
		{signerevm.MethodBuyVoucherPOL, "buyVoucherPOL(uint256,uint256)", "e4457a8a", "buyVoucher"},
		{signerevm.MethodSellVoucherNewPOL, "sellVoucher_newPOL(uint256,uint256)", "e570b78b", "sellVoucher_new"},
		{signerevm.MethodUnstakeClaimTokensNewPOL, "unstakeClaimTokens_newPOL(uint256)", "8759c234", "unstakeClaimTokens_new"},
		{signerevm.MethodWithdrawRewardsPOL, "withdrawRewardsPOL()", "e0db556b", "withdrawRewards"},
		{signerevm.MethodRestakePOL, "restakePOL()", "9ad5f5a4", "restake"},
	}
	require.Len(t, calls.Methods, len(want), "every call the signer builds is listed here")
	for _, network := range []string{polygonmeta.Mainnet, polygonmeta.Sepolia} {
		share, err := m.ABI(network, "ValidatorShare")
		require.NoError(t, err)
		erc20, err := m.ABI(network, "ERC20")
		require.NoError(t, err)
		for _, w := range want {
			c, ok := calls.Methods[w.method]
			require.True(t, ok, w.method)
			assert.Equal(t, w.source, c.Sig, "%s: signature as %s declares it", w.method, polSource)
			assert.Equal(t, w.selector, hex.EncodeToString(crypto.Keccak256([]byte(w.source))[:4]), "Keccak of %s", w.source)
			assert.Equal(t, w.selector, hex.EncodeToString(c.ID), w.method)
			if w.legacy == "" {
				assert.Equal(t, methodShape(erc20.Methods[w.method]), methodShape(c), "%s ERC20.approve", network)
				continue
			}
			old, ok := share.Methods[w.legacy]
			if assert.True(t, ok, "%s ValidatorShare has no %s", network, w.legacy) {
				assert.Equal(t, strings.TrimPrefix(methodShape(old), w.legacy), strings.TrimPrefix(methodShape(c), w.method),
					"%s takes and returns what %s does", w.method, w.legacy)
			}
		}
	}
}

func argNames(args abi.Arguments) []string {
	var out []string
	for _, a := range args {
		out = append(out, a.Name)
	}
	return out
}
