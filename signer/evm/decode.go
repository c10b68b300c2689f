package evm

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rlp"
)

// form is the shape an unsigned type-2 transaction arrived in.
type form uint8

const (
	// formPayload is 0x02 || rlp([chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gas, to,
	// value, data, accessList]): the signing payload, as ethers (unsignedSerialized), viem and
	// web3.js serialize an unsigned transaction.
	formPayload form = iota + 1
	// formZeroSignature is the full transaction with v, r and s all 0, as go-ethereum's
	// MarshalBinary encodes an unsigned transaction.
	formZeroSignature
)

func (f form) String() string {
	if f == formPayload {
		return "signing payload (9 fields)"
	}
	return "transaction with an empty signature (12 fields)"
}

// payload is the RLP list of a type-2 signing payload, decoded with go-ethereum's rlp package.
type payload struct {
	ChainID    *big.Int
	Nonce      uint64
	GasTipCap  *big.Int
	GasFeeCap  *big.Int
	Gas        uint64
	To         *common.Address `rlp:"nil"`
	Value      *big.Int
	Data       []byte
	AccessList types.AccessList
}

// decoded is an unsigned transaction as received.
type decoded struct {
	tx   *types.Transaction // v, r, s are 0
	form form
	raw  []byte
}

// txTypeNames names the EIP-2718 transaction types.
var txTypeNames = map[byte]string{
	types.LegacyTxType:     "legacy",
	types.AccessListTxType: "EIP-2930 access list",
	types.DynamicFeeTxType: "EIP-1559",
	types.BlobTxType:       "EIP-4844 blob",
	types.SetCodeTxType:    "EIP-7702 set code",
}

// decodeUnsigned decodes the binary encoding of an unsigned type-2 transaction, in either form.
// Any other type is a verification failure named "type"; a signed transaction one named
// "signature". go-ethereum's rlp decoder refuses non-canonical encodings and trailing bytes.
func decodeUnsigned(b []byte) (*decoded, error) {
	if len(b) == 0 {
		return nil, decodeErr("empty transaction")
	}
	want := fmt.Sprintf("%d (%s)", types.DynamicFeeTxType, txTypeNames[types.DynamicFeeTxType])
	switch t := b[0]; {
	case t >= 0xc0:
		return nil, mismatch("type", want, fmt.Sprintf("%d (legacy: an RLP list, no type byte)", types.LegacyTxType))
	case t >= 0x80:
		return nil, decodeErr("first byte %#02x is neither a transaction type nor an RLP list", t)
	case t != types.DynamicFeeTxType:
		name, ok := txTypeNames[t]
		if !ok {
			name = "unknown"
		}
		return nil, mismatch("type", want, fmt.Sprintf("%d (%s)", t, name))
	}
	var p payload
	errPayload := rlp.DecodeBytes(b[1:], &p)
	if errPayload == nil {
		tx := types.NewTx(&types.DynamicFeeTx{
			ChainID: p.ChainID, Nonce: p.Nonce, GasTipCap: p.GasTipCap, GasFeeCap: p.GasFeeCap,
			Gas: p.Gas, To: p.To, Value: p.Value, Data: p.Data, AccessList: p.AccessList,
		})
		return &decoded{tx: tx, form: formPayload, raw: b}, nil
	}
	tx := new(types.Transaction)
	errTx := tx.UnmarshalBinary(b)
	if errTx != nil {
		return nil, decodeErr("not a type-2 transaction, neither as the 9-field signing payload (%v) nor as the 12-field transaction (%v)", errPayload, errTx)
	}
	if v, r, s := tx.RawSignatureValues(); v.Sign() != 0 || r.Sign() != 0 || s.Sign() != 0 {
		return nil, mismatch("signature", "none (an unsigned transaction: v, r and s all 0)", fmt.Sprintf("v=%s r=%#x s=%#x", v, r, s))
	}
	return &decoded{tx: tx, form: formZeroSignature, raw: b}, nil
}

// encodeIn encodes tx, unsigned, in form f.
func encodeIn(tx *types.Transaction, f form) ([]byte, error) {
	if f == formZeroSignature {
		return tx.MarshalBinary()
	}
	body, err := rlp.EncodeToBytes(payloadOf(tx))
	if err != nil {
		return nil, err
	}
	return append([]byte{types.DynamicFeeTxType}, body...), nil
}

func payloadOf(tx *types.Transaction) *payload {
	al := tx.AccessList()
	if al == nil {
		al = types.AccessList{}
	}
	return &payload{
		ChainID: tx.ChainId(), Nonce: tx.Nonce(), GasTipCap: tx.GasTipCap(), GasFeeCap: tx.GasFeeCap(),
		Gas: tx.Gas(), To: tx.To(), Value: tx.Value(), Data: tx.Data(), AccessList: al,
	}
}
