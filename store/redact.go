package store

import (
	"net/url"
	"slices"
	"strings"
)

// redactMask replaces every password RedactDSN finds.
const redactMask = "xxxxx"

// passwordKeys are the connection parameters that carry a secret, lower case: libpq's password
// and sslpassword (the passphrase of the client key), and the short spellings some tools accept.
var passwordKeys = []string{"password", "pass", "passwd", "pwd", "sslpassword"}

func isPasswordKey(k string) bool {
	if d, err := url.QueryUnescape(k); err == nil {
		k = d
	}
	return slices.Contains(passwordKeys, strings.ToLower(strings.TrimSpace(k)))
}

// RedactDSN hides every password a DSN may carry, in each form PostgreSQL's drivers read:
//
//   - URL user info: "postgres://user:secret@host/db" becomes "postgres://user:xxxxx@host/db";
//   - URL query parameters password, pass, passwd, pwd and sslpassword, any case, percent-encoded
//     or not: "postgres://user@host/db?sslmode=require&Password=secret" keeps only "Password=xxxxx";
//   - key=value DSNs: "host=db password=secret" and "host=db password = 'a \' secret'" become
//     "host=db password=xxxxx".
//
// Malformed input (a password holding '@', '?', '&' or an unterminated quote) is masked from the
// password's start to where any reading of the DSN could end it: more than the password may be
// hidden, never less.
func RedactDSN(dsn string) string {
	spans := passwordSpans(dsn)
	if len(spans) == 0 {
		return dsn
	}
	var b strings.Builder
	at := 0
	for _, s := range spans {
		b.WriteString(dsn[at:s[0]])
		b.WriteString(redactMask)
		at = s[1]
	}
	b.WriteString(dsn[at:])
	return b.String()
}

// dsnPasswords are the password texts of dsn (as written, and percent-decoded when that differs),
// longest first: what scrub removes from a driver's messages.
func dsnPasswords(dsn string) []string {
	var out []string
	for _, s := range passwordSpans(dsn) {
		v := dsn[s[0]:s[1]]
		out = append(out, v)
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
		if u := unquoteKV(v); u != v {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// passwordSpans are the byte ranges [start, end) of dsn that hold a password, sorted and merged.
func passwordSpans(dsn string) [][2]int {
	var spans [][2]int
	if i := strings.Index(dsn, "://"); i >= 0 {
		spans = append(spans, urlSpans(dsn, i+len("://"))...)
	} else {
		spans = append(spans, keyValueSpans(dsn)...)
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var merged [][2]int
	for _, s := range spans {
		if s[1] <= s[0] {
			continue
		}
		if n := len(merged); n > 0 && s[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// urlSpans reads a URL DSN whose authority starts at rest. Two readings are combined: the user
// info's password runs from the first ':' to the last '@' (a password may hold '@', '/' or '?'),
// and each password-like query parameter after the first '?' runs to the next '&'.
func urlSpans(dsn string, rest int) [][2]int {
	var spans [][2]int
	if at := strings.LastIndex(dsn[rest:], "@"); at >= 0 {
		if colon := strings.Index(dsn[rest:rest+at], ":"); colon >= 0 {
			spans = append(spans, [2]int{rest + colon + 1, rest + at})
		}
	}
	q := strings.Index(dsn[rest:], "?")
	if q < 0 {
		return spans
	}
	pos := rest + q + 1
	secret := false // the previous parameter was a password: a following part without '=' is its tail
	for pos <= len(dsn) {
		end := strings.IndexByte(dsn[pos:], '&')
		if end < 0 {
			end = len(dsn) - pos
		}
		part := dsn[pos : pos+end]
		if k, _, ok := strings.Cut(part, "="); ok {
			secret = isPasswordKey(k)
			if secret {
				spans = append(spans, [2]int{pos + len(k) + 1, pos + end})
			}
		} else if secret {
			spans = append(spans, [2]int{pos, pos + end})
		}
		pos += end + 1
	}
	return spans
}

// keyValueSpans reads a libpq key=value DSN: "key = value" pairs separated by spaces, a value
// either a run of non-space characters or single-quoted, with backslash escaping a character in
// both. A quoted value left open runs to the end.
func keyValueSpans(dsn string) [][2]int {
	var spans [][2]int
	i := 0
	for i < len(dsn) {
		for i < len(dsn) && isSpace(dsn[i]) {
			i++
		}
		start := i
		for i < len(dsn) && dsn[i] != '=' && !isSpace(dsn[i]) {
			i++
		}
		key := dsn[start:i]
		for i < len(dsn) && isSpace(dsn[i]) {
			i++
		}
		if i >= len(dsn) || dsn[i] != '=' {
			continue // not a pair: a file path or a stray word
		}
		i++
		for i < len(dsn) && isSpace(dsn[i]) {
			i++
		}
		vstart := i
		if i < len(dsn) && dsn[i] == '\'' {
			i++
			for i < len(dsn) && dsn[i] != '\'' {
				if dsn[i] == '\\' {
					i++
				}
				i++
			}
			i = min(i+1, len(dsn))
		} else {
			for i < len(dsn) && !isSpace(dsn[i]) {
				if dsn[i] == '\\' {
					i++
				}
				i++
			}
			i = min(i, len(dsn))
		}
		if isPasswordKey(key) {
			spans = append(spans, [2]int{vstart, i})
		}
	}
	return spans
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// unquoteKV is a key=value DSN's value as the driver reads it: quotes removed, escapes resolved.
func unquoteKV(v string) string {
	v = strings.TrimPrefix(v, "'")
	v = strings.TrimSuffix(v, "'")
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// libpqKeys are the parameter names that mark a DSN without a scheme as a key=value PostgreSQL DSN.
var libpqKeys = []string{"host", "hostaddr", "port", "dbname", "user", "password", "passfile", "sslmode",
	"sslpassword", "sslcert", "sslkey", "sslrootcert", "connect_timeout", "application_name", "options",
	"target_session_attrs", "service", "servicefile"}

// isKeyValueDSN reports whether dsn is a libpq key=value DSN: its first word is "key=" for one of
// libpq's parameters ("host=db user=app password=..."), which no SQLite path the store is given
// starts with.
func isKeyValueDSN(dsn string) bool {
	s := strings.TrimSpace(dsn)
	i := strings.IndexAny(s, "= \t\n")
	if i <= 0 {
		return false
	}
	key := s[:i]
	rest := strings.TrimLeft(s[i:], " \t\n")
	return strings.HasPrefix(rest, "=") && slices.Contains(libpqKeys, strings.ToLower(key))
}
