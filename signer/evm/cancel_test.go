package evm

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// Golden cancel: a zero-value self-transfer of the vectors' key (0xf39F…2266) on chain 1, nonce 7,
// maxPriorityFeePerGas 2.2 gwei, maxFeePerGas 33 gwei, gas 21000, signed with go-ethereum's
// types.SignTx under types.LatestSignerForChainID(1) outside this package's code.
const (
	goldenCancelUnsigned = "0x02eb010784832156008507aef40a0082520894f39fd6e51aad88f6f4ce6ab8827279cfffb922668080c0808080"
	goldenCancelSigned   = "0x02f86b010784832156008507aef40a0082520894f39fd6e51aad88f6f4ce6ab8827279cfffb922668080c080a025512156fd85a7d3fe7c8cd60ad5d45900702b9c063e28c26074f867c7cf8fc2a0510eb01d88490530893d13257ed8d060a16477311e4a442dad5023d8a35373c2"
	goldenCancelHash     = "0x5fccf8d011dbed5b9236fddf8edaaa35a8bbceda608ce8e6a8ecbc6aff731c6f"
)

func goldenCancel(v *ethersVectors) CancelIntent {
	return CancelIntent{ChainID: 1, Staker: common.HexToAddress(v.Key.Address), Nonce: 7,
		MaxFeePerGas: big.NewInt(33_000_000_000), MaxPriorityFeePerGas: big.NewInt(2_200_000_000),
		PrevMaxFeePerGas: big.NewInt(30_000_000_000), PrevMaxPriorityFeePerGas: big.NewInt(2_000_000_000)}
}

func TestCancelBuildsAndSignsTheGoldenSelfTransfer(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	in := goldenCancel(v)
	raw, err := CancelTx(1, in).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := hexutil.Encode(raw); got != goldenCancelUnsigned {
		t.Fatalf("unsigned cancel %s, want go-ethereum's %s", got, goldenCancelUnsigned)
	}
	signed, err := s.SignCancel(context.Background(), in, raw)
	if err != nil {
		t.Fatal(err)
	}
	if signed.Transaction != goldenCancelSigned || signed.Hash.Hex() != goldenCancelHash {
		t.Fatalf("signed %s (hash %s), want %s (hash %s)", signed.Transaction, signed.Hash.Hex(), goldenCancelSigned, goldenCancelHash)
	}
	if signed.Nonce != 7 || signed.MaxFee.Cmp(big.NewInt(33_000_000_000*21000)) != 0 || signed.Sender != in.Staker {
		t.Fatalf("signed %+v", signed)
	}
	// The signing-payload form of the same transaction is accepted too.
	p := payloadBytes(t, dynamicOf(t, raw))
	if _, err := s.VerifyCancel(in, p); err != nil {
		t.Fatalf("payload form refused: %v", err)
	}
}

// Anything but the exact harmless self-transfer is refused, the field named, nothing signed.
func TestCancelVerificationRefusesAnythingElse(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	in := goldenCancel(v)
	other := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	base := func() *types.DynamicFeeTx { return dynamicOf(t, mustHex(t, goldenCancelUnsigned)) }
	for _, c := range []struct {
		name  string
		edit  func(*types.DynamicFeeTx)
		field string
	}{
		{"to another address", func(d *types.DynamicFeeTx) { d.To = &other }, "to"},
		{"a value", func(d *types.DynamicFeeTx) { d.Value = big.NewInt(1) }, "value"},
		{"data", func(d *types.DynamicFeeTx) { d.Data = []byte{0x01} }, "data"},
		{"another nonce", func(d *types.DynamicFeeTx) { d.Nonce = 8 }, "nonce"},
		{"another chain", func(d *types.DynamicFeeTx) { d.ChainID = big.NewInt(137) }, "chainId"},
		{"more gas", func(d *types.DynamicFeeTx) { d.Gas = 21001 }, "gas limit"},
		{"other fees", func(d *types.DynamicFeeTx) { d.GasFeeCap = big.NewInt(34_000_000_000) }, "maxFeePerGas"},
	} {
		d := base()
		c.edit(d)
		_, err := s.SignCancel(context.Background(), in, payloadBytes(t, d))
		if ve := asVerification(t, err); ve.Field != c.field {
			t.Errorf("%s: refused on %q, want %q (%v)", c.name, ve.Field, c.field, err)
		}
	}
	raw := mustHex(t, goldenCancelUnsigned)

	under := in
	under.PrevMaxFeePerGas = big.NewInt(30_000_000_001) // 33 gwei is less than 10% over it
	if ve := asVerification(t, func() error { _, err := s.SignCancel(context.Background(), under, raw); return err }()); ve.Field != "maxFeePerGas" {
		t.Errorf("a fee bump under 10%% refused on %q", ve.Field)
	}
	under = in
	under.PrevMaxPriorityFeePerGas = big.NewInt(2_000_000_001)
	if ve := asVerification(t, func() error { _, err := s.SignCancel(context.Background(), under, raw); return err }()); ve.Field != "maxPriorityFeePerGas" {
		t.Errorf("a tip bump under 10%% refused on %q", ve.Field)
	}

	capped := testPolicy(v)
	capped.MaxFeePerGas = big.NewInt(32_000_000_000)
	cs, err := New(s.backend.(*Keyring), capped)
	if err != nil {
		t.Fatal(err)
	}
	if ve := asVerification(t, func() error { _, err := cs.SignCancel(context.Background(), in, raw); return err }()); ve.Field != "maxFeePerGas" {
		t.Errorf("a fee over the policy's cap refused on %q", ve.Field)
	}

	wrongChain := in
	wrongChain.ChainID = 137
	if _, err := s.SignCancel(context.Background(), wrongChain, raw); !errors.Is(err, ErrIntent) {
		t.Errorf("an intent for another chain: %v", err)
	}
	stranger := in
	stranger.Staker = other
	if _, err := s.SignCancel(context.Background(), stranger, raw); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("a staker without a key: %v", err)
	}
}
