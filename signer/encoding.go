package signer

import (
	"encoding/base64"
	"strings"

	"github.com/gagliardetto/solana-go"
)

// Encodings for the signing hot path.
//
// Base58 (Bitcoin alphabet) gives the same results as solana-go's (github.com/mr-tron/base58):
// encoding gives one '1' per leading zero byte followed by the number's digits; decoding accepts
// exactly the strings whose canonical reading is 32 bytes. The arithmetic works on limbs of
// several digits at once instead of one digit per byte. Tests and a fuzz target hold both
// directions to the reference implementation.

const b58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// b58Limb is 58^5, the base of the limbs the encoder works in; it is below 2^30, so a limb
// shifted left by 32 bits plus a 32-bit carry fits in a uint64.
const b58Limb = 58 * 58 * 58 * 58 * 58

// b58Digit maps an ASCII character to its digit value, or 0xff when it is not in the alphabet.
var b58Digit = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(b58Alphabet); i++ {
		t[b58Alphabet[i]] = byte(i)
	}
	return t
}()

// encodeBase58 returns the base58 encoding of b.
func encodeBase58(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	rest := b[zeros:]

	// Little-endian limbs in base 58^5; 64 bytes need 18 of them.
	var limbBuf [24]uint64
	limbs := limbBuf[:0]
	if n := (len(rest)*138/100)/5 + 2; n > len(limbBuf) {
		limbs = make([]uint64, 0, n)
	}
	// Feed the input as big-endian words: first the len%4 leading bytes, then 4 at a time.
	feed := func(word uint64, bits uint) {
		carry := word
		for i := range limbs {
			t := limbs[i]<<bits + carry
			limbs[i] = t % b58Limb
			carry = t / b58Limb
		}
		for carry != 0 {
			limbs = append(limbs, carry%b58Limb)
			carry /= b58Limb
		}
	}
	head := len(rest) % 4
	if head > 0 {
		var w uint64
		for _, c := range rest[:head] {
			w = w<<8 | uint64(c)
		}
		feed(w, uint(8*head))
	}
	for i := head; i < len(rest); i += 4 {
		feed(uint64(rest[i])<<24|uint64(rest[i+1])<<16|uint64(rest[i+2])<<8|uint64(rest[i+3]), 32)
	}

	var outBuf [128]byte
	out := outBuf[:]
	if n := zeros + 5*len(limbs); n > len(outBuf) {
		out = make([]byte, n)
	}
	pos := len(out)
	for _, l := range limbs {
		for j := 0; j < 5; j++ {
			pos--
			out[pos] = b58Alphabet[l%58]
			l /= 58
		}
	}
	// The top limb's high digits may be zeros, which are not part of the number's digits.
	for pos < len(out) && out[pos] == '1' {
		pos++
	}
	for i := 0; i < zeros; i++ {
		pos--
		out[pos] = '1'
	}
	return string(out[pos:])
}

// decodeBase58Key decodes a base58 address. It accepts exactly what solana.PublicKeyFromBase58
// accepts: characters of the alphabet only, whose canonical decoding is 32 bytes long.
func decodeBase58Key(s string) (solana.PublicKey, bool) {
	var pk solana.PublicKey
	// 32 bytes take at most 44 characters; an empty string is not an address.
	if len(s) == 0 || len(s) > 44 {
		return pk, false
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// The number in big-endian 32-bit limbs; limb 0 is the most significant.
	var limbs [8]uint64
	acc, mul := uint64(0), uint64(1)
	flush := func() bool {
		carry := acc
		for i := len(limbs) - 1; i >= 0; i-- {
			t := limbs[i]*mul + carry
			limbs[i] = t & 0xffffffff
			carry = t >> 32
		}
		acc, mul = 0, 1
		return carry == 0
	}
	for i := zeros; i < len(s); i++ {
		d := b58Digit[s[i]]
		if d == 0xff {
			return pk, false
		}
		acc = acc*58 + uint64(d)
		mul *= 58
		if mul == b58Limb && !flush() {
			return pk, false
		}
	}
	if mul != 1 && !flush() {
		return pk, false
	}
	for i, l := range limbs {
		pk[4*i] = byte(l >> 24)
		pk[4*i+1] = byte(l >> 16)
		pk[4*i+2] = byte(l >> 8)
		pk[4*i+3] = byte(l)
	}
	// The canonical length is one byte per leading '1' plus the number's significant bytes.
	lead := 0
	for lead < len(pk) && pk[lead] == 0 {
		lead++
	}
	if zeros+len(pk)-lead != len(pk) {
		return solana.PublicKey{}, false
	}
	return pk, true
}

// encodeBase64 is base64.StdEncoding.EncodeToString building the string in place, without an
// intermediate buffer: whole 3-byte groups encode independently, so chunks of 48 bytes (64
// characters) can be appended one after another.
func encodeBase64(b []byte) string {
	var sb strings.Builder
	sb.Grow(base64.StdEncoding.EncodedLen(len(b)))
	var chunk [64]byte
	for len(b) > 0 {
		n := min(len(b), 48)
		m := base64.StdEncoding.EncodedLen(n)
		base64.StdEncoding.Encode(chunk[:m], b[:n])
		sb.Write(chunk[:m])
		b = b[n:]
	}
	return sb.String()
}
