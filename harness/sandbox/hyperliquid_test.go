//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	hl "github.com/stakeflow/stakeflow/signer/hyperliquid"
)

// hlClient asks endpoint 6 for a request, signs it with the production signer, and submits it.
type hlClient struct {
	t       *testing.T
	api     *apiclient.Client
	signer  *hl.Signer
	addr    common.Address
	network string
}

func newHLClient(t *testing.T, network string) *hlClient {
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	return &hlClient{t: t, api: client(t, shared.URL(), "hl-user"), signer: hl.New(signerevm.KeyringOf(k), hl.Policy{}),
		addr: crypto.PubkeyToAddress(k.PublicKey), network: network}
}

func (c *hlClient) request(amount string) *hl.Unsigned {
	res, err := c.api.HyperliquidWithdraw(testCtx(c.t), c.network, apiclient.HyperliquidWithdrawRequest{Amount: json.Number(amount), DelegatorAddress: c.addr.Hex()})
	require.NoError(c.t, err)
	u, err := hl.Decode(res.UnsignedTransaction)
	require.NoError(c.t, err)
	return u
}

func (c *hlClient) sign(amount string, u *hl.Unsigned) *hl.Signed {
	s, err := c.signer.Sign(context.Background(), hl.Intent{Network: c.network, Delegator: c.addr, Amount: amount}, u)
	require.NoError(c.t, err)
	return s
}

func (c *hlClient) post(path string, body any) map[string]any {
	raw, err := json.Marshal(body)
	require.NoError(c.t, err)
	resp, err := http.Post(shared.HyperliquidURL(c.network)+path, "application/json", bytes.NewReader(raw))
	require.NoError(c.t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(c.t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

func (c *hlClient) postStatus(path string, body any) (any, int) {
	raw, err := json.Marshal(body)
	require.NoError(c.t, err)
	resp, err := http.Post(shared.HyperliquidURL(c.network)+path, "application/json", bytes.NewReader(raw))
	require.NoError(c.t, err)
	defer resp.Body.Close()
	var out any
	require.NoError(c.t, json.NewDecoder(resp.Body).Decode(&out))
	return out, resp.StatusCode
}

func (c *hlClient) history() []map[string]any {
	v, status := c.postStatus("/info", map[string]string{"type": "delegatorHistory", "user": c.addr.Hex()})
	require.Equal(c.t, http.StatusOK, status)
	var out []map[string]any
	for _, e := range v.([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (c *hlClient) submit(s *hl.Signed) map[string]any { return c.post("/exchange", s) }

// TestHyperliquidWithdrawalQueue: a signed cWithdraw is accepted once, debits the staking
// balance, waits the queue (warped) and reaches spot exactly; the info reads show it.
func TestHyperliquidWithdrawalQueue(t *testing.T) {
	c := newHLClient(t, "testnet")
	shared.HyperliquidFund("testnet", c.addr, 1_000_000_000)
	u := c.request("2.5")
	assert.Equal(t, uint64(250_000_000), u.Action.Wei)
	signed := c.sign("2.5", u)
	assert.Equal(t, "ok", c.submit(signed)["status"])
	again := c.submit(signed)
	assert.Equal(t, "err", again["status"], "a nonce is accepted once")
	assert.Contains(t, again["response"], "already used")
	acct := shared.HyperliquidAccount("testnet", c.addr)
	assert.Equal(t, uint64(750_000_000), acct.Staking)
	require.Len(t, acct.Pending, 1)
	assert.Equal(t, u.Action.Nonce, acct.Pending[0].Nonce)
	sum := c.post("/info", map[string]string{"type": "delegatorSummary", "user": c.addr.Hex()})
	assert.Equal(t, "7.5", sum["undelegated"])
	assert.Equal(t, "2.5", sum["totalPendingWithdrawal"])
	assert.EqualValues(t, 1, sum["nPendingWithdrawals"])
	assert.Equal(t, map[string]any{"delegated": "0.0", "undelegated": "7.5", "totalPendingWithdrawal": "2.5", "nPendingWithdrawals": 1.0}, sum,
		"delegatorSummary: exactly the public API's fields")
	// delegatorHistory: {time, hash, delta} entries, newest first, the withdrawal named by the
	// L1 hash (not the digest), no nonce.
	hist := c.history()
	require.Len(t, hist, 2)
	assert.Equal(t, map[string]any{"withdrawal": map[string]any{"amount": "2.5", "phase": "initiated"}}, hist[0]["delta"])
	assert.Equal(t, acct.Pending[0].Hash, hist[0]["hash"])
	assert.NotEqual(t, signed.Digest, hist[0]["hash"])
	assert.InDelta(t, float64(time.Now().UnixMilli()), hist[0]["time"], float64(time.Minute.Milliseconds()))
	assert.Equal(t, map[string]any{"cDeposit": map[string]any{"amount": "10.0"}}, hist[1]["delta"])
	for _, h := range hist {
		assert.ElementsMatch(t, []string{"time", "hash", "delta"}, keys(h))
	}
	gone, status := c.postStatus("/info", map[string]string{"type": "pendingWithdrawals", "user": c.addr.Hex()})
	assert.Equal(t, http.StatusUnprocessableEntity, status, "only the public info types: %v", gone)

	shared.HyperliquidWarp("testnet", HyperliquidQueue("testnet"))
	acct = shared.HyperliquidAccount("testnet", c.addr)
	assert.Empty(t, acct.Pending)
	assert.Equal(t, uint64(250_000_000), acct.Spot)
	spot := c.post("/info", map[string]string{"type": "spotClearinghouseState", "user": c.addr.Hex()})
	assert.Equal(t, map[string]any{"coin": "HYPE", "token": 150.0, "total": "2.5", "hold": "0.0", "entryNtl": "0.0"}, spot["balances"].([]any)[0])
	hist = c.history()
	require.Len(t, hist, 3)
	assert.Equal(t, map[string]any{"withdrawal": map[string]any{"amount": "2.5", "phase": "finalized"}}, hist[0]["delta"], "finalized, after the queue")
	assert.Equal(t, "initiated", hist[1]["delta"].(map[string]any)["withdrawal"].(map[string]any)["phase"])
	assert.EqualValues(t, hist[1]["time"].(float64)+float64(HyperliquidQueue("testnet").Milliseconds()), hist[0]["time"])
}

// TestHyperliquidExchangeRefuses: five pending at most; a signature over other data recovers
// another user (who has nothing); a nonce outside the window and another network's chain are
// refused.
func TestHyperliquidExchangeRefuses(t *testing.T) {
	c := newHLClient(t, "mainnet")
	shared.HyperliquidFund("mainnet", c.addr, 100_000_000_000)
	for i := range HyperliquidMaxPending {
		s := c.sign("1", c.request("1"))
		require.Equal(t, "ok", c.submit(s)["status"], "withdrawal %d", i+1)
		require.Eventually(t, func() bool { return time.Now().UnixMilli() > int64(s.Nonce) }, time.Second, time.Millisecond, "next nonce")
	}
	sixth := c.submit(c.sign("1", c.request("1")))
	assert.Equal(t, "err", sixth["status"])
	assert.Contains(t, sixth["response"], "Too many pending")

	d := newHLClient(t, "mainnet")
	shared.HyperliquidFund("mainnet", d.addr, 100_000_000)
	s := d.sign("1", d.request("1"))
	tampered := *s
	tampered.Action.Wei++
	tampered.Nonce = s.Nonce
	r := d.submit(&tampered)
	assert.Equal(t, "err", r["status"], "the signature recovers someone without a balance")
	old := *s
	old.Action.Nonce, old.Nonce = s.Nonce-uint64(49*time.Hour/time.Millisecond), s.Nonce-uint64(49*time.Hour/time.Millisecond)
	assert.Equal(t, "err", d.submit(&old)["status"])
	other := *s
	other.Action.HyperliquidChain = "Testnet"
	assert.Contains(t, d.submit(&other)["response"], "hyperliquidChain")
	assert.Equal(t, uint64(100_000_000), shared.HyperliquidAccount("mainnet", d.addr).Staking, "nothing was taken")
}

// TestHyperliquidHostileRequests: each hostile mode changes endpoint 6's answer for its delegator
// only, and the production signer refuses each, naming the field.
func TestHyperliquidHostileRequests(t *testing.T) {
	for mode, field := range map[HyperliquidHostileMode]string{
		HyperliquidOtherChain: "hyperliquidChain", HyperliquidOtherWei: "wei", HyperliquidOldNonce: "nonce",
		HyperliquidWithdraw3: "type", HyperliquidUsdSend: "type",
	} {
		t.Run(string(mode), func(t *testing.T) {
			c := newHLClient(t, "testnet")
			require.NoError(t, shared.SetHyperliquidHostile(c.addr, mode))
			_, err := c.signer.Sign(context.Background(), hl.Intent{Network: "testnet", Delegator: c.addr, Amount: "1.25"}, c.request("1.25"))
			var ve *hl.VerificationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, field, ve.Field)
			honest := newHLClient(t, "testnet")
			c.sign("1.25", honest.request("1.25"))
		})
	}
}

// TestHyperliquidOtherAmountContradictsItself: the other-amount mode answers the action as asked
// but echoes one HYPE more; the production signer refuses the answer whole, naming both values.
func TestHyperliquidOtherAmountContradictsItself(t *testing.T) {
	c := newHLClient(t, "testnet")
	require.NoError(t, shared.SetHyperliquidHostile(c.addr, HyperliquidOtherAmount))
	res, err := c.api.HyperliquidWithdraw(testCtx(t), "testnet", apiclient.HyperliquidWithdrawRequest{Amount: "1.25", DelegatorAddress: c.addr.Hex()})
	require.NoError(t, err)
	assert.Equal(t, "2.25", res.Amount)
	u, err := hl.Decode(res.UnsignedTransaction)
	require.NoError(t, err)
	assert.Equal(t, uint64(125_000_000), u.Action.Wei, "the action is as asked")
	_, err = c.signer.Sign(context.Background(), hl.Intent{Network: "testnet", Delegator: c.addr, Amount: "1.25", EchoedAmount: res.Amount}, u)
	var ce *hl.ContradictionError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), `"2.25"`)
	assert.Contains(t, err.Error(), "125000000")
}

func TestHyperliquidAmountExact(t *testing.T) {
	c := newHLClient(t, "testnet")
	_, err := c.api.HyperliquidWithdraw(testCtx(t), "testnet", apiclient.HyperliquidWithdrawRequest{Amount: "0.000000001", DelegatorAddress: c.addr.Hex()})
	require.True(t, apiclient.IsValidation(err), "%v", err)
	u := c.request("0.1")
	assert.Equal(t, uint64(10_000_000), u.Action.Wei, "0.1 HYPE is exactly 10^7 wei, no float rounding")
}
