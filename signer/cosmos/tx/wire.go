package tx

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrDecode is wrapped by every decoding error.
var ErrDecode = errors.New("cosmos tx: decode")

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendMessage writes an embedded message even when it is empty.
func appendMessage(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendUint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// field is one decoded field: a varint value or a length-delimited payload.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	v     uint64
	bytes []byte
}

// walk calls fn for each field of msg, refusing malformed input and wire types other than varint
// and length-delimited (stakeflow's messages have no others).
func walk(what string, msg []byte, fn func(f field) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return fmt.Errorf("%w: %s: bad tag: %w", ErrDecode, what, protowire.ParseError(n))
		}
		msg = msg[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.v, n = protowire.ConsumeVarint(msg)
		case protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(msg)
		default:
			return fmt.Errorf("%w: %s: field %d has wire type %d", ErrDecode, what, num, typ)
		}
		if n < 0 {
			return fmt.Errorf("%w: %s: field %d: %w", ErrDecode, what, num, protowire.ParseError(n))
		}
		msg = msg[n:]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func unknown(what string, f field) error {
	return fmt.Errorf("%w: %s: unknown field %d (wire type %d)", ErrDecode, what, f.num, f.typ)
}

// want checks a field's wire type.
func want(what string, f field, typ protowire.Type) error {
	if f.typ != typ {
		return fmt.Errorf("%w: %s: field %d has wire type %d, want %d", ErrDecode, what, f.num, f.typ, typ)
	}
	return nil
}

// str checks that a length-delimited field is valid UTF-8 text, as protobuf strings must be.
func str(what string, f field) (string, error) {
	if err := want(what, f, protowire.BytesType); err != nil {
		return "", err
	}
	if !utf8.Valid(f.bytes) {
		return "", fmt.Errorf("%w: %s: field %d is not valid UTF-8", ErrDecode, what, f.num)
	}
	return string(f.bytes), nil
}
