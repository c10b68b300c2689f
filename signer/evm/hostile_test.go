package evm

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
)

// TestHostileTransactionsRefused starts from ethers' valid transactions and changes one thing;
// each change must be refused, naming the field, and nothing signed.
func TestHostileTransactionsRefused(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	share7 := common.HexToAddress(v.ValidatorShare)
	gwei := func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.GWei)) }
	pack := func(method string, args ...any) []byte {
		b, err := ABI().Pack(method, args...)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	e18 := big.NewInt(params.Ether)
	cases := []struct {
		name   string
		vector string
		change func(dt *types.DynamicFeeTx) // on the vector's transaction
		raw    func(good []byte) []byte     // or on its bytes
		intent func(in *Intent)             // or on the intent
		field  string                       // the field named
		want   string                       // in the message
	}{
		{name: "approve unlimited", vector: "approve", field: "approve amount", want: "2^256-1 (unlimited)",
			change: func(dt *types.DynamicFeeTx) {
				dt.Data = pack(MethodApprove, common.HexToAddress(v.StakeManager), math.MaxBig256)
			}},
		{name: "approve more than asked", vector: "approve", field: "approve amount", want: "1000000000000000001 wei",
			change: func(dt *types.DynamicFeeTx) {
				dt.Data = pack(MethodApprove, common.HexToAddress(v.StakeManager), new(big.Int).Add(e18, big.NewInt(1)))
			}},
		{name: "approve to a stranger", vector: "approve", field: "approve spender", want: stranger.Hex() + " (not on the allow-list)",
			change: func(dt *types.DynamicFeeTx) { dt.Data = pack(MethodApprove, stranger, e18) }},
		{name: "approve sent to another token", vector: "approve", field: "to", want: "(POL token)",
			change: func(dt *types.DynamicFeeTx) { dt.To = &stranger }},
		{name: "other validator share", vector: "delegate", field: "to", want: "(validator share of validator 9)",
			change: func(dt *types.DynamicFeeTx) { dt.To = &otherShare }},
		{name: "share off the allow-list", vector: "delegate", field: "to", want: "(not on the allow-list)",
			change: func(dt *types.DynamicFeeTx) { dt.To = &stranger }},
		{name: "intent naming a share off the allow-list", vector: "delegate", field: "validator share", want: "allow-list",
			intent: func(in *Intent) { in.ValidatorShare = stranger }},
		{name: "other delegate amount", vector: "delegate", field: "delegate amount", want: "2000000000000000000 wei",
			change: func(dt *types.DynamicFeeTx) {
				dt.Data = pack(MethodBuyVoucherPOL, new(big.Int).Mul(e18, big.NewInt(2)), big.NewInt(995e15))
			}},
		{name: "other unstake amount", vector: "unstake", field: "unstake claimAmount", want: "1 wei",
			change: func(dt *types.DynamicFeeTx) {
				dt.Data = pack(MethodSellVoucherNewPOL, big.NewInt(1), big.NewInt(5025e14))
			}},
		{name: "minSharesToMint below slippage", vector: "delegate", field: "minSharesToMint", want: "994999999999999999",
			change: func(dt *types.DynamicFeeTx) { dt.Data = pack(MethodBuyVoucherPOL, e18, big.NewInt(994999999999999999)) }},
		{name: "minSharesToMint of zero", vector: "delegate", field: "minSharesToMint", want: "got 0",
			change: func(dt *types.DynamicFeeTx) { dt.Data = pack(MethodBuyVoucherPOL, e18, big.NewInt(0)) }},
		{name: "maximumSharesToBurn above slippage", vector: "unstake", field: "maximumSharesToBurn", want: "502500000000000001",
			change: func(dt *types.DynamicFeeTx) {
				dt.Data = pack(MethodSellVoucherNewPOL, big.NewInt(5e17), big.NewInt(502500000000000001))
			}},
		{name: "other unbond nonce", vector: "claim", field: "unbondNonce", want: "want 7, got 8",
			change: func(dt *types.DynamicFeeTx) { dt.Data = pack(MethodUnstakeClaimTokensNewPOL, big.NewInt(8)) }},
		{name: "other method on the share", vector: "delegate", field: "selector", want: "got sellVoucher_newPOL (0xe570b78b)",
			change: func(dt *types.DynamicFeeTx) { dt.Data = pack(MethodSellVoucherNewPOL, e18, big.NewInt(995e15)) }},
		{name: "unknown method", vector: "restake", field: "selector", want: "unknown method (0xdeadbeef)",
			change: func(dt *types.DynamicFeeTx) { dt.Data = []byte{0xde, 0xad, 0xbe, 0xef} }},
		{name: "other chainId", vector: "delegate", field: "chainId", want: "got 137",
			change: func(dt *types.DynamicFeeTx) { dt.ChainID = big.NewInt(137) }},
		{name: "value sent", vector: "delegate", field: "value", want: "got 1 wei",
			change: func(dt *types.DynamicFeeTx) { dt.Value = big.NewInt(1) }},
		{name: "maxFeePerGas above cap", vector: "delegate", field: "maxFeePerGas", want: "(the policy's cap)",
			change: func(dt *types.DynamicFeeTx) { dt.GasFeeCap = gwei(201) }},
		{name: "gas limit above cap", vector: "delegate", field: "gas limit", want: "at most 500000",
			change: func(dt *types.DynamicFeeTx) { dt.Gas = 500_001 }},
		{name: "total fee above cap", vector: "delegate", field: "max total fee", want: "at most 20000000000000000 wei",
			change: func(dt *types.DynamicFeeTx) { dt.GasFeeCap = gwei(100) }}, // 100 gwei × 350,000 = 0.035 ether
		{name: "tip above fee cap", vector: "delegate", field: "maxPriorityFeePerGas", want: "at most maxFeePerGas",
			change: func(dt *types.DynamicFeeTx) { dt.GasTipCap = gwei(31) }},
		{name: "fees other than the intent's", vector: "delegate", field: "maxFeePerGas", want: "(the intent's)",
			intent: func(in *Intent) { in.MaxFeePerGas = gwei(29) }},
		{name: "extra calldata", vector: "delegate", field: "calldata", want: "32 extra after the arguments",
			change: func(dt *types.DynamicFeeTx) { dt.Data = append(append([]byte{}, dt.Data...), make([]byte, 32)...) }},
		{name: "extra calldata on a call without arguments", vector: "withdraw-rewards", field: "calldata", want: "1 extra",
			change: func(dt *types.DynamicFeeTx) { dt.Data = append(append([]byte{}, dt.Data...), 0) }},
		{name: "dirty padding of the spender", vector: "approve", field: "data", want: "0x095ea7b3000000000000000000000001",
			change: func(dt *types.DynamicFeeTx) { dt.Data = append([]byte{}, dt.Data...); dt.Data[4+11] = 1 }},
		{name: "access list", vector: "delegate", field: "access list", want: "got 1 entries",
			change: func(dt *types.DynamicFeeTx) { dt.AccessList = types.AccessList{{Address: stranger}} }},
		{name: "legacy type", vector: "delegate", field: "type", want: "got 0 (legacy",
			raw: func([]byte) []byte {
				b, err := types.NewTx(&types.LegacyTx{Nonce: 1, GasPrice: gwei(30), Gas: 350_000, To: &share7,
					Value: new(big.Int), Data: pack(MethodBuyVoucherPOL, e18, big.NewInt(995e15))}).MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				return b
			}},
		{name: "access-list type", vector: "delegate", field: "type", want: "got 1 (EIP-2930",
			raw: func(good []byte) []byte { return append([]byte{types.AccessListTxType}, good[1:]...) }},
		{name: "wrong nonce", vector: "delegate", field: "nonce", want: "want 1 (the lease's), got 2",
			change: func(dt *types.DynamicFeeTx) { dt.Nonce = 2 }},
		{name: "contract creation", vector: "delegate", field: "to", want: "got none (contract creation)",
			change: func(dt *types.DynamicFeeTx) { dt.To = nil }},
		{name: "already signed", vector: "delegate", field: "signature", want: "v=1",
			raw: func(good []byte) []byte {
				d, err := decodeUnsigned(good)
				if err != nil {
					t.Fatal(err)
				}
				sig := make([]byte, 65) // r = 1, s = 1, v = 1
				sig[31], sig[63], sig[64] = 1, 1, 1
				tx, err := d.tx.WithSignature(types.NewLondonSigner(big.NewInt(1)), sig)
				if err != nil {
					t.Fatal(err)
				}
				b, err := tx.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				return b
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := v.vector(t, c.vector)
			good := mustHex(t, x.Unsigned)
			raw := good
			switch {
			case c.change != nil:
				dt := dynamicOf(t, good)
				c.change(dt)
				raw = payloadBytes(t, dt)
			case c.raw != nil:
				raw = c.raw(good)
			}
			in := intentFor(t, v, x, false)
			if c.intent != nil {
				c.intent(&in)
			}
			signed, err := s.Sign(context.Background(), in, raw)
			if signed != nil {
				t.Fatalf("signed: %+v", signed)
			}
			ve := asVerification(t, err)
			t.Log(err)
			if ve.Field != c.field || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("refused with field %q: %v\nwant field %q and %q in the message", ve.Field, err, c.field, c.want)
			}
		})
	}
}

// TestDecodeRefusals covers bytes that are no transaction: refused as undecodable, nothing signed.
func TestDecodeRefusals(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	x := v.vector(t, "delegate")
	good := mustHex(t, x.Unsigned)
	for name, raw := range map[string][]byte{
		"empty":           nil,
		"type byte alone": {types.DynamicFeeTxType},
		"trailing byte":   append(append([]byte{}, good...), 0),
		"truncated":       good[:len(good)-1],
		"RLP string":      {0x83, 1, 2, 3},
	} {
		t.Run(name, func(t *testing.T) {
			signed, err := s.Sign(context.Background(), intentFor(t, v, x, false), raw)
			if signed != nil || !errors.Is(err, ErrDecode) {
				t.Fatalf("got %v, %v; want ErrDecode", signed, err)
			}
		})
	}
}

// TestIntentRefusals covers intents that cannot be checked.
func TestIntentRefusals(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	cases := map[string]struct {
		vector string
		change func(in *Intent)
	}{
		"unknown operation":       {"delegate", func(in *Intent) { in.Operation = "transfer" }},
		"other chain":             {"delegate", func(in *Intent) { in.ChainID = 137 }},
		"no amount":               {"delegate", func(in *Intent) { in.Amount = nil }},
		"no expected shares":      {"unstake", func(in *Intent) { in.ExpectedShares = nil }},
		"no unbond nonce":         {"claim", func(in *Intent) { in.UnbondNonce = big.NewInt(0) }},
		"approve naming a share":  {"approve", func(in *Intent) { in.ValidatorShare = otherShare }},
		"approve unlimited asked": {"approve", func(in *Intent) { in.Amount = math.MaxBig256 }},
		"amount on restake":       {"restake", func(in *Intent) { in.Amount = big.NewInt(1) }},
		"burn bound on delegate":  {"delegate", func(in *Intent) { in.MaximumSharesToBurn = big.NewInt(1) }},
		"amount over uint256":     {"delegate", func(in *Intent) { in.Amount = new(big.Int).Lsh(big.NewInt(1), 256) }},
		"negative amount":         {"delegate", func(in *Intent) { in.Amount = big.NewInt(-1) }},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			x := v.vector(t, c.vector)
			in := intentFor(t, v, x, false)
			c.change(&in)
			signed, err := s.Sign(context.Background(), in, mustHex(t, x.Unsigned))
			if signed != nil || !errors.Is(err, ErrIntent) {
				t.Fatalf("got %v, %v; want ErrIntent", signed, err)
			}
		})
	}
}

// TestSignUnknownStakerAndCancelled covers a staker without a key and a cancelled context.
func TestSignUnknownStakerAndCancelled(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	x := v.vector(t, "delegate")
	in := intentFor(t, v, x, false)
	in.Staker = stranger
	if _, err := s.Sign(context.Background(), in, mustHex(t, x.Unsigned)); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), stranger.Hex()) {
		t.Fatalf("got %v, want ErrUnknownKey naming %s", err, stranger.Hex())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if signed, err := s.Sign(ctx, intentFor(t, v, x, false), mustHex(t, x.Unsigned)); signed != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, %v; want context.Canceled", signed, err)
	}
}

// TestPolicyRefusals covers policies New refuses.
func TestPolicyRefusals(t *testing.T) {
	v := loadVectors(t)
	for name, change := range map[string]func(p *Policy){
		"no chain":         func(p *Policy) { p.ChainID = 0 },
		"no token":         func(p *Policy) { p.POLToken = common.Address{} },
		"no stake manager": func(p *Policy) { p.StakeManager = common.Address{} },
		"share listed twice": func(p *Policy) {
			p.ValidatorShares = append(p.ValidatorShares, ValidatorShare{ValidatorID: 8, Address: otherShare})
		},
		"share is the token":  func(p *Policy) { p.ValidatorShares[0].Address = p.POLToken },
		"slippage over 100%":  func(p *Policy) { p.SlippageBps = 10_001 },
		"zero share address":  func(p *Policy) { p.ValidatorShares[1].Address = common.Address{} },
		"negative total cap":  func(p *Policy) { p.MaxTotalFee = big.NewInt(-1) },
		"token is the holder": func(p *Policy) { p.StakeManager = p.POLToken },
	} {
		t.Run(name, func(t *testing.T) {
			p := testPolicy(v)
			change(&p)
			if _, err := New(nil, p); !errors.Is(err, ErrPolicy) {
				t.Fatalf("got %v, want ErrPolicy", err)
			}
		})
	}
}
