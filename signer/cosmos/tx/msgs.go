package tx

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// MsgDelegate is cosmos.staking.v1beta1.MsgDelegate.
type MsgDelegate struct {
	DelegatorAddress string
	ValidatorAddress string
	Amount           Coin
}

// Any encodes m with its type URL.
func (m MsgDelegate) Any() Any {
	return Any{TypeURL: TypeMsgDelegate, Value: delegation(m.DelegatorAddress, m.ValidatorAddress, m.Amount)}
}

// MsgUndelegate is cosmos.staking.v1beta1.MsgUndelegate.
type MsgUndelegate struct {
	DelegatorAddress string
	ValidatorAddress string
	Amount           Coin
}

// Any encodes m with its type URL.
func (m MsgUndelegate) Any() Any {
	return Any{TypeURL: TypeMsgUndelegate, Value: delegation(m.DelegatorAddress, m.ValidatorAddress, m.Amount)}
}

func delegation(delegator, validator string, amount Coin) []byte {
	b := appendString(nil, 1, delegator)
	b = appendString(b, 2, validator)
	return appendMessage(b, 3, amount.Marshal())
}

// MsgBeginRedelegate is cosmos.staking.v1beta1.MsgBeginRedelegate.
type MsgBeginRedelegate struct {
	DelegatorAddress    string
	ValidatorSrcAddress string
	ValidatorDstAddress string
	Amount              Coin
}

// Any encodes m with its type URL.
func (m MsgBeginRedelegate) Any() Any {
	b := appendString(nil, 1, m.DelegatorAddress)
	b = appendString(b, 2, m.ValidatorSrcAddress)
	b = appendString(b, 3, m.ValidatorDstAddress)
	b = appendMessage(b, 4, m.Amount.Marshal())
	return Any{TypeURL: TypeMsgBeginRedelegate, Value: b}
}

// MsgWithdrawDelegatorReward is cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward.
type MsgWithdrawDelegatorReward struct {
	DelegatorAddress string
	ValidatorAddress string
}

// Any encodes m with its type URL.
func (m MsgWithdrawDelegatorReward) Any() Any {
	b := appendString(nil, 1, m.DelegatorAddress)
	b = appendString(b, 2, m.ValidatorAddress)
	return Any{TypeURL: TypeMsgWithdrawDelegatorReward, Value: b}
}

// Msg is the decoded form of any of the four messages, by type URL: Src and Dst are set for a
// redelegation, Validator for the others; Amount is zero for a reward withdrawal.
type Msg struct {
	TypeURL   string
	Delegator string
	Validator string
	Src       string
	Dst       string
	Amount    Coin
}

// DecodeMsg decodes one of the four message types from its Any. Another type URL is refused.
func DecodeMsg(a Any) (Msg, error) {
	m := Msg{TypeURL: a.TypeURL}
	var fields map[protowire.Number]*string
	var amountField protowire.Number
	switch a.TypeURL {
	case TypeMsgDelegate, TypeMsgUndelegate:
		fields = map[protowire.Number]*string{1: &m.Delegator, 2: &m.Validator}
		amountField = 3
	case TypeMsgBeginRedelegate:
		fields = map[protowire.Number]*string{1: &m.Delegator, 2: &m.Src, 3: &m.Dst}
		amountField = 4
	case TypeMsgWithdrawDelegatorReward:
		fields = map[protowire.Number]*string{1: &m.Delegator, 2: &m.Validator}
	default:
		return Msg{}, fmt.Errorf("%w: message type %q is not one stakeflow sends", ErrDecode, a.TypeURL)
	}
	what := a.TypeURL
	err := walk(what, a.Value, func(f field) error {
		if p, ok := fields[f.num]; ok {
			s, err := str(what, f)
			*p = s
			return err
		}
		if amountField != 0 && f.num == amountField {
			if err := want(what, f, protowire.BytesType); err != nil {
				return err
			}
			c, err := UnmarshalCoin(f.bytes)
			m.Amount = c
			return err
		}
		return unknown(what, f)
	})
	if err != nil {
		return Msg{}, err
	}
	return m, nil
}

// Encode re-encodes m as the message its TypeURL names.
func (m Msg) Encode() (Any, error) {
	switch m.TypeURL {
	case TypeMsgDelegate:
		return MsgDelegate{m.Delegator, m.Validator, m.Amount}.Any(), nil
	case TypeMsgUndelegate:
		return MsgUndelegate{m.Delegator, m.Validator, m.Amount}.Any(), nil
	case TypeMsgBeginRedelegate:
		return MsgBeginRedelegate{m.Delegator, m.Src, m.Dst, m.Amount}.Any(), nil
	case TypeMsgWithdrawDelegatorReward:
		return MsgWithdrawDelegatorReward{m.Delegator, m.Validator}.Any(), nil
	}
	return Any{}, fmt.Errorf("cosmos tx: message type %q is not one stakeflow sends", m.TypeURL)
}
