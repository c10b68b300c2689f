package ton

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// ErrBadHash: a transaction hash that is not 32 bytes in hex or base64.
var ErrBadHash = errors.New("not a 32-byte transaction hash in hex or base64")

// NormalizeHash reads a 32-byte TON transaction hash given in hex (either case, with or without
// 0x) or base64 (standard or URL-safe, padded or not) and returns it as lower-case hex.
func NormalizeHash(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) == 66 && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
		s = s[2:]
	}
	if len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			return hex.EncodeToString(b), nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.Strict().DecodeString(s); err == nil && len(b) == 32 {
			return hex.EncodeToString(b), nil
		}
	}
	return "", ErrBadHash
}
