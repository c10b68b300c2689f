//go:build cgo

package hsm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/asn1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/miekg/pkcs11"
)

// Mechanisms and key types of PKCS#11 v3.0 that github.com/miekg/pkcs11 v1.1.2 does not name
// (PKCS#11 v3.0 pkcs11t.h: CKM_EC_EDWARDS_KEY_PAIR_GEN 0x1055, CKM_EDDSA 0x1057, CKK_EC_EDWARDS 0x40).
const (
	ckmECEdwardsKeyPairGen = 0x1055
	ckmEdDSA               = 0x1057
	ckkECEdwards           = 0x40
)

// Curve parameters (CKA_EC_PARAMS, DER): secp256k1 is OID 1.3.132.0.10 (SEC 2); Ed25519 is OID
// 1.3.101.112 (RFC 8410), which some tokens write as the printable string "edwards25519"
// (PKCS#11 v3.0 2.3.5) or as the older OID 1.3.6.1.4.1.11591.15.1.
var (
	paramsSecp256k1 = []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a}
	paramsEd25519   = [][]byte{
		{0x06, 0x03, 0x2b, 0x65, 0x70},
		append([]byte{0x13, 0x0c}, "edwards25519"...),
		{0x06, 0x09, 0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47, 0x0f, 0x01},
	}
)

// maxSessions bounds the sessions a Token keeps open: PKCS#11 sessions are not safe for
// concurrent use, so each signature holds one session to itself.
const maxSessions = 4

// module is one PKCS#11 library loaded into the process. C_Initialize and C_Finalize are
// process-wide, so Tokens of one module share it and the last one to close finalises it.
type module struct {
	path string
	ctx  *pkcs11.Ctx
	refs int
}

var (
	modulesMu sync.Mutex
	modules   = map[string]*module{}
)

func acquireModule(path string) (*module, error) {
	if path == "" {
		return nil, configErr("no PKCS#11 module given")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, configErr("PKCS#11 module: %v", err)
	}
	modulesMu.Lock()
	defer modulesMu.Unlock()
	m := modules[path]
	if m == nil {
		ctx := pkcs11.New(path)
		if ctx == nil {
			return nil, configErr("PKCS#11 module %s could not be loaded (not a PKCS#11 library, or a dependency is missing)", path)
		}
		m = &module{path: path, ctx: ctx}
		modules[path] = m
	}
	if m.refs == 0 {
		if err := m.ctx.Initialize(); err != nil && !isCode(err, pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
			return nil, configErr("PKCS#11 module %s: C_Initialize: %v", path, err)
		}
	}
	m.refs++
	return m, nil
}

func (m *module) release() error {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	m.refs--
	if m.refs > 0 {
		return nil
	}
	if err := m.ctx.Finalize(); err != nil {
		return fmt.Errorf("hsm: PKCS#11 module %s: C_Finalize: %w", m.path, err)
	}
	return nil
}

// isCode reports whether err is the PKCS#11 return value code.
func isCode(err error, code uint) bool {
	var e pkcs11.Error
	return errors.As(err, &e) && uint(e) == code
}

// Token is a logged-in PKCS#11 token. Its methods are safe for concurrent use: each call takes a
// session of its own from a small pool.
type Token struct {
	mod   *module
	slot  uint
	label string
	pin   []byte

	sem chan struct{} // one slot per session in use

	mu     sync.Mutex
	idle   []pkcs11.SessionHandle
	closed bool
}

// String names the token only.
func (t *Token) String() string { return fmt.Sprintf("hsm.Token{token: %q}", t.label) }

// Open loads cfg.Module, finds the token labelled cfg.Token and logs in with the PIN of
// cfg.PINFile. A refused PIN is a *LoginError (ErrLogin) naming the token; unusable settings
// are ErrConfig errors naming what is wrong. Errors never hold the PIN.
func Open(cfg Config) (*Token, error) {
	if cfg.Token == "" {
		return nil, configErr("no token label given")
	}
	pin, err := ReadPIN(cfg.PINFile)
	if err != nil {
		return nil, err
	}
	m, err := acquireModule(cfg.Module)
	if err != nil {
		return nil, err
	}
	t := &Token{mod: m, label: cfg.Token, pin: pin, sem: make(chan struct{}, maxSessions)}
	if t.slot, err = findSlot(m, cfg.Token); err != nil {
		_ = m.release()
		return nil, err
	}
	sh, err := t.openSession()
	if err != nil {
		_ = m.release()
		return nil, err
	}
	t.idle = append(t.idle, sh)
	return t, nil
}

func findSlot(m *module, label string) (uint, error) {
	slots, err := m.ctx.GetSlotList(true)
	if err != nil {
		return 0, configErr("PKCS#11 module %s: C_GetSlotList: %v", m.path, err)
	}
	var seen []string
	for _, s := range slots {
		ti, err := m.ctx.GetTokenInfo(s)
		if err != nil {
			continue
		}
		l := strings.TrimRight(ti.Label, " \x00")
		if l == label {
			return s, nil
		}
		seen = append(seen, fmt.Sprintf("%q", l))
	}
	return 0, configErr("no token labelled %q in PKCS#11 module %s (tokens present: %s)", label, m.path, strings.Join(seen, ", "))
}

// Close closes the token's sessions (which ends the login) and, when it is the last token of
// its module in the process, finalises the module. It waits for signatures in flight.
func (t *Token) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	for range maxSessions {
		t.sem <- struct{}{}
	}
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	var errs []error
	for _, sh := range idle {
		if err := t.mod.ctx.CloseSession(sh); err != nil && !isSessionGone(err) {
			errs = append(errs, fmt.Errorf("hsm: token %q: C_CloseSession: %w", t.label, err))
		}
	}
	clear(t.pin)
	errs = append(errs, t.mod.release())
	return errors.Join(errs...)
}

// openSession opens a read-write session and logs the user in (the login is the application's,
// shared by its sessions: a token that says the user is logged in already is fine).
func (t *Token) openSession() (pkcs11.SessionHandle, error) {
	sh, err := t.mod.ctx.OpenSession(t.slot, pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
	if err != nil {
		return 0, fmt.Errorf("hsm: token %q: C_OpenSession: %w", t.label, err)
	}
	if err := t.login(sh); err != nil {
		_ = t.mod.ctx.CloseSession(sh)
		return 0, err
	}
	return sh, nil
}

func (t *Token) login(sh pkcs11.SessionHandle) error {
	err := t.mod.ctx.Login(sh, pkcs11.CKU_USER, string(t.pin))
	if err == nil || isCode(err, pkcs11.CKR_USER_ALREADY_LOGGED_IN) {
		return nil
	}
	var e pkcs11.Error
	reason := "login failed"
	if errors.As(err, &e) {
		reason = e.Error()
	}
	return &LoginError{Token: t.label, Reason: reason}
}

func isSessionGone(err error) bool {
	return isCode(err, pkcs11.CKR_SESSION_HANDLE_INVALID) || isCode(err, pkcs11.CKR_SESSION_CLOSED)
}

func isHandleGone(err error) bool {
	return isCode(err, pkcs11.CKR_KEY_HANDLE_INVALID) || isCode(err, pkcs11.CKR_OBJECT_HANDLE_INVALID)
}

// withSession runs fn with a session of its own. When the token says the user is not logged in
// (the login ended: the token restarted, another application logged out) it logs in again and
// runs fn once more; when it says the session is closed or unknown, it opens a new session and
// runs fn once more. fn's retry argument tells it to look its objects up again.
func (t *Token) withSession(ctx context.Context, fn func(sh pkcs11.SessionHandle, retry bool) error) error {
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-t.sem }()
	sh, err := t.take()
	if err != nil {
		return err
	}
	err = fn(sh, false)
	switch {
	case err == nil:
	case isCode(err, pkcs11.CKR_USER_NOT_LOGGED_IN) || isHandleGone(err):
		// A token whose login ended hides its private objects: a key handle is "invalid" then.
		if lerr := t.login(sh); lerr != nil {
			t.drop(sh)
			return lerr
		}
		err = fn(sh, true)
	case isSessionGone(err):
		t.drop(sh)
		if sh, err = t.openSession(); err != nil {
			return err
		}
		err = fn(sh, true)
	}
	if err != nil && isSessionGone(err) {
		t.drop(sh)
		return err
	}
	t.put(sh)
	return err
}

func (t *Token) take() (pkcs11.SessionHandle, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return 0, fmt.Errorf("hsm: token %q is closed", t.label)
	}
	if n := len(t.idle); n > 0 {
		sh := t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		return sh, nil
	}
	t.mu.Unlock()
	return t.openSession()
}

func (t *Token) put(sh pkcs11.SessionHandle) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.idle = append(t.idle, sh)
}

func (t *Token) drop(sh pkcs11.SessionHandle) { _ = t.mod.ctx.CloseSession(sh) }

// find returns the handles of the objects matching template.
func (t *Token) find(sh pkcs11.SessionHandle, template []*pkcs11.Attribute) ([]pkcs11.ObjectHandle, error) {
	c := t.mod.ctx
	if err := c.FindObjectsInit(sh, template); err != nil {
		return nil, err
	}
	var out []pkcs11.ObjectHandle
	for {
		hs, _, err := c.FindObjects(sh, 64)
		if err != nil {
			_ = c.FindObjectsFinal(sh)
			return nil, err
		}
		if len(hs) == 0 {
			break
		}
		out = append(out, hs...)
	}
	return out, c.FindObjectsFinal(sh)
}

// readPublic reads a public key object: its label, id, type and public key. A key of a type this
// package does not sign with has Type "".
func (t *Token) readPublic(sh pkcs11.SessionHandle, h pkcs11.ObjectHandle) (KeyInfo, error) {
	c := t.mod.ctx
	attrs, err := c.GetAttributeValue(sh, h, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, nil),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, nil),
		pkcs11.NewAttribute(pkcs11.CKA_ID, nil),
	})
	if err != nil {
		return KeyInfo{}, err
	}
	ki := KeyInfo{Label: string(attrs[1].Value), ID: slices.Clone(attrs[2].Value)}
	kt := ulong(attrs[0].Value)
	if kt != pkcs11.CKK_EC && kt != ckkECEdwards {
		return ki, nil
	}
	ec, err := c.GetAttributeValue(sh, h, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_EC_PARAMS, nil),
		pkcs11.NewAttribute(pkcs11.CKA_EC_POINT, nil),
	})
	if err != nil {
		return KeyInfo{}, err
	}
	params, point := ec[0].Value, ec[1].Value
	switch {
	case kt == ckkECEdwards && slices.ContainsFunc(paramsEd25519, func(p []byte) bool { return bytes.Equal(p, params) }):
		if pub := ecPoint(point, 32); pub != nil {
			ki.Type, ki.PublicKey = Ed25519, pub
		}
	case kt == pkcs11.CKK_EC && bytes.Equal(params, paramsSecp256k1):
		if raw := ecPoint(point, 65); raw != nil {
			if pub, err := compressSecp256k1(raw); err == nil {
				ki.Type, ki.PublicKey = Secp256k1, pub
			}
		}
	}
	return ki, nil
}

// ecPoint returns the n-byte point of a CKA_EC_POINT value: a DER OCTET STRING (the standard
// form) or, as some tokens return it, the raw point.
func ecPoint(v []byte, n int) []byte {
	var inner []byte
	if rest, err := asn1.Unmarshal(v, &inner); err == nil && len(rest) == 0 && len(inner) == n {
		return inner
	}
	if len(v) == n {
		return slices.Clone(v)
	}
	return nil
}

// ulong decodes a CK_ULONG attribute value (native byte order).
func ulong(b []byte) uint {
	switch len(b) {
	case 8:
		return uint(binary.NativeEndian.Uint64(b))
	case 4:
		return uint(binary.NativeEndian.Uint32(b))
	default:
		return ^uint(0)
	}
}

// List returns the public data of the token's key pairs of the types this package signs with,
// sorted by label. It never reads a private key's attributes.
func (t *Token) List() ([]KeyInfo, error) {
	var out []KeyInfo
	err := t.withSession(context.Background(), func(sh pkcs11.SessionHandle, _ bool) error {
		out = out[:0]
		hs, err := t.find(sh, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_PUBLIC_KEY)})
		if err != nil {
			return err
		}
		for _, h := range hs {
			ki, err := t.readPublic(sh, h)
			if err != nil {
				return err
			}
			if ki.Type != "" {
				out = append(out, ki)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hsm: token %q: list keys: %w", t.label, err)
	}
	slices.SortFunc(out, func(a, b KeyInfo) int {
		if c := strings.Compare(a.Label, b.Label); c != 0 {
			return c
		}
		return bytes.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Generate creates a key pair of type kt labelled label inside the token and returns its public
// key (32 bytes ed25519, 33 compressed bytes secp256k1). The private key is a token object,
// private, sensitive, never extractable, for signing only; both halves carry the label and a
// random 16-byte CKA_ID. A label the token already uses is refused.
func (t *Token) Generate(kt KeyType, label string) ([]byte, error) {
	if !kt.Valid() {
		return nil, configErr("unknown key type %q (want %s or %s)", kt, Ed25519, Secp256k1)
	}
	if label == "" {
		return nil, configErr("a key needs a label")
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("hsm: key id: %w", err)
	}
	var pub []byte
	err := t.withSession(context.Background(), func(sh pkcs11.SessionHandle, _ bool) error {
		used, err := t.find(sh, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_LABEL, label)})
		if err != nil {
			return err
		}
		if len(used) > 0 {
			return configErr("token %q already holds a key labelled %q", t.label, label)
		}
		var h pkcs11.ObjectHandle
		if kt == Ed25519 {
			for _, params := range paramsEd25519 {
				h, err = t.generate(sh, ckmECEdwardsKeyPairGen, params, label, id)
				if err == nil || !(isCode(err, pkcs11.CKR_CURVE_NOT_SUPPORTED) || isCode(err, pkcs11.CKR_ATTRIBUTE_VALUE_INVALID) ||
					isCode(err, pkcs11.CKR_DOMAIN_PARAMS_INVALID)) {
					break
				}
			}
		} else {
			h, err = t.generate(sh, pkcs11.CKM_EC_KEY_PAIR_GEN, paramsSecp256k1, label, id)
		}
		if err != nil {
			return err
		}
		ki, err := t.readPublic(sh, h)
		if err != nil {
			return err
		}
		if ki.Type != kt {
			return fmt.Errorf("the token made a key it does not describe as %s", kt)
		}
		pub = ki.PublicKey
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrConfig) || errors.Is(err, ErrLogin) {
			return nil, err
		}
		return nil, fmt.Errorf("hsm: token %q: generate %s key %q: %w", t.label, kt, label, err)
	}
	return pub, nil
}

func (t *Token) generate(sh pkcs11.SessionHandle, mech uint, params []byte, label string, id []byte) (pkcs11.ObjectHandle, error) {
	pubT := []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true),
		pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, false),
		pkcs11.NewAttribute(pkcs11.CKA_VERIFY, true),
		pkcs11.NewAttribute(pkcs11.CKA_EC_PARAMS, params),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, label),
		pkcs11.NewAttribute(pkcs11.CKA_ID, id),
	}
	privT := []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true),
		pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, true),
		pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, true),
		pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, false),
		pkcs11.NewAttribute(pkcs11.CKA_SIGN, true),
		pkcs11.NewAttribute(pkcs11.CKA_DECRYPT, false),
		pkcs11.NewAttribute(pkcs11.CKA_DERIVE, false),
		pkcs11.NewAttribute(pkcs11.CKA_UNWRAP, false),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, label),
		pkcs11.NewAttribute(pkcs11.CKA_ID, id),
	}
	pubH, _, err := t.mod.ctx.GenerateKeyPair(sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(mech, nil)}, pubT, privT)
	return pubH, err
}

// resolve finds the key a reference names: its public data and its private key's handle.
func (t *Token) resolve(sh pkcs11.SessionHandle, ref string) (KeyInfo, pkcs11.ObjectHandle, error) {
	label, id, err := parseRef(ref)
	if err != nil {
		return KeyInfo{}, 0, err
	}
	sel := func(class uint) []*pkcs11.Attribute {
		a := []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, class)}
		if id != nil {
			return append(a, pkcs11.NewAttribute(pkcs11.CKA_ID, id))
		}
		return append(a, pkcs11.NewAttribute(pkcs11.CKA_LABEL, label))
	}
	pubs, err := t.find(sh, sel(pkcs11.CKO_PUBLIC_KEY))
	if err != nil {
		return KeyInfo{}, 0, err
	}
	switch len(pubs) {
	case 0:
		return KeyInfo{}, 0, configErr("key %q: no such key in token %q", ref, t.label)
	case 1:
	default:
		return KeyInfo{}, 0, configErr("key %q: %d keys in token %q match; name it by id:<hex>", ref, len(pubs), t.label)
	}
	ki, err := t.readPublic(sh, pubs[0])
	if err != nil {
		return KeyInfo{}, 0, err
	}
	privs, err := t.find(sh, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_PRIVATE_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_ID, ki.ID),
	})
	if err != nil {
		return KeyInfo{}, 0, err
	}
	if len(privs) != 1 {
		return KeyInfo{}, 0, configErr("key %q: token %q holds %d private keys with its id %s, want 1", ref, t.label, len(privs), hex.EncodeToString(ki.ID))
	}
	return ki, privs[0], nil
}

// compressSecp256k1 parses an uncompressed or compressed secp256k1 point and returns its
// 33-byte compressed form.
func compressSecp256k1(point []byte) ([]byte, error) {
	k, err := secp256k1.ParsePubKey(point)
	if err != nil {
		return nil, err
	}
	return k.SerializeCompressed(), nil
}
