package signer

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
)

// maxSolanaTxSize is the largest serialized transaction the Solana network accepts (one packet).
const maxSolanaTxSize = 1232

// wireTx is a Solana transaction parsed from its wire bytes without interpretation.
type wireTx struct {
	raw        []byte // the whole wire transaction
	sigCount   int
	sigOffset  int // offset of the first signature in raw
	msgOffset  int // offset of the message in raw; the message runs to the end
	versioned  bool
	version    int
	header     solana.MessageHeader
	keys       []solana.PublicKey
	blockhash  solana.Hash
	instrs     []wireInstr
	numLookups int
}

// wireInstr is one compiled instruction: indexes into the message's account keys.
type wireInstr struct {
	programIndex uint8
	accounts     []uint8
	data         []byte
}

func (t *wireTx) message() []byte { return t.raw[t.msgOffset:] }

type wireReader struct {
	b   []byte
	pos int
}

var errTruncated = errors.New("truncated")

func (r *wireReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errTruncated
	}
	v := r.b[r.pos]
	r.pos++
	return v, nil
}

func (r *wireReader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, errTruncated
	}
	v := r.b[r.pos : r.pos+n]
	r.pos += n
	return v, nil
}

// compactU16 reads Solana's shortvec length, refusing non-canonical and oversized encodings.
func (r *wireReader) compactU16() (int, error) {
	var v int
	for i := 0; i < 3; i++ {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if i > 0 && b == 0 {
				return 0, errors.New("non-canonical compact-u16 length")
			}
			if v > 0xffff {
				return 0, errors.New("compact-u16 length overflows")
			}
			return v, nil
		}
	}
	return 0, errors.New("compact-u16 length longer than 3 bytes")
}

// parseWireTx parses a legacy or v0 wire transaction. It checks structure only: every length is
// in bounds, every index points at an account, and no bytes are left over.
func parseWireTx(raw []byte) (*wireTx, error) {
	if len(raw) > maxSolanaTxSize {
		return nil, fmt.Errorf("transaction is %d bytes, over the %d-byte limit", len(raw), maxSolanaTxSize)
	}
	t := &wireTx{raw: raw}
	r := &wireReader{b: raw}
	n, err := r.compactU16()
	if err != nil {
		return nil, fmt.Errorf("signature count: %w", err)
	}
	t.sigCount = n
	t.sigOffset = r.pos
	if _, err := r.bytes(n * solana.SignatureLength); err != nil {
		return nil, fmt.Errorf("signatures: %w", err)
	}
	t.msgOffset = r.pos
	first, err := r.byte()
	if err != nil {
		return nil, fmt.Errorf("message header: %w", err)
	}
	if first&0x80 != 0 {
		t.versioned = true
		t.version = int(first & 0x7f)
		if t.version != 0 {
			return nil, fmt.Errorf("unknown message version %d", t.version)
		}
		if first, err = r.byte(); err != nil {
			return nil, fmt.Errorf("message header: %w", err)
		}
	}
	t.header.NumRequiredSignatures = first
	if t.header.NumReadonlySignedAccounts, err = r.byte(); err != nil {
		return nil, fmt.Errorf("message header: %w", err)
	}
	if t.header.NumReadonlyUnsignedAccounts, err = r.byte(); err != nil {
		return nil, fmt.Errorf("message header: %w", err)
	}
	nkeys, err := r.compactU16()
	if err != nil {
		return nil, fmt.Errorf("account count: %w", err)
	}
	if nkeys == 0 {
		return nil, errors.New("message has no accounts")
	}
	// Room for the keys that fit in what is left; a count beyond that fails below as truncated.
	t.keys = make([]solana.PublicKey, 0, min(nkeys, (len(raw)-r.pos)/solana.PublicKeyLength))
	for i := 0; i < nkeys; i++ {
		b, err := r.bytes(solana.PublicKeyLength)
		if err != nil {
			return nil, fmt.Errorf("account %d: %w", i, err)
		}
		t.keys = append(t.keys, solana.PublicKeyFromBytes(b))
	}
	bh, err := r.bytes(32)
	if err != nil {
		return nil, fmt.Errorf("recent blockhash: %w", err)
	}
	copy(t.blockhash[:], bh)
	ninstr, err := r.compactU16()
	if err != nil {
		return nil, fmt.Errorf("instruction count: %w", err)
	}
	// An instruction takes at least 3 bytes (program index and two empty lengths).
	t.instrs = make([]wireInstr, 0, min(ninstr, (len(raw)-r.pos)/3))
	for i := 0; i < ninstr; i++ {
		var in wireInstr
		if in.programIndex, err = r.byte(); err != nil {
			return nil, fmt.Errorf("instruction %d program: %w", i, err)
		}
		na, err := r.compactU16()
		if err != nil {
			return nil, fmt.Errorf("instruction %d account count: %w", i, err)
		}
		if in.accounts, err = r.bytes(na); err != nil {
			return nil, fmt.Errorf("instruction %d accounts: %w", i, err)
		}
		nd, err := r.compactU16()
		if err != nil {
			return nil, fmt.Errorf("instruction %d data length: %w", i, err)
		}
		if in.data, err = r.bytes(nd); err != nil {
			return nil, fmt.Errorf("instruction %d data: %w", i, err)
		}
		t.instrs = append(t.instrs, in)
	}
	if t.versioned {
		nl, err := r.compactU16()
		if err != nil {
			return nil, fmt.Errorf("address table lookups: %w", err)
		}
		t.numLookups = nl
		for i := 0; i < nl; i++ {
			if _, err := r.bytes(solana.PublicKeyLength); err != nil {
				return nil, fmt.Errorf("lookup %d table: %w", i, err)
			}
			for _, what := range []string{"writable", "readonly"} {
				k, err := r.compactU16()
				if err != nil {
					return nil, fmt.Errorf("lookup %d %s indexes: %w", i, what, err)
				}
				if _, err := r.bytes(k); err != nil {
					return nil, fmt.Errorf("lookup %d %s indexes: %w", i, what, err)
				}
			}
		}
	}
	if r.pos != len(raw) {
		return nil, fmt.Errorf("%d bytes left over after the message", len(raw)-r.pos)
	}
	if !t.versioned || t.numLookups == 0 {
		for i, in := range t.instrs {
			if int(in.programIndex) >= nkeys {
				return nil, fmt.Errorf("instruction %d program index %d out of range (%d accounts)", i, in.programIndex, nkeys)
			}
			for _, a := range in.accounts {
				if int(a) >= nkeys {
					return nil, fmt.Errorf("instruction %d account index %d out of range (%d accounts)", i, a, nkeys)
				}
			}
		}
	}
	return t, nil
}

// decodeCandidate is one reading of the unsigned string.
type decodeCandidate struct {
	encoding string
	decode   func(string) ([]byte, error)
}

var solanaEncodings = []decodeCandidate{
	{"base64", base64.StdEncoding.DecodeString},
	{"base64 (unpadded)", func(s string) ([]byte, error) {
		// Padding is not in the unpadded alphabet: refuse it before decoding the whole string.
		if strings.IndexByte(s, '=') >= 0 {
			return nil, errNotEncoding
		}
		return base64.RawStdEncoding.DecodeString(s)
	}},
	{"hex", func(s string) ([]byte, error) {
		s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		// Refuse what hex.DecodeString refuses (odd length, a non-hex digit) before it copies s.
		if len(s)%2 != 0 || !isHex(s) {
			return nil, errNotEncoding
		}
		return hex.DecodeString(s)
	}},
	{"base58", func(s string) ([]byte, error) {
		// Characters outside the alphabet (0, O, I, l, +, /, =) end the attempt before any arithmetic.
		if strings.ContainsAny(s, "0OIl+/=") {
			return nil, errNotEncoding
		}
		return base58.Decode(s)
	}},
}

// errNotEncoding is what a decodeCandidate returns for a string it cannot be.
var errNotEncoding = errors.New("not in this encoding")

// isHex reports whether s holds hexadecimal digits only.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// decodeSolanaTx decodes the unsigned transaction string, choosing the encoding under which it
// parses as a well-formed transaction, and refusing strings that do so under several.
func decodeSolanaTx(s string) (*wireTx, string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, "", fmt.Errorf("%w: empty transaction", ErrDecode)
	}
	if len(s) > 4*maxSolanaTxSize {
		return nil, "", fmt.Errorf("%w: %d characters is longer than any encoding of a %d-byte transaction", ErrDecode, len(s), maxSolanaTxSize)
	}
	var (
		found    *wireTx
		foundEnc string
		reasons  []string
	)
	for _, c := range solanaEncodings {
		b, err := c.decode(s)
		if err != nil || len(b) == 0 {
			continue
		}
		if found != nil && string(found.raw) == string(b) {
			continue // the same bytes under a sibling encoding (padded and unpadded base64)
		}
		t, err := parseWireTx(b)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("as %s (%d bytes): %v", c.encoding, len(b), err))
			continue
		}
		if found != nil {
			return nil, "", fmt.Errorf("%w: ambiguous encoding: the string is a well-formed transaction both as %s and as %s", ErrDecode, foundEnc, c.encoding)
		}
		found, foundEnc = t, c.encoding
	}
	if found == nil {
		if len(reasons) == 0 {
			return nil, "", fmt.Errorf("%w: not valid base64, base58 or hex (%d characters)", ErrDecode, len(s))
		}
		return nil, "", fmt.Errorf("%w: not a well-formed transaction %s", ErrDecode, strings.Join(reasons, "; "))
	}
	return found, foundEnc, nil
}
