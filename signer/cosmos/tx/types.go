package tx

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Type URLs of the messages and key type stakeflow encodes.
const (
	TypeMsgDelegate                = "/cosmos.staking.v1beta1.MsgDelegate"
	TypeMsgUndelegate              = "/cosmos.staking.v1beta1.MsgUndelegate"
	TypeMsgBeginRedelegate         = "/cosmos.staking.v1beta1.MsgBeginRedelegate"
	TypeMsgWithdrawDelegatorReward = "/cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward"
	TypeSecp256k1PubKey            = "/cosmos.crypto.secp256k1.PubKey"
)

// SignModeDirect is SIGN_MODE_DIRECT of cosmos.tx.signing.v1beta1.SignMode.
const SignModeDirect = 1

// Any is google.protobuf.Any: a type URL and the encoded message.
type Any struct {
	TypeURL string
	Value   []byte
}

// Marshal encodes a.
func (a Any) Marshal() []byte {
	b := appendString(nil, 1, a.TypeURL)
	return appendBytes(b, 2, a.Value)
}

// UnmarshalAny decodes an Any.
func UnmarshalAny(b []byte) (Any, error) {
	var a Any
	err := walk("Any", b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			a.TypeURL, err = str("Any", f)
		case 2:
			err = want("Any", f, protowire.BytesType)
			a.Value = f.bytes
		default:
			return unknown("Any", f)
		}
		return err
	})
	return a, err
}

// Coin is cosmos.base.v1beta1.Coin. Amount is a decimal integer string.
type Coin struct {
	Denom  string
	Amount string
}

// Marshal encodes c.
func (c Coin) Marshal() []byte {
	b := appendString(nil, 1, c.Denom)
	return appendString(b, 2, c.Amount)
}

// UnmarshalCoin decodes a Coin.
func UnmarshalCoin(b []byte) (Coin, error) {
	var c Coin
	err := walk("Coin", b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			c.Denom, err = str("Coin", f)
		case 2:
			c.Amount, err = str("Coin", f)
		default:
			return unknown("Coin", f)
		}
		return err
	})
	return c, err
}

// PubKey is cosmos.crypto.secp256k1.PubKey: a 33-byte compressed public key.
type PubKey struct {
	Key []byte
}

// Marshal encodes k.
func (k PubKey) Marshal() []byte { return appendBytes(nil, 1, k.Key) }

// Any wraps k in an Any with its type URL.
func (k PubKey) Any() Any { return Any{TypeURL: TypeSecp256k1PubKey, Value: k.Marshal()} }

// UnmarshalPubKey decodes a PubKey.
func UnmarshalPubKey(b []byte) (PubKey, error) {
	var k PubKey
	err := walk("PubKey", b, func(f field) error {
		if f.num != 1 {
			return unknown("PubKey", f)
		}
		k.Key = f.bytes
		return want("PubKey", f, protowire.BytesType)
	})
	return k, err
}

// TxBody is cosmos.tx.v1beta1.TxBody.
type TxBody struct {
	Messages                    []Any
	Memo                        string
	TimeoutHeight               uint64
	ExtensionOptions            []Any
	NonCriticalExtensionOptions []Any
}

// Marshal encodes body.
func (body TxBody) Marshal() []byte {
	var b []byte
	for _, m := range body.Messages {
		b = appendMessage(b, 1, m.Marshal())
	}
	b = appendString(b, 2, body.Memo)
	b = appendUint(b, 3, body.TimeoutHeight)
	for _, m := range body.ExtensionOptions {
		b = appendMessage(b, 1023, m.Marshal())
	}
	for _, m := range body.NonCriticalExtensionOptions {
		b = appendMessage(b, 2047, m.Marshal())
	}
	return b
}

// UnmarshalTxBody decodes a TxBody. Fields added to TxBody by later SDK versions (unordered
// transactions, timeout timestamps) are unknown here and refused.
func UnmarshalTxBody(b []byte) (TxBody, error) {
	var body TxBody
	err := walk("TxBody", b, func(f field) error {
		var err error
		switch f.num {
		case 1, 1023, 2047:
			if err := want("TxBody", f, protowire.BytesType); err != nil {
				return err
			}
			a, err := UnmarshalAny(f.bytes)
			if err != nil {
				return err
			}
			switch f.num {
			case 1:
				body.Messages = append(body.Messages, a)
			case 1023:
				body.ExtensionOptions = append(body.ExtensionOptions, a)
			default:
				body.NonCriticalExtensionOptions = append(body.NonCriticalExtensionOptions, a)
			}
		case 2:
			body.Memo, err = str("TxBody", f)
		case 3:
			err = want("TxBody", f, protowire.VarintType)
			body.TimeoutHeight = f.v
		default:
			return unknown("TxBody", f)
		}
		return err
	})
	return body, err
}

// SignerInfo is cosmos.tx.v1beta1.SignerInfo with a single-signer mode. A multisig mode_info is
// refused when decoding.
type SignerInfo struct {
	PublicKey *Any
	SignMode  int32
	Sequence  uint64
}

// Marshal encodes si.
func (si SignerInfo) Marshal() []byte {
	var b []byte
	if si.PublicKey != nil {
		b = appendMessage(b, 1, si.PublicKey.Marshal())
	}
	single := appendUint(nil, 1, uint64(si.SignMode))
	b = appendMessage(b, 2, appendMessage(nil, 1, single))
	return appendUint(b, 3, si.Sequence)
}

func unmarshalSignerInfo(b []byte) (SignerInfo, error) {
	var si SignerInfo
	err := walk("SignerInfo", b, func(f field) error {
		switch f.num {
		case 1:
			if err := want("SignerInfo", f, protowire.BytesType); err != nil {
				return err
			}
			a, err := UnmarshalAny(f.bytes)
			if err != nil {
				return err
			}
			si.PublicKey = &a
		case 2:
			if err := want("SignerInfo", f, protowire.BytesType); err != nil {
				return err
			}
			return walk("ModeInfo", f.bytes, func(mf field) error {
				if mf.num != 1 {
					return fmt.Errorf("%w: ModeInfo: only single-signer mode is accepted (field %d)", ErrDecode, mf.num)
				}
				if err := want("ModeInfo", mf, protowire.BytesType); err != nil {
					return err
				}
				return walk("ModeInfo.Single", mf.bytes, func(sf field) error {
					if sf.num != 1 {
						return unknown("ModeInfo.Single", sf)
					}
					if sf.v > 1<<31-1 {
						return fmt.Errorf("%w: ModeInfo.Single: mode %d out of range", ErrDecode, sf.v)
					}
					si.SignMode = int32(sf.v)
					return want("ModeInfo.Single", sf, protowire.VarintType)
				})
			})
		case 3:
			si.Sequence = f.v
			return want("SignerInfo", f, protowire.VarintType)
		default:
			return unknown("SignerInfo", f)
		}
		return nil
	})
	return si, err
}

// Fee is cosmos.tx.v1beta1.Fee.
type Fee struct {
	Amount   []Coin
	GasLimit uint64
	Payer    string
	Granter  string
}

// Marshal encodes fee.
func (fee Fee) Marshal() []byte {
	var b []byte
	for _, c := range fee.Amount {
		b = appendMessage(b, 1, c.Marshal())
	}
	b = appendUint(b, 2, fee.GasLimit)
	b = appendString(b, 3, fee.Payer)
	return appendString(b, 4, fee.Granter)
}

func unmarshalFee(b []byte) (Fee, error) {
	var fee Fee
	err := walk("Fee", b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			if err := want("Fee", f, protowire.BytesType); err != nil {
				return err
			}
			c, err := UnmarshalCoin(f.bytes)
			if err != nil {
				return err
			}
			fee.Amount = append(fee.Amount, c)
		case 2:
			err = want("Fee", f, protowire.VarintType)
			fee.GasLimit = f.v
		case 3:
			fee.Payer, err = str("Fee", f)
		case 4:
			fee.Granter, err = str("Fee", f)
		default:
			return unknown("Fee", f)
		}
		return err
	})
	return fee, err
}

// AuthInfo is cosmos.tx.v1beta1.AuthInfo. The deprecated tip field is refused when decoding.
type AuthInfo struct {
	SignerInfos []SignerInfo
	Fee         Fee
}

// Marshal encodes ai.
func (ai AuthInfo) Marshal() []byte {
	var b []byte
	for _, si := range ai.SignerInfos {
		b = appendMessage(b, 1, si.Marshal())
	}
	return appendMessage(b, 2, ai.Fee.Marshal())
}

// UnmarshalAuthInfo decodes an AuthInfo.
func UnmarshalAuthInfo(b []byte) (AuthInfo, error) {
	var ai AuthInfo
	err := walk("AuthInfo", b, func(f field) error {
		if err := want("AuthInfo", f, protowire.BytesType); err != nil {
			return err
		}
		switch f.num {
		case 1:
			si, err := unmarshalSignerInfo(f.bytes)
			if err != nil {
				return err
			}
			ai.SignerInfos = append(ai.SignerInfos, si)
		case 2:
			fee, err := unmarshalFee(f.bytes)
			if err != nil {
				return err
			}
			ai.Fee = fee
		default:
			return unknown("AuthInfo", f)
		}
		return nil
	})
	return ai, err
}

// SignDoc is cosmos.tx.v1beta1.SignDoc, the document signed in SIGN_MODE_DIRECT.
type SignDoc struct {
	BodyBytes     []byte
	AuthInfoBytes []byte
	ChainID       string
	AccountNumber uint64
}

// Marshal encodes sd: the sign bytes.
func (sd SignDoc) Marshal() []byte {
	b := appendBytes(nil, 1, sd.BodyBytes)
	b = appendBytes(b, 2, sd.AuthInfoBytes)
	b = appendString(b, 3, sd.ChainID)
	return appendUint(b, 4, sd.AccountNumber)
}

// UnmarshalSignDoc decodes a SignDoc.
func UnmarshalSignDoc(b []byte) (SignDoc, error) {
	var sd SignDoc
	err := walk("SignDoc", b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			err = want("SignDoc", f, protowire.BytesType)
			sd.BodyBytes = f.bytes
		case 2:
			err = want("SignDoc", f, protowire.BytesType)
			sd.AuthInfoBytes = f.bytes
		case 3:
			sd.ChainID, err = str("SignDoc", f)
		case 4:
			err = want("SignDoc", f, protowire.VarintType)
			sd.AccountNumber = f.v
		default:
			return unknown("SignDoc", f)
		}
		return err
	})
	return sd, err
}

// TxRaw is cosmos.tx.v1beta1.TxRaw, the broadcast form: the body and auth info exactly as signed,
// and one signature per signer.
type TxRaw struct {
	BodyBytes     []byte
	AuthInfoBytes []byte
	Signatures    [][]byte
}

// Marshal encodes raw.
func (raw TxRaw) Marshal() []byte {
	b := appendBytes(nil, 1, raw.BodyBytes)
	b = appendBytes(b, 2, raw.AuthInfoBytes)
	for _, s := range raw.Signatures {
		b = appendMessage(b, 3, s)
	}
	return b
}

// UnmarshalTxRaw decodes a TxRaw.
func UnmarshalTxRaw(b []byte) (TxRaw, error) {
	var raw TxRaw
	err := walk("TxRaw", b, func(f field) error {
		if err := want("TxRaw", f, protowire.BytesType); err != nil {
			return err
		}
		switch f.num {
		case 1:
			raw.BodyBytes = f.bytes
		case 2:
			raw.AuthInfoBytes = f.bytes
		case 3:
			raw.Signatures = append(raw.Signatures, f.bytes)
		default:
			return unknown("TxRaw", f)
		}
		return nil
	})
	return raw, err
}

// SignDoc returns the SignDoc of raw for a chain and account number.
func (raw TxRaw) SignDoc(chainID string, accountNumber uint64) SignDoc {
	return SignDoc{BodyBytes: raw.BodyBytes, AuthInfoBytes: raw.AuthInfoBytes, ChainID: chainID, AccountNumber: accountNumber}
}
