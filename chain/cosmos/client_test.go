package cosmos

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Answers in the Cosmos SDK's gRPC-gateway JSON form (as celestia-app's REST serves them).
var answers = map[string]string{
	"/cosmos/base/tendermint/v1beta1/node_info":                               `{"default_node_info":{"network":"mocha-4","version":"0.38.17"},"application_version":{"name":"celestia-app"}}`,
	"/cosmos/auth/v1beta1/accounts/celestia1known":                            `{"account":{"@type":"/cosmos.auth.v1beta1.BaseAccount","address":"celestia1known","pub_key":{"@type":"/cosmos.crypto.secp256k1.PubKey","key":"A08EGB7ro1ORuFhjOnZcSgwYlpe0DSFjVNUIkNNQxwKQ"},"account_number":"12345","sequence":"67"}}`,
	"/cosmos/tx/v1beta1/txs/ABCD":                                             `{"tx":{},"tx_response":{"height":"4242","txhash":"ABCD","codespace":"staking","code":3,"raw_log":"validator does not exist","gas_wanted":"200000","gas_used":"81234"}}`,
	"/cosmos/staking/v1beta1/params":                                          `{"params":{"unbonding_time":"1814400s","max_validators":100,"max_entries":7,"historical_entries":10000,"bond_denom":"utia"}}`,
	"/cosmos/base/tendermint/v1beta1/blocks/latest":                           `{"block":{"header":{"chain_id":"mocha-4","height":"5000","time":"2026-11-25T20:00:00.123456789Z"}}}`,
	"/cosmos/bank/v1beta1/balances/celestia1known":                            `{"balances":[{"denom":"ibc/X","amount":"5"},{"denom":"utia","amount":"999"}],"pagination":{"next_key":null,"total":"2"}}`,
	"/cosmos/distribution/v1beta1/delegators/celestia1known/rewards/v":        `{"rewards":[{"denom":"utia","amount":"123.456000000000000000"}]}`,
	"/cosmos/base/tendermint/v1beta1/blocks/4242":                             `{"block_id":{"hash":"x"},"block":{"header":{"chain_id":"mocha-4","height":"4242"},"data":{"txs":["AQID","BAU="]}},"sdk_block":{}}`,
	"/cosmos/base/tendermint/v1beta1/blocks/4241":                             `{"block":{"header":{"chain_id":"mocha-4","height":"4241"},"data":{"txs":[]}}}`,
	"/cosmos/staking/v1beta1/delegators/celestia1known/unbonding_delegations": `{"unbonding_responses":[{"delegator_address":"celestia1known","validator_address":"v","entries":[{"creation_height":"4000","completion_time":"2026-12-16T20:00:00Z","initial_balance":"10","balance":"10","unbonding_id":"1"}]}],"pagination":{}}`,
}

func server(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch body, ok := answers[r.URL.Path]; {
		case ok:
			_, _ = w.Write([]byte(body))
		case r.URL.Path == "/cosmos/auth/v1beta1/accounts/celestia1bad":
			http.Error(w, `{"code":3,"message":"decoding bech32 failed"}`, http.StatusBadRequest)
		case r.URL.Path == "/cosmos/base/tendermint/v1beta1/blocks/5001":
			http.Error(w, `{"code":3,"message":"requested block height is bigger then the chain length","details":[]}`, http.StatusBadRequest)
		case r.URL.Path == "/cosmos/tx/v1beta1/txs" && r.Method == http.MethodPost:
			var in struct {
				TxBytes string `json:"tx_bytes"`
				Mode    string `json:"mode"`
			}
			_ = json.NewDecoder(r.Body).Decode(&in)
			if in.Mode != "BROADCAST_MODE_SYNC" || in.TxBytes != "AQID" {
				http.Error(w, `{"code":3,"message":"bad request"}`, http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(`{"tx_response":{"height":"0","txhash":"abcd","codespace":"sdk","code":4,"raw_log":"signature verification failed"}}`))
		case r.URL.Path == "/cosmos/auth/v1beta1/accounts/celestia1busy":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			http.Error(w, `{"code":5,"message":"not found"}`, http.StatusNotFound)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestReadsAfterTheChainIDIsProven(t *testing.T) {
	ts := server(t)
	ctx := context.Background()
	wrong := New(ts.URL, "celestia", nil)
	require.ErrorIs(t, wrong.Verify(ctx), ErrNetworkUnverified)
	_, err := wrong.Account(ctx, "celestia1known")
	require.ErrorIs(t, err, ErrNetworkUnverified)

	c := New(ts.URL+"/", "mocha-4", nil)
	require.NoError(t, c.Verify(ctx))
	a, err := c.Account(ctx, "celestia1known")
	require.NoError(t, err)
	assert.Equal(t, &Account{Number: 12345, Sequence: 67}, a)
	a, err = c.Account(ctx, "celestia1unknown")
	require.NoError(t, err)
	assert.Nil(t, a)
	_, err = c.Account(ctx, "celestia1bad")
	require.ErrorIs(t, err, ErrRejected)
	_, err = c.Account(ctx, "celestia1busy")
	require.ErrorIs(t, err, ErrUnavailable)

	tx, err := c.Tx(ctx, "abcd")
	require.NoError(t, err)
	assert.Equal(t, &TxResult{Hash: "ABCD", Height: 4242, Code: 3, Codespace: "staking", Log: "validator does not exist", GasWanted: 200000, GasUsed: 81234}, tx)
	tx, err = c.Tx(ctx, "EEEE")
	require.NoError(t, err)
	assert.Nil(t, tx)

	d, err := c.UnbondingTime(ctx)
	require.NoError(t, err)
	assert.Equal(t, 21*24*time.Hour, d)
	b, err := c.LatestBlock(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(5000), b.Height)
	bal, err := c.Balance(ctx, "celestia1known", "utia")
	require.NoError(t, err)
	assert.Equal(t, "999", bal.String())
	rew, err := c.Rewards(ctx, "celestia1known", "v", "utia")
	require.NoError(t, err)
	assert.Equal(t, "123", rew.String())
	del, err := c.Delegation(ctx, "celestia1known", "v")
	require.NoError(t, err)
	assert.Equal(t, "0", del.String(), "none: 404")
	ub, err := c.Unbonding(ctx, "celestia1known")
	require.NoError(t, err)
	require.Len(t, ub, 1)
	assert.Equal(t, uint64(4000), ub[0].CreationHeight)
	assert.Equal(t, time.Date(2026, 12, 16, 20, 0, 0, 0, time.UTC), ub[0].CompletionTime)

	blk, err := c.Block(ctx, 4242)
	require.NoError(t, err)
	assert.Equal(t, &BlockTxs{Height: 4242, Txs: [][]byte{{1, 2, 3}, {4, 5}}}, blk)
	blk, err = c.Block(ctx, 4241)
	require.NoError(t, err)
	assert.Equal(t, &BlockTxs{Height: 4241}, blk)
	blk, err = c.Block(ctx, 5001)
	require.NoError(t, err, "a node behind: not yet")
	assert.Nil(t, blk)
	chk, err := c.BroadcastSync(ctx, []byte{1, 2, 3})
	require.NoError(t, err)
	assert.Equal(t, &CheckResult{Hash: "ABCD", Code: 4, Codespace: "sdk", Log: "signature verification failed"}, chk)
	_, err = c.BroadcastSync(ctx, []byte{9})
	require.ErrorIs(t, err, ErrRejected)
}
