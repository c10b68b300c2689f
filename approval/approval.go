// Package approval binds approvals to people: the approvers a worker is configured with (a name
// and an Ed25519 public key each, an OpenSSH ssh-ed25519 line accepted), the digest of an
// operation's intent, and the statements an approver (or the person starting an operation) signs.
//
// Everything here is pure (no I/O but ParseFile's read, no clock, no randomness): the workflows'
// update validator verifies statements with it deterministically, and the starter builds the same
// statements with it.
package approval

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Approver is one person allowed to approve or reject operations: the name the status shows and
// the Ed25519 public key their statements verify with. Fingerprint is OpenSSH's SHA256:... form
// of the key (what `ssh-keygen -l` and `ssh-add -l` print).
type Approver struct {
	Name        string `json:"name"`
	PublicKey   []byte `json:"publicKey"`
	Fingerprint string `json:"fingerprint"`
}

// Fingerprint is OpenSSH's SHA256 fingerprint of an Ed25519 public key ("SHA256:" and the
// unpadded base64 of the SHA-256 of the key's SSH wire form). A key of the wrong size has none.
func Fingerprint(pub []byte) string {
	if len(pub) != ed25519.PublicKeySize {
		return ""
	}
	k, err := ssh.NewPublicKey(ed25519.PublicKey(pub))
	if err != nil {
		return ""
	}
	return ssh.FingerprintSHA256(k)
}

// FileError is a line of an approvers file that is not valid; Line counts from 1.
type FileError struct {
	Path   string
	Line   int
	Reason string
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("approvers file %s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("approvers file %s, line %d: %s", e.Path, e.Line, e.Reason)
}

// ParseFile reads an approvers file (see Parse).
func ParseFile(path string) ([]Approver, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Reason: err.Error()}
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse reads approvers, one a line: `NAME ssh-ed25519 AAAA... [comment]` (an OpenSSH public key
// line) or `NAME ed25519:<base64 of the 32-byte key>`. Blank lines and lines starting with # are
// skipped. A line that is not valid, a name or key given twice, or a file naming nobody is an
// error naming the line and what is wrong (never the key bytes).
func Parse(path string, r io.Reader) ([]Approver, error) {
	var out []Approver
	names := map[string]int{}
	keys := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fail := func(format string, a ...any) error {
			return &FileError{Path: path, Line: n, Reason: fmt.Sprintf(format, a...)}
		}
		name, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		if err := validName(name); err != nil {
			return nil, fail("%v", err)
		}
		if rest == "" {
			return nil, fail("approver %q has no key: want `NAME ssh-ed25519 AAAA...` or `NAME ed25519:BASE64`", name)
		}
		var pub []byte
		switch {
		case strings.HasPrefix(rest, "ed25519:"):
			raw := strings.TrimPrefix(rest, "ed25519:")
			if strings.ContainsAny(raw, " \t") {
				return nil, fail("approver %q: an ed25519: key takes no comment", name)
			}
			b, err := base64.StdEncoding.DecodeString(raw)
			if err != nil {
				return nil, fail("approver %q: the ed25519: key is not base64", name)
			}
			if len(b) != ed25519.PublicKeySize {
				return nil, fail("approver %q: the ed25519: key is %d bytes, want %d", name, len(b), ed25519.PublicKeySize)
			}
			pub = b
		default:
			k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rest))
			if err != nil {
				return nil, fail("approver %q: not an OpenSSH public key line (%v)", name, err)
			}
			if k.Type() != ssh.KeyAlgoED25519 {
				return nil, fail("approver %q: key type %s; only ssh-ed25519 keys can approve", name, k.Type())
			}
			ck, ok := k.(ssh.CryptoPublicKey)
			if !ok {
				return nil, fail("approver %q: key cannot be read", name)
			}
			ek, ok := ck.CryptoPublicKey().(ed25519.PublicKey)
			if !ok || len(ek) != ed25519.PublicKeySize {
				return nil, fail("approver %q: key cannot be read as Ed25519", name)
			}
			pub = []byte(ek)
		}
		fp := Fingerprint(pub)
		if prev, ok := names[strings.ToLower(name)]; ok {
			return nil, fail("approver %q is named again (first on line %d)", name, prev)
		}
		if prev, ok := keys[fp]; ok {
			return nil, fail("approver %q has the key %s of line %d: each approver needs their own key", name, fp, prev)
		}
		names[strings.ToLower(name)], keys[fp] = n, n
		out = append(out, Approver{Name: name, PublicKey: pub, Fingerprint: fp})
	}
	if err := sc.Err(); err != nil {
		return nil, &FileError{Path: path, Reason: err.Error()}
	}
	if len(out) == 0 {
		return nil, &FileError{Path: path, Reason: "names no approver"}
	}
	return out, nil
}

func validName(name string) error {
	if name == "" {
		return errors.New("no approver name")
	}
	if len(name) > 64 {
		return fmt.Errorf("approver name %q is longer than 64 characters", name[:64])
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@-+", r)) {
			return fmt.Errorf("approver name %q holds %q: use letters, digits and . _ @ - +", name, r)
		}
	}
	if name == "ssh-ed25519" || strings.HasPrefix(name, "ed25519:") {
		return errors.New("the line starts with a key: put the approver's name first")
	}
	return nil
}

// Intent is what an operation will do as fixed at its start: what an approver's statement names
// through its digest.
type Intent struct {
	OperationID string
	Chain       string
	Network     string
	Operation   string
	Staker      string
	Amount      string
	Unit        string
	Validator   string
	Account     string
}

// IntentVersion heads the canonical encoding of an Intent.
const IntentVersion = "stakeflow intent v1"

// Encode is the canonical encoding of the intent: a version line, then one line per field in a
// fixed order, each value quoted (Go's strconv.Quote) so that no value can end its line early.
func (in Intent) Encode() []byte {
	var b bytes.Buffer
	b.WriteString(IntentVersion + "\n")
	for _, f := range []struct{ k, v string }{
		{"operation-id", in.OperationID}, {"chain", in.Chain}, {"network", in.Network}, {"operation", in.Operation},
		{"staker", in.Staker}, {"amount", in.Amount}, {"unit", in.Unit}, {"validator", in.Validator}, {"account", in.Account},
	} {
		b.WriteString(f.k + " " + strconv.Quote(f.v) + "\n")
	}
	return b.Bytes()
}

// Digest is the SHA-256 (hex) of the intent's canonical encoding.
func (in Intent) Digest() string {
	sum := sha256.Sum256(in.Encode())
	return hex.EncodeToString(sum[:])
}

// Decisions a statement may carry.
const (
	Approve = "approve"
	Reject  = "reject"
)

// StatementVersion heads an approval statement; StartVersion a start statement.
const (
	StatementVersion = "stakeflow approval v1"
	StartVersion     = "stakeflow start v1"
)

// Statement is what an approver signs: this decision on this operation, whose intent has this
// digest, made at this time.
type Statement struct {
	OperationID string
	Decision    string
	Intent      string
	At          time.Time
}

// Text is the statement's bytes as signed.
func (s Statement) Text() string {
	return fmt.Sprintf("%s\noperation: %s\ndecision: %s\nintent: %s\nat: %s\n",
		StatementVersion, s.OperationID, s.Decision, s.Intent, s.At.UTC().Format(time.RFC3339))
}

// Start is what the person starting an operation signs: the operation and what the starter
// knows of its intent.
type Start struct {
	OperationID string
	Chain       string
	Operation   string
	Staker      string
	At          time.Time
}

// Text is the start statement's bytes as signed.
func (s Start) Text() string {
	return fmt.Sprintf("%s\noperation: %s\nchain: %s\nkind: %s\nstaker: %s\nat: %s\n",
		StartVersion, s.OperationID, s.Chain, s.Operation, s.Staker, s.At.UTC().Format(time.RFC3339))
}

// fields splits a statement's text into its lines' values, checking the version line and the
// keys in order; the text must end with a newline and hold nothing else.
func fields(text, version string, keys ...string) ([]string, error) {
	if !strings.HasSuffix(text, "\n") {
		return nil, errors.New("the statement does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) == 0 || lines[0] != version {
		return nil, fmt.Errorf("the statement does not start with %q", version)
	}
	if len(lines) != len(keys)+1 {
		return nil, fmt.Errorf("the statement has %d lines, want %d", len(lines), len(keys)+1)
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		v, ok := strings.CutPrefix(lines[i+1], k+": ")
		if !ok {
			return nil, fmt.Errorf("line %d of the statement is not %q", i+2, k+": ...")
		}
		out[i] = v
	}
	return out, nil
}

func parseAt(v string) (time.Time, error) {
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("the statement's time %q is not RFC 3339", v)
	}
	return at, nil
}

// ParseStatement reads an approval statement; it must be exactly as Text writes it.
func ParseStatement(text string) (Statement, error) {
	f, err := fields(text, StatementVersion, "operation", "decision", "intent", "at")
	if err != nil {
		return Statement{}, err
	}
	at, err := parseAt(f[3])
	if err != nil {
		return Statement{}, err
	}
	s := Statement{OperationID: f[0], Decision: f[1], Intent: f[2], At: at}
	if s.Decision != Approve && s.Decision != Reject {
		return Statement{}, fmt.Errorf("the statement's decision %q is neither approve nor reject", s.Decision)
	}
	if s.Text() != text {
		return Statement{}, errors.New("the statement is not in its canonical form")
	}
	return s, nil
}

// ParseStart reads a start statement; it must be exactly as Text writes it.
func ParseStart(text string) (Start, error) {
	f, err := fields(text, StartVersion, "operation", "chain", "kind", "staker", "at")
	if err != nil {
		return Start{}, err
	}
	at, err := parseAt(f[4])
	if err != nil {
		return Start{}, err
	}
	s := Start{OperationID: f[0], Chain: f[1], Operation: f[2], Staker: f[3], At: at}
	if s.Text() != text {
		return Start{}, errors.New("the start statement is not in its canonical form")
	}
	return s, nil
}

// Signed is a statement with the public key that signed it and the signature, as the approve
// and reject updates and the start carry them: the key and signature in standard base64.
type Signed struct {
	Statement string `json:"statement"`
	PublicKey string `json:"publicKey"`
	Signature string `json:"signature"`
}

// Key decodes the signer's public key; the error does not repeat it.
func (s Signed) Key() ([]byte, error) {
	pub, err := base64.StdEncoding.DecodeString(s.PublicKey)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, errors.New("the public key is not a base64 Ed25519 key of 32 bytes")
	}
	return pub, nil
}

// Verify checks the signature over the statement's bytes with the key it names; the error says
// which key (by fingerprint) did not verify.
func (s Signed) Verify() ([]byte, error) {
	pub, err := s.Key()
	if err != nil {
		return nil, err
	}
	sig, err := base64.StdEncoding.DecodeString(s.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, errors.New("the signature is not a base64 Ed25519 signature of 64 bytes")
	}
	if !ed25519.Verify(ed25519.PublicKey(pub), []byte(s.Statement), sig) {
		return nil, fmt.Errorf("the signature does not verify with key %s: the statement was altered or signed by another key", Fingerprint(pub))
	}
	return pub, nil
}

// Sign signs text with an Ed25519 private key (tests and key files; an SSH agent signs the same
// bytes the same way).
func Sign(priv ed25519.PrivateKey, text string) Signed {
	return Signed{
		Statement: text,
		PublicKey: base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)),
		Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte(text))),
	}
}
