package all_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/internal/cli"
)

// TestEveryChainsStartUnderAKeysetNamesNoAddress: with --payload-keyset every chain's operation
// starts with no address, transaction hash or amount in its workflow ID or its search attributes
// (the two things a codec cannot seal): the staker is a tag, the amount is left out.
func TestEveryChainsStartUnderAKeysetNamesNoAddress(t *testing.T) {
	const (
		evm       = "0x00000000219ab540356cbb839cbe05303d7705fa"
		share     = "0x00000000000000000000000000000000000000c3"
		solStaker = "Stake11111111111111111111111111111111111111"
		delegator = "celestia1pkptre7fdkl6gfrzlesjjvhxhlc3r4gm2ukn2h"
		valoper   = "celestiavaloper1u3drplq4vr90nnwz0tvnrhetc82heq8halazeh"
	)
	hash := strings.Repeat("ab", 32)
	f := codec.KeysetFile{Current: "k1", Keys: []codec.Key{{ID: "k1", Key: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, codec.KeySize))}},
		SearchKey: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, codec.SearchKeySize))}
	raw, err := json.Marshal(f)
	require.NoError(t, err)
	keyset := filepath.Join(t.TempDir(), "keyset.json")
	require.NoError(t, os.WriteFile(keyset, raw, 0o600))

	for _, args := range [][]string{
		{"stake", "--network", "testnet", "--staker", solStaker, "--lamports", "1000000000"},
		{"polygon", "delegate", "--network", "dev", "--staker", evm, "--validator-share", share, "--pol", "1"},
		{"eigenlayer", "checkpoint", "--network", "dev", "--owner", evm},
		{"celestia", "delegate", "--network", "celestia-mocha-testnet", "--delegator", delegator, "--validator", valoper, "--utia", "100"},
		{"hyperliquid", "withdraw", "--network", "testnet", "--delegator", evm, "--amount", "1"},
		{"ton", "watch", "--network", "mainnet", "--hash", hash},
	} {
		t.Run(args[0], func(t *testing.T) {
			rec := &startRecorder{pollers: 1}
			var out bytes.Buffer
			require.NoError(t, run(append(args, "--payload-keyset", keyset), &out, func(cli.Temporal) (client.Client, error) { return rec, nil }), out.String())
			require.Len(t, rec.started, 1)
			o := rec.started[0]
			for _, clear := range []string{evm[2:], share[2:], solStaker, delegator, valoper, hash} {
				assert.NotContains(t, strings.ToLower(o.ID), strings.ToLower(clear), "the ID")
				for k, v := range o.TypedSearchAttributes.GetUntypedValues() {
					assert.NotContains(t, strings.ToLower(fmt.Sprint(v)), strings.ToLower(clear), k.GetName())
				}
			}
			for k := range o.TypedSearchAttributes.GetUntypedValues() {
				assert.NotEqual(t, "StakeflowAmount", k.GetName())
			}
		})
	}
}
