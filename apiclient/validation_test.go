package apiclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArgumentValidation: every rejected argument is an *ArgumentError naming
// the field, and no request reaches the server.
func TestArgumentValidation(t *testing.T) {
	ctx := context.Background()
	goodStake := StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: staker, Amount: "1"}
	tests := []struct {
		name  string
		field string
		call  func(c *Client) error
	}{
		// Endpoint 1.
		{"apr: network outside enum", "network", func(c *Client) error {
			_, err := c.DelegatorAPR(ctx, "solana", DelegatorAPRQuery{Address: ethAddr})
			return err
		}},
		{"apr: address required", "address", func(c *Client) error {
			_, err := c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{})
			return err
		}},
		{"apr: limit above 1000", "limit", func(c *Client) error {
			_, err := c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr, Limit: 1001})
			return err
		}},
		{"apr: negative limit", "limit", func(c *Client) error {
			_, err := c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr, Limit: -1})
			return err
		}},
		{"apr: offset above 10000000", "offset", func(c *Client) error {
			_, err := c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr, Offset: 10_000_001})
			return err
		}},
		{"apr: negative offset", "offset", func(c *Client) error {
			_, err := c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr, Offset: -1})
			return err
		}},
		{"apr: finishAt before startAt", "finishAt", func(c *Client) error {
			now := time.Now()
			_, err := c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr, StartAt: now, FinishAt: now.Add(-time.Hour)})
			return err
		}},
		{"apr: finishNumber below startNumber", "finishNumber", func(c *Client) error {
			_, err := c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr, StartNumber: ptr(int64(5)), FinishNumber: ptr(int64(4))})
			return err
		}},
		// Endpoint 2.
		{"apy: network outside enum", "network", func(c *Client) error {
			_, err := c.NetworkAPY(ctx, "cosmoshub", NetworkAPYQuery{})
			return err
		}},
		{"apy: limit above 1000", "limit", func(c *Client) error {
			_, err := c.NetworkAPY(ctx, "sui", NetworkAPYQuery{Limit: 5000})
			return err
		}},
		{"apy: offset above 10000000", "offset", func(c *Client) error {
			_, err := c.NetworkAPY(ctx, "kusama", NetworkAPYQuery{Offset: 10_000_001})
			return err
		}},
		// Endpoint 3.
		{"celestia: network outside enum", "network", func(c *Client) error {
			_, err := c.CelestiaSend(ctx, "mainnet", CelestiaSendRequest{SignedTransaction: hexTx})
			return err
		}},
		{"celestia: signed transaction required", "signedTransaction", func(c *Client) error {
			_, err := c.CelestiaSend(ctx, "celestia-mainnet-beta", CelestiaSendRequest{})
			return err
		}},
		{"celestia: neither base64 nor hex", "signedTransaction", func(c *Client) error {
			_, err := c.CelestiaSend(ctx, "celestia-mainnet-beta", CelestiaSendRequest{SignedTransaction: "not base64!"})
			return err
		}},
		// Endpoint 4.
		{"polygon: signed transaction required", "signedTransaction", func(c *Client) error {
			_, err := c.PolygonSend(ctx, PolygonSendRequest{StakerAddress: ethAddr})
			return err
		}},
		{"polygon: signed transaction without 0x", "signedTransaction", func(c *Client) error {
			_, err := c.PolygonSend(ctx, PolygonSendRequest{SignedTransaction: "02f8", StakerAddress: ethAddr})
			return err
		}},
		{"polygon: signed transaction not hex", "signedTransaction", func(c *Client) error {
			_, err := c.PolygonSend(ctx, PolygonSendRequest{SignedTransaction: "0xzz", StakerAddress: ethAddr})
			return err
		}},
		{"polygon: staker required", "stakerAddress", func(c *Client) error {
			_, err := c.PolygonSend(ctx, PolygonSendRequest{SignedTransaction: "0x02f8"})
			return err
		}},
		// Endpoint 5.
		{"eigenlayer: owner required", "eigenPodOwnerAddress", func(c *Client) error {
			_, err := c.EigenLayerVerifyCheckpointProofs(ctx, VerifyCheckpointProofsRequest{ActivateTx: "0x1"})
			return err
		}},
		{"eigenlayer: activateTx required", "activateTx", func(c *Client) error {
			_, err := c.EigenLayerVerifyCheckpointProofs(ctx, VerifyCheckpointProofsRequest{EigenPodOwnerAddress: ethAddr})
			return err
		}},
		// Endpoint 6.
		{"hyperliquid: network outside enum", "network", func(c *Client) error {
			_, err := c.HyperliquidWithdraw(ctx, "mainnet-beta", HyperliquidWithdrawRequest{Amount: "1", DelegatorAddress: ethAddr})
			return err
		}},
		{"hyperliquid: amount required", "amount", func(c *Client) error {
			_, err := c.HyperliquidWithdraw(ctx, "mainnet", HyperliquidWithdrawRequest{DelegatorAddress: ethAddr})
			return err
		}},
		{"hyperliquid: amount zero", "amount", func(c *Client) error {
			_, err := c.HyperliquidWithdraw(ctx, "mainnet", HyperliquidWithdrawRequest{Amount: "0", DelegatorAddress: ethAddr})
			return err
		}},
		{"hyperliquid: amount negative", "amount", func(c *Client) error {
			_, err := c.HyperliquidWithdraw(ctx, "mainnet", HyperliquidWithdrawRequest{Amount: "-1.5", DelegatorAddress: ethAddr})
			return err
		}},
		{"hyperliquid: amount not a number", "amount", func(c *Client) error {
			_, err := c.HyperliquidWithdraw(ctx, "mainnet", HyperliquidWithdrawRequest{Amount: "1,5", DelegatorAddress: ethAddr})
			return err
		}},
		{"hyperliquid: delegator required", "delegatorAddress", func(c *Client) error {
			_, err := c.HyperliquidWithdraw(ctx, "mainnet", HyperliquidWithdrawRequest{Amount: "1"})
			return err
		}},
		// Endpoint 7.
		{"validator status: network outside enum", "network", func(c *Client) error {
			_, err := c.SolanaValidatorStatus(ctx, "devnet", []string{vote})
			return err
		}},
		{"validator status: no accounts", "voteAccounts", func(c *Client) error {
			_, err := c.SolanaValidatorStatus(ctx, "testnet", nil)
			return err
		}},
		{"validator status: account with comma", "voteAccounts[1]", func(c *Client) error {
			_, err := c.SolanaValidatorStatus(ctx, "testnet", []string{vote, "a,b"})
			return err
		}},
		{"validator status: empty account", "voteAccounts[0]", func(c *Client) error {
			_, err := c.SolanaValidatorStatus(ctx, "testnet", []string{""})
			return err
		}},
		// Endpoint 8.
		{"ssv: limit above 1000", "limit", func(c *Client) error {
			_, err := c.SSVRequests(ctx, SSVRequestsQuery{Limit: 1001})
			return err
		}},
		{"ssv: offset above 100000", "offset", func(c *Client) error {
			_, err := c.SSVRequests(ctx, SSVRequestsQuery{Offset: 100_001})
			return err
		}},
		{"ssv: negative offset", "offset", func(c *Client) error {
			_, err := c.SSVRequests(ctx, SSVRequestsQuery{Offset: -5})
			return err
		}},
		// Endpoint 9.
		{"ton: network outside enum", "network", func(c *Client) error {
			_, err := c.TONTransactionStatus(ctx, "mainnet-beta", "abc")
			return err
		}},
		{"ton: hash required", "transactionHash", func(c *Client) error {
			_, err := c.TONTransactionStatus(ctx, "mainnet", "")
			return err
		}},
		{"ton: dot-dot hash", "transactionHash", func(c *Client) error {
			_, err := c.TONTransactionStatus(ctx, "mainnet", "..")
			return err
		}},
		// Endpoint 10.
		{"stake: unknown chain", "chain", func(c *Client) error {
			r := goodStake
			r.Chain = "ethereum"
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: network outside enum", "network", func(c *Client) error {
			r := goodStake
			r.Network = "devnet"
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: staker required", "stakerAddress", func(c *Client) error {
			r := goodStake
			r.StakerAddress = ""
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: amount required", "amount", func(c *Client) error {
			r := goodStake
			r.Amount = ""
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: amount zero", "amount", func(c *Client) error {
			r := goodStake
			r.Amount = "0"
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: amount negative", "amount", func(c *Client) error {
			r := goodStake
			r.Amount = "-1"
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: amount with plus sign", "amount", func(c *Client) error {
			r := goodStake
			r.Amount = "+1"
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: amount decimal", "amount", func(c *Client) error {
			r := goodStake
			r.Amount = "1.5"
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: amount with spaces", "amount", func(c *Client) error {
			r := goodStake
			r.Amount = " 1"
			_, err := c.Stake(ctx, r)
			return err
		}},
		{"stake: amount beyond uint64", "amount", func(c *Client) error {
			r := goodStake
			r.Amount = "18446744073709551616"
			_, err := c.Stake(ctx, r)
			return err
		}},
		// Endpoint 11.
		{"unstake: amount decimal", "extra.amount", func(c *Client) error {
			_, err := c.Unstake(ctx, UnstakeRequest{Chain: "solana", Network: "testnet", StakerAddress: staker, Extra: UnstakeExtra{Amount: "1e9", StakeAccount: vote}})
			return err
		}},
		{"unstake: stake account required", "extra.stakeAccount", func(c *Client) error {
			_, err := c.Unstake(ctx, UnstakeRequest{Chain: "solana", Network: "testnet", StakerAddress: staker, Extra: UnstakeExtra{Amount: "1"}})
			return err
		}},
		{"unstake: network outside enum", "network", func(c *Client) error {
			_, err := c.Unstake(ctx, UnstakeRequest{Chain: "solana", Network: "mainnet", StakerAddress: staker, Extra: UnstakeExtra{Amount: "1", StakeAccount: vote}})
			return err
		}},
		// Endpoint 12.
		{"withdraw: amount required", "extra.amount", func(c *Client) error {
			_, err := c.Withdraw(ctx, WithdrawRequest{Chain: "solana", Network: "testnet", StakerAddress: staker})
			return err
		}},
		{"withdraw: chain required", "chain", func(c *Client) error {
			_, err := c.Withdraw(ctx, WithdrawRequest{Network: "testnet", StakerAddress: staker, Extra: WithdrawExtra{Amount: "1"}})
			return err
		}},
		// Endpoint 13.
		{"broadcast: signed transaction required", "signedTransaction", func(c *Client) error {
			_, err := c.Broadcast(ctx, BroadcastRequest{Chain: "solana", Network: "testnet", StakerAddress: staker})
			return err
		}},
		{"broadcast: staker required", "stakerAddress", func(c *Client) error {
			_, err := c.Broadcast(ctx, BroadcastRequest{Chain: "solana", Network: "testnet", SignedTransaction: "AQID"})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, hits := fixedServer(t, 200, nil, `{"error":null,"result":{}}`)
			c := newTestClient(t, srv.URL)
			err := tt.call(c)
			var ae *ArgumentError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.field, ae.Field)
			assert.NotEmpty(t, ae.Reason)
			assert.Contains(t, err.Error(), tt.field)
			assert.True(t, IsArgument(err))
			assert.False(t, IsRetryable(err))
			assert.Zero(t, hits.Load(), "no request may be sent for an invalid argument")
		})
	}
}

// TestArgumentBoundsAccepted: the limits' edge values are accepted and sent.
func TestArgumentBoundsAccepted(t *testing.T) {
	ctx := context.Background()
	queries := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.RawQuery
		_, _ = w.Write([]byte(`{"error":null,"result":{"limit":1000,"offset":0,"totalCount":0,"list":[]}}`))
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)

	_, err := c.SSVRequests(ctx, SSVRequestsQuery{Limit: 1000, Offset: 100_000})
	require.NoError(t, err)
	assert.Equal(t, "limit=1000&offset=100000", <-queries)
	_, err = c.NetworkAPY(ctx, "ethereum", NetworkAPYQuery{Limit: 1, Offset: 10_000_000})
	require.NoError(t, err)
	assert.Equal(t, "limit=1&offset=10000000", <-queries)
	_, err = c.NetworkAPY(ctx, "celestia", NetworkAPYQuery{})
	require.NoError(t, err)
	assert.Equal(t, "", <-queries, "defaults are the server's: nothing sent")
	_, err = c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr})
	require.NoError(t, err)
	assert.Equal(t, "address="+ethAddr, <-queries, "no startAt/finishAt unless given")
}

// TestSignedTransactionEncodings: Celestia accepts base64 and hex (sent as
// given); unified amounts up to the uint64 maximum are accepted.
func TestSignedTransactionEncodings(t *testing.T) {
	bodies := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		_, _ = w.Write([]byte(`{"error":null,"result":{"status":"failed"}}`))
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)
	for _, tx := range []string{hexTx, strings.ToUpper(hexTx), "0x" + hexTx, base64Tx, strings.TrimRight(base64Tx, "=")} {
		res, err := c.CelestiaSend(context.Background(), "celestia-mainnet-beta", CelestiaSendRequest{SignedTransaction: tx})
		require.NoError(t, err, tx)
		assert.Equal(t, CelestiaStatusFailed, res.Status)
		var body CelestiaSendRequest
		require.NoError(t, json.Unmarshal([]byte(<-bodies), &body))
		assert.Equal(t, tx, body.SignedTransaction)
	}
	_, err := c.Stake(context.Background(), StakeRequest{Chain: "solana", Network: "mainnet-beta", StakerAddress: staker, Amount: "18446744073709551615"})
	require.NoError(t, err)
	assert.Contains(t, <-bodies, `"amount":"18446744073709551615"`)
}

// TestBaseURL: validation of the base URL and both address forms.
func TestBaseURL(t *testing.T) {
	bad := []struct{ url, want string }{
		{"", "scheme"},
		{"ftp://host", "scheme must be http or https"},
		{"host.example/api", "scheme"},
		{"https://", "host missing"},
		{"https://user:secret@host", "user info"},
		{"https://host/api?x=1", "query"},
		{"https://host/api#frag", "fragment"},
		{"http://[::1", "base URL"},
	}
	for _, tt := range bad {
		_, err := New(tt.url, WithToken(testToken))
		require.Error(t, err, tt.url)
		assert.Contains(t, err.Error(), tt.want, tt.url)
		assert.NotContains(t, err.Error(), "secret")
	}
	good := []struct{ url, base string }{
		{"https://api.example.com", "https://api.example.com"},
		{"https://api.example.com/", "https://api.example.com"},
		{"https://api.example.com/api", "https://api.example.com/api"},
		{"https://api.example.com/api/", "https://api.example.com/api"},
		{"http://127.0.0.1:8080/prefix/api", "http://127.0.0.1:8080/prefix/api"},
	}
	for _, tt := range good {
		c, err := New(tt.url, WithToken(testToken))
		require.NoError(t, err, tt.url)
		assert.Equal(t, tt.base, c.base)
	}
}

// TestOptions: option arguments are validated; the validator status
// parameter name is configurable.
func TestOptions(t *testing.T) {
	_, err := New("https://h", WithHTTPClient(nil))
	assert.ErrorContains(t, err, "nil *http.Client")
	_, err = New("https://h", WithTimeout(-time.Second))
	assert.ErrorContains(t, err, "negative")
	_, err = New("https://h", WithValidatorStatusParam(" "))
	assert.ErrorContains(t, err, "empty parameter name")

	queries := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.RawQuery
		_, _ = w.Write([]byte(`{"error":null,"result":{"statuses":{"` + vote + `":"active"}}}`))
	}))
	t.Cleanup(srv.Close)
	var used bool
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used = true
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := newTestClient(t, srv.URL, WithValidatorStatusParam("pubkeys"), WithHTTPClient(hc))
	res, err := c.SolanaValidatorStatus(context.Background(), "testnet", []string{vote})
	require.NoError(t, err)
	assert.Equal(t, "pubkeys="+vote, <-queries)
	assert.True(t, used, "custom HTTP client is used")
	p, err := res.ParseStatuses()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{vote: "active"}, p.Map)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
