package hyperliquid

import (
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// Fixed keys: the Hyperliquid Python SDK's test key, and the Web3 Secret Storage example key.
const (
	sdkKey     = "0123456789012345678901234567890123456789012345678901234567890123"
	sdkAddr    = "0x14791697260E4c9A71f18484C9f997B308e59325"
	web3Key    = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	web3Addr   = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
	nonceAtSig = 1764000000000
)

func keyring(t *testing.T, hexKeys ...string) *signerevm.Keyring {
	t.Helper()
	var keys []*ecdsa.PrivateKey
	for _, h := range hexKeys {
		k, err := crypto.HexToECDSA(h)
		require.NoError(t, err)
		keys = append(keys, k)
	}
	return signerevm.KeyringOf(keys...)
}

func signerAt(t *testing.T, now time.Time, p Policy) *Signer {
	s := New(keyring(t, sdkKey, web3Key), p)
	s.now = func() time.Time { return now }
	return s
}

// TestDomainMatchesTheSDKVector signs the Hyperliquid Python SDK's published user-signed vector
// (test_sign_usd_transfer_action: UsdSend of "1" to 0x5e9e...a13a at time 1687816341423, Testnet,
// its test key) under Domain: the SDK's r, s and v come out, so the domain and the hashing are the
// exchange's.
func TestDomainMatchesTheSDKVector(t *testing.T) {
	d, err := Domain(DefaultSignatureChainID)
	require.NoError(t, err)
	td := apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": DomainType,
			"HyperliquidTransaction:UsdSend": {
				{Name: "hyperliquidChain", Type: "string"}, {Name: "destination", Type: "string"},
				{Name: "amount", Type: "string"}, {Name: "time", Type: "uint64"},
			},
		},
		PrimaryType: "HyperliquidTransaction:UsdSend",
		Domain:      d,
		Message: apitypes.TypedDataMessage{"hyperliquidChain": "Testnet", "destination": "0x5e9ee1089755c3435139848e47e6635505d5a13a",
			"amount": "1", "time": big.NewInt(1687816341423)},
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	require.NoError(t, err)
	sig, err := keyring(t, sdkKey).SignDigest(common.HexToAddress(sdkAddr), h)
	require.NoError(t, err)
	assert.Equal(t, "0x637b37dd731507cdd24f46532ca8ba6eec616952c56218baeff04144e4a77073", hexutil.Encode(sig[:32]))
	assert.Equal(t, "0x11a6a24900e6e314136d2592e2f8d502cd89b7c15b198e1bee043c9589f9fad7", hexutil.Encode(sig[32:64]))
	assert.Equal(t, byte(27), sig[64]+27)
}

// TestGoldenSignatures: cWithdraw signatures for fixed keys equal those ethers v6 (an independent
// EIP-712 implementation) computes for the same typed data (signTypedData and
// TypedDataEncoder.hash; testdata/vectors.js), and each recovers its signer.
func TestGoldenSignatures(t *testing.T) {
	for _, c := range []struct {
		name, key, addr, network, amount string
		action                           Action
		digest, r, s                     string
		v                                uint8
	}{
		{"testnet 1.5 HYPE", sdkKey, sdkAddr, "testnet", "1.5",
			Action{Type: TypeCWithdraw, SignatureChainID: "0x66eee", HyperliquidChain: "Testnet", Wei: 150000000, Nonce: 1764000000000},
			"0xc6f8d075a0975319b3854fd05c6e567563bb22dabf5db9d392331dc202b0f839",
			"0xef4d7db06c2ae5fdb6522d371e2402d51d99cef39e2160d90a15f732bacf2f8d", "0x5030d85513625bfc390f5b871eed7862ca0cd55ffd9352d635799c49758b3f60", 27},
		{"mainnet 123456.789 HYPE", web3Key, web3Addr, "mainnet", "123456.789",
			Action{Type: TypeCWithdraw, SignatureChainID: "0x66eee", HyperliquidChain: "Mainnet", Wei: 12345678900000, Nonce: 1764086400123},
			"0x3468e045abe65210e6b97ead4b5cc6bd5a8daf5c742d9e22bd111858d51b7e73",
			"0x06db8f1499363abc4ea1790fed638a4dc1a3146c6d66cf05a05639af3167dee6", "0x17b269b79179bf86183fab6c8f6b7a593f9eb41072e56167acf04fcf1ff3a5e7", 28},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := signerAt(t, time.UnixMilli(int64(c.action.Nonce)), Policy{})
			signed, err := s.Sign(context.Background(), Intent{Network: c.network, Delegator: common.HexToAddress(c.addr), Amount: c.amount}, &Unsigned{Action: c.action})
			require.NoError(t, err)
			assert.Equal(t, c.digest, signed.Digest)
			assert.Equal(t, Signature{R: c.r, S: c.s, V: c.v}, signed.Signature)
			got, err := Recover(c.action, signed.Signature)
			require.NoError(t, err)
			assert.Equal(t, common.HexToAddress(c.addr), got, "the signature recovers the delegator")
			again, err := s.Sign(context.Background(), Intent{Network: c.network, Delegator: common.HexToAddress(c.addr), Amount: c.amount}, &Unsigned{Action: c.action})
			require.NoError(t, err, "the same action signs again")
			assert.Equal(t, signed.Signature, again.Signature, "to the same signature")
		})
	}
}

// TestGoldenDigests: digests of further actions against ethers v6's TypedDataEncoder.hash.
func TestGoldenDigests(t *testing.T) {
	for _, c := range []struct {
		a    Action
		want string
	}{
		{Action{Type: TypeCWithdraw, SignatureChainID: "0x66eee", HyperliquidChain: "Mainnet", Wei: 12345678900000, Nonce: 1764086400123},
			"0x3468e045abe65210e6b97ead4b5cc6bd5a8daf5c742d9e22bd111858d51b7e73"},
		{Action{Type: TypeCWithdraw, SignatureChainID: "0xa4b1", HyperliquidChain: "Mainnet", Wei: 1, Nonce: 1764086400123},
			"0x68a1ec12a53fe154b6a2d71b3c478ee20d77b011ec51b556101645681e7e847e"},
	} {
		d, err := Digest(c.a)
		require.NoError(t, err)
		assert.Equal(t, c.want, d.Hex())
	}
}

func TestWeiOf(t *testing.T) {
	for in, want := range map[string]uint64{"1": 100000000, "1.5": 150000000, "0.00000001": 1, "1e-8": 1, "12.5E2": 125000000000,
		"184467440737.09551615": 18446744073709551615} {
		got, err := WeiOf(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "0", "-1", "0.000000001", "1.000000001", "184467440737.09551616", "0x10", "1/2", "1_000", "+1", ".5", "NaN", "Inf"} {
		_, err := WeiOf(in)
		assert.ErrorIs(t, err, ErrIntent, in)
	}
}

func TestDecode(t *testing.T) {
	action := `{"type":"cWithdraw","hyperliquidChain":"Testnet","signatureChainId":"0x66eee","wei":150000000,"nonce":1764000000000}`
	envelope := `{"action":` + action + `,"nonce":1764000000000,"delegator":"0xabc"}`
	want := Action{Type: TypeCWithdraw, SignatureChainID: "0x66eee", HyperliquidChain: "Testnet", Wei: 150000000, Nonce: 1764000000000}
	for name, in := range map[string]string{
		"bare":            action,
		"envelope":        envelope,
		"base64 envelope": base64.StdEncoding.EncodeToString([]byte(envelope)),
		"base64url bare":  base64.RawURLEncoding.EncodeToString([]byte(action)),
	} {
		u, err := Decode(in)
		require.NoError(t, err, name)
		assert.Equal(t, want, u.Action, name)
	}
	u, err := Decode(`{"type":"withdraw3","hyperliquidChain":"Mainnet","signatureChainId":"0x66eee","destination":"0x1","amount":"1","time":1}`)
	require.NoError(t, err, "another type decodes to its type, which verification names")
	assert.Equal(t, "withdraw3", u.Action.Type)
	for name, in := range map[string]string{
		"empty":          "",
		"hex":            "0x7b7d",
		"array":          "[1]",
		"extra field":    strings.Replace(action, `"wei"`, `"destination":"0x1","wei"`, 1),
		"duplicate":      strings.Replace(action, `"wei":150000000`, `"wei":1,"wei":150000000`, 1),
		"fractional wei": strings.Replace(action, `150000000`, `1.5e8`, 1),
		"string wei":     strings.Replace(action, `150000000`, `"150000000"`, 1),
		"negative nonce": strings.Replace(action, `1764000000000`, `-1`, 1),
		"missing nonce":  strings.Replace(action, `,"nonce":1764000000000`, ``, 1),
		"trailing":       action + "{}",
		"base64 of text": base64.StdEncoding.EncodeToString([]byte("hello")),
	} {
		_, err := Decode(in)
		assert.ErrorIs(t, err, ErrDecode, name)
	}
}

// TestVerifyRefuses: every difference from the intent is refused, naming its field, and nothing
// is signed.
func TestVerifyRefuses(t *testing.T) {
	now := time.UnixMilli(nonceAtSig)
	good := Action{Type: TypeCWithdraw, SignatureChainID: "0x66eee", HyperliquidChain: "Testnet", Wei: 150000000, Nonce: nonceAtSig}
	in := Intent{Network: "testnet", Delegator: common.HexToAddress(sdkAddr), Amount: "1.5"}
	with := func(f func(*Action)) *Unsigned { a := good; f(&a); return &Unsigned{Action: a} }
	for _, c := range []struct {
		name  string
		u     *Unsigned
		in    Intent
		field string
	}{
		{"withdraw3", with(func(a *Action) { a.Type = "withdraw3" }), in, "type"},
		{"usdSend", with(func(a *Action) { a.Type = "usdSend" }), in, "type"},
		{"other chain", with(func(a *Action) { a.HyperliquidChain = "Mainnet" }), in, "hyperliquidChain"},
		{"other wei", with(func(a *Action) { a.Wei = 150000001 }), in, "wei"},
		{"signature chain not listed", with(func(a *Action) { a.SignatureChainID = "0xa4b1" }), in, "signatureChainId"},
		{"signature chain not hex", with(func(a *Action) { a.SignatureChainID = "421614" }), in, "signatureChainId"},
		{"old nonce", with(func(a *Action) { a.Nonce = nonceAtSig - uint64(25*time.Hour/time.Millisecond) }), in, "nonce"},
		{"future nonce", with(func(a *Action) { a.Nonce = nonceAtSig + uint64(2*time.Minute/time.Millisecond) }), in, "nonce"},
		{"envelope nonce differs", &Unsigned{Action: good, Nonce: nonceAtSig + 1}, in, "nonce"},
		{"nonce used before", &Unsigned{Action: good}, Intent{Network: "testnet", Delegator: in.Delegator, Amount: "1.5", UsedNonces: []uint64{nonceAtSig}}, "nonce"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := signerAt(t, now, Policy{})
			signed, err := s.Sign(context.Background(), c.in, c.u)
			require.Nil(t, signed)
			var ve *VerificationError
			require.True(t, errors.As(err, &ve), "%v", err)
			assert.Equal(t, c.field, ve.Field)
			assert.ErrorIs(t, err, ErrVerification)
		})
	}
	t.Run("listed signature chain", func(t *testing.T) {
		s := signerAt(t, now, Policy{SignatureChainIDs: []string{"0x66eee", "0xA4B1"}})
		_, err := s.Sign(context.Background(), in, with(func(a *Action) { a.SignatureChainID = "0xa4b1" }))
		require.NoError(t, err)
	})
	t.Run("nonce signed for another action by this key", func(t *testing.T) {
		s := signerAt(t, now, Policy{})
		_, err := s.Sign(context.Background(), in, &Unsigned{Action: good})
		require.NoError(t, err)
		_, err = s.Sign(context.Background(), Intent{Network: "testnet", Delegator: in.Delegator, Amount: "2"}, with(func(a *Action) { a.Wei = 200000000 }))
		var ve *VerificationError
		require.True(t, errors.As(err, &ve), "%v", err)
		assert.Equal(t, "nonce", ve.Field)
	})
	t.Run("unknown key", func(t *testing.T) {
		s := signerAt(t, now, Policy{})
		_, err := s.Sign(context.Background(), Intent{Network: "testnet", Delegator: common.HexToAddress("0x1111111111111111111111111111111111111111"), Amount: "1.5"}, &Unsigned{Action: good})
		assert.ErrorIs(t, err, signerevm.ErrUnknownKey)
	})
	t.Run("amount not representable", func(t *testing.T) {
		s := signerAt(t, now, Policy{})
		_, err := s.Sign(context.Background(), Intent{Network: "testnet", Delegator: in.Delegator, Amount: "1.500000001"}, &Unsigned{Action: good})
		assert.ErrorIs(t, err, ErrIntent)
	})
}

func ExampleWeiOf() {
	w, _ := WeiOf("2.5")
	fmt.Println(w)
	// Output: 250000000
}

// TestVerifyRefusesAnAnswerThatContradictsItself: endpoint 6's echoed amount against its action's
// wei. An answer whose action matches the intent but whose amount says otherwise (or the reverse,
// or an amount that is no exact HYPE amount) is refused whole, naming both values, and nothing is
// signed; an echo that agrees signs.
func TestVerifyRefusesAnAnswerThatContradictsItself(t *testing.T) {
	now := time.UnixMilli(nonceAtSig)
	good := Action{Type: TypeCWithdraw, SignatureChainID: "0x66eee", HyperliquidChain: "Testnet", Wei: 150000000, Nonce: nonceAtSig}
	intent := func(echoed string) Intent {
		return Intent{Network: "testnet", Delegator: common.HexToAddress(sdkAddr), Amount: "1.5", EchoedAmount: echoed}
	}
	for _, c := range []struct {
		name, echoed string
		wei          uint64
		want         []string
	}{
		// The action is as asked (1.5 HYPE); the answer's amount says 15.
		{"amount differs, action as asked", "15", 150000000, []string{`its amount "15"`, "its action's wei 150000000 (1.5 HYPE)", "the amount is 1500000000 wei"}},
		// The amount is as asked; the action moves one wei more.
		{"action differs, amount as asked", "1.5", 150000001, []string{`its amount "1.5"`, "its action's wei 150000001 (1.50000001 HYPE)", "the amount is 150000000 wei"}},
		{"amount not exact", "1.500000001", 150000000, []string{`its amount "1.500000001"`, "its action's wei 150000000", "not an exact HYPE amount"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := signerAt(t, now, Policy{})
			a := good
			a.Wei = c.wei
			signed, err := s.Sign(context.Background(), intent(c.echoed), &Unsigned{Action: a})
			require.Nil(t, signed)
			var ce *ContradictionError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.ErrorIs(t, err, ErrVerification)
			for _, w := range append(c.want, "contradicts itself", "nothing was signed") {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	t.Run("echo agrees", func(t *testing.T) {
		s := signerAt(t, now, Policy{})
		for _, echoed := range []string{"1.5", "1.50", "1.5000"} {
			_, err := s.Sign(context.Background(), intent(echoed), &Unsigned{Action: good})
			require.NoError(t, err, echoed)
		}
	})
}
