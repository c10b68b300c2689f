package celestiachain

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// Public vectors (see signer/cosmos/tx): cosmjs's signed MsgSend from its faucet (chain
// simd-testing, account number 1, sequence 0, fee 2000ucosm) and a Cosmos Hub delegation SignDoc.
const (
	cosmjsSignedTx     = "0a97010a90010a1c2f636f736d6f732e62616e6b2e763162657461312e4d736753656e6412700a2d636f736d6f7331706b707472653766646b6c366766727a6c65736a6a766878686c63337234676d6d6b38727336122d636f736d6f7331717970717870713971637273737a673270767871367273307a716733797963356c7a763778751a100a0575636f736d12073132333435363712001800126b0a500a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a21034f04181eeba35391b858633a765c4a0c189697b40d216354d50890d350c7029012040a020801180012170a0d0a0575636f736d12043230303010c09a0c1a0022001a40d1bb55b0f3e5f9c260a20c8ccf2cb44f19bafccba84c7fb6e2b77fac401b15c9228c33236a701dd7a7c4a481aa5dedb902c982fe565504c4f4e7f39ccfcd73d6"
	faucetCosmos       = "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6"
	hubDelegateSignDoc = "0ab1010a9c010a232f636f736d6f732e7374616b696e672e763162657461312e4d736744656c656761746512750a2d636f736d6f73316738343933346a70753376356465357971756b6b6b68786d63767377337532616a787670646c1234636f736d6f7376616c6f706572317a387a6a76336c6e7470777875613072747076677263776c306e6d30746c7467706773366c371a0e0a057561746f6d1205313030303012106164616d696b2d746573742d6d656d6f12680a510a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a210388459b2653519948b12492f1a0b464720110c147a8155d23d423a5cc3c21d89a12040a02080118b40112130a0d0a057561746f6d120434373234109ac40b1a0b636f736d6f736875622d3420f6f201"
)

func celestiaOf(t *testing.T, cosmosAddr string) string {
	t.Helper()
	b, err := accountBytes("cosmos", cosmosAddr)
	require.NoError(t, err)
	a, err := encode("celestia", b)
	require.NoError(t, err)
	return a
}

func TestLedgerReadsPublicVectors(t *testing.T) {
	raw, err := hex.DecodeString(cosmjsSignedTx)
	require.NoError(t, err)
	d, err := decodeTx(raw)
	require.NoError(t, err)
	assert.Equal(t, "/cosmos.bank.v1beta1.MsgSend", d.msgs[0].typeURL)
	assert.Equal(t, []coin{{"ucosm", "2000"}}, d.fee)
	assert.Equal(t, uint64(200000), d.gasLimit)
	addr, err := addressOf(d.pubKey)
	require.NoError(t, err)
	assert.Equal(t, celestiaOf(t, faucetCosmos), addr)

	// The signature checks out on chain simd-testing with account number 1: the ledger gets past
	// it and refuses the ucosm fee; on another chain id the signature is what fails.
	for chainID, code := range map[string]uint32{"simd-testing": CodeInsufficientFee, "mocha-4": CodeUnauthorized} {
		l := New(Options{ChainID: chainID})
		require.NoError(t, l.Fund(addr, big.NewInt(1_000_000)))
		assert.Equal(t, code, l.Broadcast(raw).Code, chainID)
	}

	sdRaw, err := hex.DecodeString(hubDelegateSignDoc)
	require.NoError(t, err)
	sd, err := parse(sdRaw, 1, 2, 3, 4)
	require.NoError(t, err)
	assert.Equal(t, hubDelegateSignDoc, hex.EncodeToString(signDoc(sd.one(1), sd.one(2), sd.str(3), sd.num(4))))
}

// chain is a ledger with a funded delegator whose key signs with stakeflow's signer.
type chain struct {
	t      *testing.T
	l      *Ledger
	s      *cosmos.Signer
	pub    []byte
	del    string
	v1, v2 string
}

func newChain(t *testing.T, clock func() time.Time) *chain {
	t.Helper()
	v1, v2 := ValidatorAddress("one"), ValidatorAddress("two")
	kr, del := testKeyring(t)
	s := cosmos.NewSigner(kr, cosmos.Policy{Validators: []string{v1, v2}, MaxFee: 10_000, MaxGas: 500_000})
	pub, err := s.PubKey(del)
	require.NoError(t, err)
	// A node whose app.toml sets minimum-gas-prices = "0.002utia" (celestia-app's former default).
	l := New(Options{ChainID: "mocha-4", UnbondingTime: 21 * 24 * time.Hour, MinGasPriceMilli: 2, Validators: []string{v1, v2}, Now: clock})
	require.NoError(t, l.Fund(del, big.NewInt(10_000_000)))
	return &chain{t: t, l: l, s: s, pub: pub, del: del, v1: v1, v2: v2}
}

func (c *chain) send(in cosmos.Intent, fee cosmos.FeeParams) Result {
	c.t.Helper()
	in.Network, in.Delegator = cosmos.NetworkMocha, c.del
	if in.TimeoutHeight == 0 {
		in.TimeoutHeight = 1_000_000
	}
	a, ok := c.l.Account(c.del)
	require.True(c.t, ok)
	acct := cosmos.Account{AccountNumber: a.Number, Sequence: a.Sequence}
	u, err := cosmos.Build(in, c.pub, acct, fee, "")
	require.NoError(c.t, err)
	signed, err := c.s.Sign(context.Background(), u, in, acct)
	require.NoError(c.t, err)
	raw, err := base64.StdEncoding.DecodeString(signed.TxBase64)
	require.NoError(c.t, err)
	res := c.l.Broadcast(raw)
	assert.Equal(c.t, signed.Hash, res.Hash)
	return res
}

var okFee = cosmos.FeeParams{GasLimit: 200_000, Fee: 400}

func TestLedgerAppliesStakingMessages(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newChain(t, func() time.Time { return now })

	res := c.send(cosmos.Intent{Operation: cosmos.OpDelegate, Validator: c.v1, Amount: "3000000"}, okFee)
	require.Equal(t, uint32(0), res.Code, res.Log)
	s := c.l.Snapshot()
	assert.Equal(t, "6999600", s.Balances[c.del])
	assert.Equal(t, []Delegation{{c.del, c.v1, "3000000"}}, s.Delegations)
	a, _ := c.l.Account(c.del)
	assert.Equal(t, uint64(1), a.Sequence)

	require.NoError(t, c.l.AddRewards(c.del, c.v1, big.NewInt(777)))
	res = c.send(cosmos.Intent{Operation: cosmos.OpWithdrawRewards, Validator: c.v1}, okFee)
	require.Equal(t, uint32(0), res.Code, res.Log)
	assert.Equal(t, "6999977", c.l.Snapshot().Balances[c.del]) // -400 fee +777 rewards

	res = c.send(cosmos.Intent{Operation: cosmos.OpRedelegate, Validator: c.v1, DstValidator: c.v2, Amount: "1000000"}, okFee)
	require.Equal(t, uint32(0), res.Code, res.Log)
	assert.Equal(t, []Delegation{{c.del, c.v1, "2000000"}, {c.del, c.v2, "1000000"}}, sortByVal(c.l.Snapshot().Delegations, c.v1))

	res = c.send(cosmos.Intent{Operation: cosmos.OpUndelegate, Validator: c.v2, Amount: "1000000"}, okFee)
	require.Equal(t, uint32(0), res.Code, res.Log)
	s = c.l.Snapshot()
	require.Len(t, s.Unbonding, 1)
	assert.Equal(t, now.Add(21*24*time.Hour), s.Unbonding[0].CompletionTime)
	assert.Equal(t, "6999177", s.Balances[c.del])

	c.l.Warp(21*24*time.Hour - time.Second)
	assert.Len(t, c.l.Snapshot().Unbonding, 1, "not matured a second early")
	c.l.Warp(time.Second)
	s = c.l.Snapshot()
	assert.Empty(t, s.Unbonding)
	assert.Equal(t, "7999177", s.Balances[c.del])

	// An undelegation of more than is delegated is included, fails, pays its fee.
	res = c.send(cosmos.Intent{Operation: cosmos.OpUndelegate, Validator: c.v1, Amount: "2000001"}, okFee)
	assert.NotEqual(t, uint32(0), res.Code)
	assert.NotZero(t, res.Height)
	got, ok := c.l.Tx(res.Hash)
	require.True(t, ok)
	assert.Equal(t, res.Code, got.Code)
	assert.Equal(t, "7998777", c.l.Snapshot().Balances[c.del])
}

func sortByVal(d []Delegation, first string) []Delegation {
	if len(d) == 2 && d[1].Validator == first {
		d[0], d[1] = d[1], d[0]
	}
	return d
}

func TestLedgerRefusals(t *testing.T) {
	c := newChain(t, time.Now)
	in := cosmos.Intent{Operation: cosmos.OpDelegate, Network: cosmos.NetworkMocha, Delegator: c.del, Validator: c.v1, Amount: "1000", TimeoutHeight: 1_000_000}
	sign := func(acct cosmos.Account, fee cosmos.FeeParams) []byte {
		u, err := cosmos.Build(in, c.pub, acct, fee, "")
		require.NoError(t, err)
		// Sign checks the sequence against acct: sign the SignDoc directly for stale ones.
		signed, err := c.s.Sign(context.Background(), u, in, acct)
		require.NoError(t, err)
		raw, err := base64.StdEncoding.DecodeString(signed.TxBase64)
		require.NoError(t, err)
		return raw
	}
	acct := cosmos.Account{AccountNumber: 1, Sequence: 0}
	assert.Equal(t, uint32(CodeWrongSequence), c.l.Broadcast(sign(cosmos.Account{AccountNumber: 1, Sequence: 1}, okFee)).Code)
	assert.Equal(t, uint32(CodeUnauthorized), c.l.Broadcast(sign(cosmos.Account{AccountNumber: 2}, okFee)).Code)
	good := sign(acct, okFee)
	tampered := append([]byte{}, good...)
	tampered[len(tampered)-1] ^= 1
	assert.Equal(t, uint32(CodeUnauthorized), c.l.Broadcast(tampered).Code)
	assert.Equal(t, uint32(CodeTxDecode), c.l.Broadcast([]byte{0xff}).Code)
	a, _ := c.l.Account(c.del)
	assert.Equal(t, uint64(0), a.Sequence, "refused transactions consume nothing")

	res := c.l.Broadcast(good)
	require.Equal(t, uint32(0), res.Code, res.Log)
	assert.Equal(t, uint32(CodeTxInCache), c.l.Broadcast(good).Code)
	assert.Equal(t, uint32(CodeWrongSequence), c.l.Broadcast(sign(acct, cosmos.FeeParams{GasLimit: 200_000, Fee: 401})).Code,
		"a rebuild under a consumed sequence cannot land")
	assert.Len(t, c.l.Snapshot().Delegations, 1)
	_, ok := c.l.Tx(cosmos.TxHash(good))
	assert.True(t, ok)
}

func TestLedgerMinimumGasPrice(t *testing.T) {
	// The node's minimum: app.toml's, or with none set celestia-app's default 0.004 utia.
	for _, tc := range []struct {
		nodeMilli      uint64
		under, atLeast string
	}{{2, "399", "400"}, {0, "799", "800"}, {10, "1999", "2000"}} {
		c := newChain(t, time.Now)
		c.l.opts.MinGasPriceMilli = tc.nodeMilli
		// The signer refuses a fee under the minimum gas price: build the transaction by hand.
		in := cosmos.Intent{Operation: cosmos.OpDelegate, Network: cosmos.NetworkMocha, Delegator: c.del, Validator: c.v1, Amount: "1000"}
		body := tx.TxBody{Messages: []tx.Any{tx.MsgDelegate{DelegatorAddress: c.del, ValidatorAddress: c.v1, Amount: tx.Coin{Denom: "utia", Amount: in.Amount}}.Any()}}
		pk := tx.PubKey{Key: c.pub}.Any()
		// In this order: once the second is included, sequence 0 is used and would be refused first.
		for _, c2 := range []struct {
			fee  string
			code uint32
		}{{tc.under, CodeInsufficientFee}, {tc.atLeast, 0}} {
			fee, code := c2.fee, c2.code
			ai := tx.AuthInfo{SignerInfos: []tx.SignerInfo{{PublicKey: &pk, SignMode: tx.SignModeDirect, Sequence: 0}},
				Fee: tx.Fee{Amount: []tx.Coin{{Denom: "utia", Amount: fee}}, GasLimit: 200_000}}
			raw := tx.TxRaw{BodyBytes: body.Marshal(), AuthInfoBytes: ai.Marshal()}
			raw.Signatures = [][]byte{testSign(t, raw.SignDoc("mocha-4", 1).Marshal())}
			assert.Equal(t, code, c.l.Broadcast(raw.Marshal()).Code, "node minimum %d milli-utia, fee %s", tc.nodeMilli, fee)
		}
	}
}

// TestLedgerAnswersCelestiasParameters: the routes a worker proves Celestia's parameters by, in
// the SDK's shapes (cosmos-sdk v0.50.13 proto/cosmos/{staking,auth}/v1beta1/query.proto,
// proto/cosmos/base/node/v1beta1/query.proto) with celestia-app's values (commit 74614c2e).
func TestLedgerAnswersCelestiasParameters(t *testing.T) {
	get := func(l *Ledger, path string) string {
		rec := httptest.NewRecorder()
		l.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusOK, rec.Code, path)
		return rec.Body.String()
	}
	l := New(Options{ChainID: "celestia", UnbondingTime: 337 * time.Hour})
	assert.JSONEq(t, `{"params":{"unbonding_time":"1213200s","max_validators":100,"max_entries":7,"historical_entries":10000,"bond_denom":"utia","min_commission_rate":"0.050000000000000000"}}`,
		get(l, "/cosmos/staking/v1beta1/params"))
	assert.JSONEq(t, `{"bech32_prefix":"celestia"}`, get(l, "/cosmos/auth/v1beta1/bech32"))
	assert.JSONEq(t, `{"minimum_gas_price":"","pruning_keep_recent":"362880","pruning_interval":"10","halt_height":"0"}`,
		get(l, "/cosmos/base/node/v1beta1/config"), "none set in app.toml")
	l = New(Options{ChainID: "celestia", MinGasPriceMilli: 2})
	assert.Contains(t, get(l, "/cosmos/base/node/v1beta1/config"), `"minimum_gas_price":"0.002000000000000000utia"`)
	l = New(Options{ChainID: "celestia", MinGasPriceMilli: 1500})
	assert.Contains(t, get(l, "/cosmos/base/node/v1beta1/config"), `"minimum_gas_price":"1.500000000000000000utia"`)
}
