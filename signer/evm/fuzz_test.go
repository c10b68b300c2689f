package evm

import (
	"bytes"
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rlp"
)

// FuzzVerifyEVM starts from a valid unsigned transaction of one of ethers' vectors and its
// intent, and mutates it: the fuzzer changes the bytes, and then one field of the decoded
// transaction is set to a fuzzed value. The oracle, with every builder choice pinned in the
// intent: Sign accepts exactly when the input is the expected transaction, in one of its two
// unsigned forms, and then produces ethers' signed bytes. With the choices left to the builder,
// whatever Sign accepts must be the vector's transaction with only the gas limit, the fees and
// the shares bound changed, each within the policy.
func FuzzVerifyEVM(f *testing.F) {
	v := loadVectors(f)
	s := testSigner(f, v)
	for i, x := range v.Vectors {
		f.Add(uint8(i), mustHex(f, x.Unsigned), uint8(255), uint64(0))
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte, field uint8, value uint64) {
		x := v.Vectors[int(which)%len(v.Vectors)]
		good := mustHex(t, x.Unsigned)
		var p payload
		if field < 9 && len(raw) > 0 && raw[0] == types.DynamicFeeTxType && rlp.DecodeBytes(raw[1:], &p) == nil {
			mutateField(&p, field, value)
			b, err := rlp.EncodeToBytes(&p)
			if err != nil {
				return
			}
			raw = append([]byte{types.DynamicFeeTxType}, b...)
		}
		goodTx, err := decodeUnsigned(good)
		if err != nil {
			t.Fatal(err)
		}
		goodZero, err := goodTx.tx.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		expected := bytes.Equal(raw, good) || bytes.Equal(raw, goodZero)

		signed, err := s.Sign(context.Background(), intentFor(t, v, x, true), raw)
		switch {
		case expected && err != nil:
			t.Fatalf("the expected transaction was refused: %v", err)
		case expected && signed.Transaction != x.Signed:
			t.Fatalf("signed %s, ethers %s", signed.Transaction, x.Signed)
		case !expected && err == nil:
			t.Fatalf("signed a transaction that is not the expected one: %x", raw)
		}

		signed, err = s.Sign(context.Background(), intentFor(t, v, x, false), raw)
		if err != nil {
			return
		}
		ver, err := s.Verify(intentFor(t, v, x, false), raw)
		if err != nil {
			t.Fatalf("Sign accepted what Verify refuses: %v", err)
		}
		// The accepted transaction is the vector's with only the builder's choices changed.
		want := dynamicOf(t, good)
		want.Gas, want.GasFeeCap, want.GasTipCap = ver.GasLimit, ver.MaxFeePerGas, ver.MaxPriorityFeePerGas
		if ver.SharesBound != nil {
			args := []any{bigOf(t, x.Args[0]), ver.SharesBound}
			want.Data, err = ABI().Pack(x.Method, args...)
			if err != nil {
				t.Fatal(err)
			}
		}
		wantTx := types.NewTx(want)
		got := new(types.Transaction)
		if err := got.UnmarshalBinary(mustHex(t, signed.Transaction)); err != nil {
			t.Fatal(err)
		}
		if types.NewLondonSigner(big.NewInt(1)).Hash(got) != types.NewLondonSigner(big.NewInt(1)).Hash(wantTx) {
			t.Fatalf("accepted a transaction other than the vector's with new choices: %x", raw)
		}
		pol := s.Policy()
		total := new(big.Int).Mul(ver.MaxFeePerGas, new(big.Int).SetUint64(ver.GasLimit))
		if ver.GasLimit > pol.MaxGasLimit || ver.MaxFeePerGas.Cmp(pol.MaxFeePerGas) > 0 || total.Cmp(pol.MaxTotalFee) > 0 ||
			ver.MaxPriorityFeePerGas.Cmp(ver.MaxFeePerGas) > 0 {
			t.Fatalf("accepted choices over the policy: gas %d fee %s tip %s", ver.GasLimit, ver.MaxFeePerGas, ver.MaxPriorityFeePerGas)
		}
	})
}

// mutateField sets field i (in RLP order) of p to a value derived from value.
func mutateField(p *payload, i uint8, value uint64) {
	b := new(big.Int).SetUint64(value)
	switch i {
	case 0:
		p.ChainID = b
	case 1:
		p.Nonce = value
	case 2:
		p.GasTipCap = b
	case 3:
		p.GasFeeCap = b
	case 4:
		p.Gas = value
	case 5:
		if value == 0 {
			p.To = nil
		} else {
			to := *p.To
			to[value%20] ^= byte(value >> 8)
			p.To = &to
		}
	case 6:
		p.Value = b
	case 7:
		d := append([]byte{}, p.Data...)
		if len(d) > 0 {
			d[int(value)%len(d)] ^= byte(value >> 8)
		}
		p.Data = d
	case 8:
		if value%2 == 1 {
			p.AccessList = types.AccessList{{}}
		}
	}
}
