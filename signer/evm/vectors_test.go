package evm

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// TestABISelectorsMatchEthers pins the ABI's method ids to ethers' and to the selectors the
// Polygon contracts publish.
func TestABISelectorsMatchEthers(t *testing.T) {
	v := loadVectors(t)
	published := map[string]string{
		MethodApprove: "0x095ea7b3", MethodBuyVoucherPOL: "0xe4457a8a", MethodSellVoucherNewPOL: "0xe570b78b",
		MethodUnstakeClaimTokensNewPOL: "0x8759c234", MethodWithdrawRewardsPOL: "0xe0db556b", MethodRestakePOL: "0x9ad5f5a4",
	}
	a := ABI()
	if len(a.Methods) != len(published) {
		t.Errorf("ABI has %d methods, want %d", len(a.Methods), len(published))
	}
	for name, sel := range published {
		m, ok := a.Methods[name]
		if !ok {
			t.Errorf("ABI lacks %s", name)
			continue
		}
		if got := hexutil.Encode(m.ID); got != sel || got != v.Selectors[name] {
			t.Errorf("%s: selector %s, published %s, ethers %s", name, got, sel, v.Selectors[name])
		}
	}
}

// TestEthersVectors requires, for every operation, that go-ethereum's abi packs ethers'
// calldata, that the expected transaction encodes to ethers' unsigned bytes with ethers' signing
// hash, and that Sign accepts ethers' unsigned transaction (in both unsigned forms) and produces
// ethers' signed bytes, hash and sender.
func TestEthersVectors(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	seen := map[Operation]bool{}
	for _, x := range v.Vectors {
		t.Run(x.Name, func(t *testing.T) {
			in := intentFor(t, v, x, false)
			seen[in.Operation] = true
			args := make([]any, len(x.Args))
			for i, a := range x.Args {
				if strings.HasPrefix(a, "0x") {
					args[i] = common.HexToAddress(a)
				} else {
					args[i] = bigOf(t, a)
				}
			}
			data, err := ABI().Pack(x.Method, args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := hexutil.Encode(data); got != x.Calldata {
				t.Fatalf("calldata\n got %s\nwant %s (ethers)", got, x.Calldata)
			}

			unsigned := mustHex(t, x.Unsigned)
			ver, err := s.Verify(in, unsigned)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			enc, err := encodeIn(ver.tx, formPayload)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, unsigned) {
				t.Fatalf("expected unsigned\n got %x\nwant %x (ethers)", enc, unsigned)
			}
			if h := types.NewLondonSigner(ver.tx.ChainId()).Hash(ver.tx); h.Hex() != x.UnsignedHash {
				t.Fatalf("signing hash %s, ethers %s", h.Hex(), x.UnsignedHash)
			}

			zeroSig, err := ver.tx.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			for _, form := range []struct {
				name string
				raw  []byte
			}{{"ethers signing payload", unsigned}, {"go-ethereum empty signature", zeroSig}} {
				for _, pinned := range []bool{false, true} {
					signed, err := s.Sign(context.Background(), intentFor(t, v, x, pinned), form.raw)
					if err != nil {
						t.Fatalf("%s (pinned %v): Sign: %v", form.name, pinned, err)
					}
					if signed.Transaction != x.Signed {
						t.Fatalf("%s: signed\n got %s\nwant %s (ethers)", form.name, signed.Transaction, x.Signed)
					}
					if signed.Hash.Hex() != x.Hash || signed.Sender.Hex() != x.From {
						t.Fatalf("%s: hash %s sender %s, ethers %s %s", form.name, signed.Hash.Hex(), signed.Sender.Hex(), x.Hash, x.From)
					}
					want := bigOf(t, x.Tx.MaxFeePerGas)
					want.Mul(want, bigOf(t, x.Tx.GasLimit))
					if signed.MaxFee.Cmp(want) != 0 || signed.Nonce != in.Nonce {
						t.Fatalf("max fee %s nonce %d, want %s %d", signed.MaxFee, signed.Nonce, want, in.Nonce)
					}
				}
			}
		})
	}
	for _, op := range []Operation{OpApprove, OpDelegate, OpUnstake, OpClaim, OpWithdrawRewards, OpRestake} {
		if !seen[op] {
			t.Errorf("no vector for %s", op)
		}
	}
}

// TestUnlimitedApproveVectorRefused feeds ethers' unlimited approve calldata through Sign.
func TestUnlimitedApproveVectorRefused(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	x := v.vector(t, "approve")
	dt := dynamicOf(t, mustHex(t, x.Unsigned))
	dt.Data = mustHex(t, v.Unlimited)
	signed, err := s.Sign(context.Background(), intentFor(t, v, x, false), payloadBytes(t, dt))
	ve := asVerification(t, err)
	if signed != nil || ve.Field != "approve amount" || !strings.Contains(ve.Got, "unlimited") {
		t.Fatalf("got %v, %v", signed, err)
	}
}
