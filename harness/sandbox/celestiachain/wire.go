package celestiachain

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// pmsg is a decoded protobuf message: for each field number, its values in order (varints as
// numbers, length-delimited fields as bytes).
type pmsg struct {
	ints  map[protowire.Number][]uint64
	bytes map[protowire.Number][][]byte
}

// parse reads a message whose fields must all be among allowed.
func parse(b []byte, allowed ...protowire.Number) (pmsg, error) {
	m := pmsg{ints: map[protowire.Number][]uint64{}, bytes: map[protowire.Number][][]byte{}}
	ok := map[protowire.Number]bool{}
	for _, n := range allowed {
		ok[n] = true
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return m, fmt.Errorf("bad tag")
		}
		b = b[n:]
		if !ok[num] {
			return m, fmt.Errorf("unknown field %d", num)
		}
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return m, fmt.Errorf("bad varint in field %d", num)
			}
			m.ints[num] = append(m.ints[num], v)
			b = b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return m, fmt.Errorf("bad length in field %d", num)
			}
			m.bytes[num] = append(m.bytes[num], v)
			b = b[n:]
		default:
			return m, fmt.Errorf("field %d: wire type %d", num, typ)
		}
	}
	return m, nil
}

// one returns the last value of a length-delimited field (protobuf's rule for repeated scalars).
func (m pmsg) one(n protowire.Number) []byte {
	v := m.bytes[n]
	if len(v) == 0 {
		return nil
	}
	return v[len(v)-1]
}

func (m pmsg) str(n protowire.Number) string { return string(m.one(n)) }

func (m pmsg) num(n protowire.Number) uint64 {
	v := m.ints[n]
	if len(v) == 0 {
		return 0
	}
	return v[len(v)-1]
}

// signDoc encodes cosmos.tx.v1beta1.SignDoc.
func signDoc(body, authInfo []byte, chainID string, accountNumber uint64) []byte {
	var b []byte
	if len(body) > 0 {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, body)
	}
	if len(authInfo) > 0 {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, authInfo)
	}
	if chainID != "" {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, chainID)
	}
	if accountNumber != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, accountNumber)
	}
	return b
}

// coin is a decoded cosmos.base.v1beta1.Coin.
type coin struct{ denom, amount string }

func parseCoin(b []byte) (coin, error) {
	m, err := parse(b, 1, 2)
	if err != nil {
		return coin{}, fmt.Errorf("coin: %w", err)
	}
	return coin{m.str(1), m.str(2)}, nil
}

// decodedTx is what the ledger reads from a TxRaw.
type decodedTx struct {
	body, authInfo []byte
	signature      []byte
	msgs           []anyMsg
	memo           string
	timeoutHeight  uint64
	pubKey         []byte
	signMode       uint64
	sequence       uint64
	fee            []coin
	gasLimit       uint64
}

type anyMsg struct {
	typeURL string
	value   []byte
}

func decodeTx(raw []byte) (*decodedTx, error) {
	r, err := parse(raw, 1, 2, 3)
	if err != nil {
		return nil, fmt.Errorf("tx raw: %w", err)
	}
	t := &decodedTx{body: r.one(1), authInfo: r.one(2)}
	if len(r.bytes[3]) != 1 {
		return nil, fmt.Errorf("tx raw: %d signatures, want 1", len(r.bytes[3]))
	}
	t.signature = r.bytes[3][0]
	body, err := parse(t.body, 1, 2, 3, 1023, 2047)
	if err != nil {
		return nil, fmt.Errorf("tx body: %w", err)
	}
	if len(body.bytes[1023]) > 0 {
		return nil, fmt.Errorf("tx body: unsupported extension options")
	}
	for _, a := range body.bytes[1] {
		am, err := parse(a, 1, 2)
		if err != nil {
			return nil, fmt.Errorf("any: %w", err)
		}
		t.msgs = append(t.msgs, anyMsg{am.str(1), am.one(2)})
	}
	if len(t.msgs) == 0 {
		return nil, fmt.Errorf("tx body: no messages")
	}
	t.memo, t.timeoutHeight = body.str(2), body.num(3)
	ai, err := parse(t.authInfo, 1, 2)
	if err != nil {
		return nil, fmt.Errorf("auth info: %w", err)
	}
	if len(ai.bytes[1]) != 1 {
		return nil, fmt.Errorf("auth info: %d signer infos, want 1", len(ai.bytes[1]))
	}
	si, err := parse(ai.bytes[1][0], 1, 2, 3)
	if err != nil {
		return nil, fmt.Errorf("signer info: %w", err)
	}
	t.sequence = si.num(3)
	if pk := si.one(1); pk != nil {
		a, err := parse(pk, 1, 2)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		if a.str(1) != "/cosmos.crypto.secp256k1.PubKey" {
			return nil, fmt.Errorf("public key type %q not supported", a.str(1))
		}
		k, err := parse(a.one(2), 1)
		if err != nil {
			return nil, fmt.Errorf("public key bytes: %w", err)
		}
		t.pubKey = k.one(1)
	}
	mi, err := parse(si.one(2), 1)
	if err != nil {
		return nil, fmt.Errorf("mode info (single only): %w", err)
	}
	single, err := parse(mi.one(1), 1)
	if err != nil {
		return nil, fmt.Errorf("mode info single: %w", err)
	}
	t.signMode = single.num(1)
	fee, err := parse(ai.one(2), 1, 2, 3, 4)
	if err != nil {
		return nil, fmt.Errorf("fee: %w", err)
	}
	if fee.str(3) != "" || fee.str(4) != "" {
		return nil, fmt.Errorf("fee: payer and granter are not supported")
	}
	for _, c := range fee.bytes[1] {
		cc, err := parseCoin(c)
		if err != nil {
			return nil, err
		}
		t.fee = append(t.fee, cc)
	}
	t.gasLimit = fee.num(2)
	return t, nil
}
