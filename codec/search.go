package codec

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Search tags. A payload codec cannot seal search attributes (the server indexes them), so the
// confidential ones (workflows.Conceal names them) hold a tag instead of the value: HMAC-SHA256
// of the value under the keyset's search key, cut to TagBytes and written as TagPrefix + hex.
// The same value always gives the same tag, so an operator who knows an address or a transaction
// ID finds its operations (`starter list --staker`, `starter tag` for the Web UI), while whoever
// reads the server's database without the key sees neither the value nor a way to test a guess.
const (
	// TagPrefix begins every tag, telling it from a clear value at a glance.
	TagPrefix = "h:"
	// TagBytes is how much of the HMAC a tag keeps: 128 bits, as RFC 4231 test case 5 truncates.
	TagBytes = 16
	// SearchKeySize is the size of a keyset's search key.
	SearchKeySize = 32
)

// Tagger computes search tags under a keyset's search key.
type Tagger struct {
	key []byte
}

// Tagger is the keyset's tagger. Without a search key it tags nothing (Tag's ok is false): the
// confidential attributes are then left out.
func (k *Keyset) Tagger() *Tagger { return &Tagger{key: k.search} }

// fingerprintDomain begins what a search key's fingerprint hashes, so that the fingerprint is
// no other hash of the key.
const fingerprintDomain = "stakeflow search key fingerprint\x00"

// SearchKeyFingerprint names a search key without telling it: the first 8 bytes of SHA-256 of
// fingerprintDomain followed by the key, in hex. Keysets tag alike when their search keys have the
// same fingerprint (`starter keyset show` prints it; the worker logs it when it starts).
func SearchKeyFingerprint(key []byte) string {
	sum := sha256.Sum256(append([]byte(fingerprintDomain), key...))
	return hex.EncodeToString(sum[:8])
}

// searchKey is f's search key, decoded: nil when f has none.
func (f KeysetFile) searchKey() ([]byte, error) {
	if f.SearchKey == "" {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(f.SearchKey)
	if err != nil {
		return nil, errors.New(`"searchKey" is not base64`)
	}
	if len(raw) != SearchKeySize {
		return nil, fmt.Errorf(`"searchKey" has %d bytes; want %d`, len(raw), SearchKeySize)
	}
	return raw, nil
}

// SearchKeyFingerprint is SearchKeyFingerprint of f's search key; ok is false when f has none (or
// one ParseKeyset refuses).
func (f KeysetFile) SearchKeyFingerprint() (string, bool) {
	key, err := f.searchKey()
	if err != nil || key == nil {
		return "", false
	}
	return SearchKeyFingerprint(key), true
}

// Fingerprint is SearchKeyFingerprint of t's search key; ok is false without one.
func (t *Tagger) Fingerprint() (string, bool) {
	if !t.Tags() {
		return "", false
	}
	return SearchKeyFingerprint(t.key), true
}

// Tags reports whether t has a search key, so that Tag tags.
func (t *Tagger) Tags() bool { return t != nil && len(t.key) > 0 }

// Tag is the search tag of v; ok is false when the keyset has no search key (v is then to be
// left out). An empty v is its own tag: it names nothing. A 0x-prefixed hex value (an EVM address
// or hash) is tagged in lower case, so a checksummed address and its lower-case form find the
// same operations.
func (t *Tagger) Tag(v string) (tag string, ok bool) {
	if t == nil || len(t.key) == 0 {
		return "", false
	}
	if v == "" {
		return "", true
	}
	if isHex0x(v) {
		v = strings.ToLower(v)
	}
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(v))
	return TagPrefix + hex.EncodeToString(m.Sum(nil)[:TagBytes]), true
}

// isHex0x reports whether v is 0x followed by hex digits. (A Solana address, base58, never starts
// with 0: that digit is not in its alphabet.)
func isHex0x(v string) bool {
	if len(v) < 3 || (v[:2] != "0x" && v[:2] != "0X") {
		return false
	}
	for _, r := range v[2:] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}
