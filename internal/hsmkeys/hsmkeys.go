// Package hsmkeys is how the worker's chains take their keys from an HSM through PKCS#11 instead
// of key files: the shared settings (--pkcs11-module, --pkcs11-token, --pkcs11-pin-file), one
// logged-in session on the token for the whole worker, and, for each chain that names keys on it
// (--solana-hsm-keys, --evm-hsm-keys, ...), a key backend (keys.Backend) over those keys that the
// chain's signer is built on with its *Backend constructor. The verifier stays in front: the
// backend signs only the bytes a chain's signer hands it after exact expectation.
//
// Refusals: a PIN file the group or others may read is refused at start, naming the file; a key
// the token does not hold is refused at start, naming the label or id and the setting. A token
// that refuses the PIN does not stop the worker: it runs unready (/readyz names the token and
// the PIN file, never the PIN) and logs in again on a backoff, but never twice with a PIN the
// token already refused (an HSM locks its user PIN after a few failed logins): it waits for the
// PIN file to change. The keys are looked up once logged in; a key missing then keeps the worker
// unready, naming it.
package hsmkeys

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// Settings are the worker's PKCS#11 settings, shared by every chain that signs with keys in the
// token.
type Settings struct {
	// Module is the path of the HSM vendor's PKCS#11 library (SoftHSM2:
	// /usr/lib/softhsm/libsofthsm2.so).
	Module string
	// Token is the label of the token holding the keys.
	Token string
	// PINFile holds the token's user PIN (one line); group and others must have no access.
	PINFile string
}

// Register adds the PKCS#11 flags to fs.
func (s *Settings) Register(fs *flag.FlagSet) {
	fs.StringVar(&s.Module, "pkcs11-module", "", "path of the HSM's PKCS#11 library (keys named by --<chain>-hsm-keys sign in its token; SoftHSM2: /usr/lib/softhsm/libsofthsm2.so)")
	fs.StringVar(&s.Token, "pkcs11-token", "", "label of the PKCS#11 token holding the keys")
	fs.StringVar(&s.PINFile, "pkcs11-pin-file", "", "file holding the token's user PIN (mode 0600 or stricter)")
}

// Enabled reports whether any PKCS#11 setting is given.
func (s Settings) Enabled() bool { return s.Module != "" || s.Token != "" || s.PINFile != "" }

// Validate checks that the settings come together: all three or none.
func (s Settings) Validate() error {
	if !s.Enabled() {
		return nil
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"--pkcs11-module", s.Module}, {"--pkcs11-token", s.Token}, {"--pkcs11-pin-file", s.PINFile}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: required with the other PKCS#11 settings", strings.Join(missing, " and "))
	}
	return nil
}

// ErrPINFileMode is wrapped by the error refusing a PIN file the group or others may access.
var ErrPINFileMode = keys.ErrPINFileMode

// KeyType is the type of a chain's keys in the token.
type KeyType string

const (
	// Ed25519 keys sign Solana's messages (CKM_EDDSA).
	Ed25519 KeyType = "ed25519"
	// Secp256k1 keys sign EVM, Hyperliquid and Celestia digests (CKM_ECDSA).
	Secp256k1 KeyType = "secp256k1"
)

// AddressFunc gives a chain's address text for a public key as the token holds it.
type AddressFunc func(pub []byte) (string, error)

// Session is a token logged in (package hsm's *Token).
type Session interface {
	Close() error
	// Backend is a key backend over the keys refs names (labels or "id:<hex>").
	Backend(kt KeyType, addr AddressFunc, refs []string) (Signing, error)
}

// Signing is a key backend on the token that counts its sign calls.
type Signing interface {
	keys.Backend
	Signs() uint64
}

// Driver opens tokens: Open opens and logs in to the token of s; IsLogin tells its error for a
// refused PIN from the others.
type Driver struct {
	Open    func(s Settings) (Session, error)
	IsLogin func(error) bool
}

var (
	driverMu sync.Mutex
	driver   *Driver
)

// Register makes d the driver Open uses. Package hsmkeys/pkcs11 registers the PKCS#11 one when
// imported (each chain's module imports it): the worker itself imports no chain's package.
func Register(d Driver) {
	driverMu.Lock()
	defer driverMu.Unlock()
	driver = &d
}

// minRetry and maxRetry bound the waits between two logins while the token refuses the PIN.
var (
	minRetry = time.Second
	maxRetry = time.Minute
)

// Token is the worker's session on the token, shared by every chain's keys.
type Token struct {
	s       Settings
	open    func(Settings) (Session, error)
	isLogin func(error) bool
	logger  *zap.Logger

	mu       sync.Mutex
	sess     Session
	reason   error    // why not logged in (nil once logged in)
	refused  [32]byte // digest of the PIN file content the token refused
	hasRefd  bool
	keys     []*Keys
	running  bool
	loggedIn chan struct{}
	closed   bool
	// skipped counts the retries not made because the PIN file still held a refused PIN.
	skipped atomic.Int64
}

// Open checks the PIN file and logs in to the token. A PIN file others may read, a module that
// does not load or a token that is not there is an error (the worker does not start); a PIN the
// token refuses is not: the Token is returned not logged in (Verified says why) and Run logs in
// again on a backoff.
func Open(s Settings, logger *zap.Logger) (*Token, error) {
	driverMu.Lock()
	d := driver
	driverMu.Unlock()
	if d == nil {
		return nil, errors.New("this worker has no PKCS#11 driver (import internal/hsmkeys/pkcs11)")
	}
	return OpenWith(s, logger, *d)
}

// OpenWith is Open through driver d.
func OpenWith(s Settings, logger *zap.Logger, d Driver) (*Token, error) {
	open, isLogin := d.Open, d.IsLogin
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !s.Enabled() {
		return nil, errors.New("no PKCS#11 token configured: set --pkcs11-module, --pkcs11-token and --pkcs11-pin-file")
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	t := &Token{s: s, open: open, isLogin: isLogin, logger: logger, loggedIn: make(chan struct{})}
	digest, err := t.pinDigest()
	if err != nil {
		return nil, err
	}
	if err := t.login(digest); err != nil && !isLogin(err) {
		return nil, err
	}
	return t, nil
}

// Settings are the token's settings.
func (t *Token) Settings() Settings { return t.s }

// pinDigest reads the PIN file (refusing one that is missing, not a regular file, empty, or that
// the group or others may access, keys.ReadPIN) and returns the SHA-256 of the PIN: what tells a
// PIN already refused from a new one, without keeping the PIN.
func (t *Token) pinDigest() ([32]byte, error) {
	pin, err := keys.ReadPIN(t.s.PINFile)
	if err != nil {
		return [32]byte{}, fmt.Errorf("--pkcs11-pin-file: %w", err)
	}
	d := sha256.Sum256(pin)
	clear(pin)
	return d, nil
}

// login opens the token once with the PIN file's PIN (of digest) and, on success, finds every
// chain's keys.
func (t *Token) login(digest [32]byte) error {
	sess, err := t.open(t.s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if t.isLogin(err) {
			t.refused, t.hasRefd = digest, true
			t.reason = fmt.Errorf("PKCS#11 token %q refused the PIN in %s (the file is read again every %s at most; a PIN refused once is not tried again: an HSM locks its PIN after a few failures)",
				t.s.Token, t.s.PINFile, maxRetry)
			t.logger.Error("PKCS#11 token refused the PIN: the keys on it stay unusable and the worker unready until the PIN file holds the right PIN",
				zap.String("token", t.s.Token), zap.String("pinFile", t.s.PINFile))
			return err
		}
		return fmt.Errorf("PKCS#11 token %q (module %s): %w", t.s.Token, t.s.Module, err)
	}
	if t.closed {
		_ = sess.Close()
		return errors.New("PKCS#11 token closed")
	}
	t.sess, t.reason = sess, nil
	close(t.loggedIn)
	t.logger.Info("PKCS#11 token logged in", zap.String("token", t.s.Token), zap.String("module", t.s.Module))
	for _, k := range t.keys {
		// A key missing now is kept in the keys' Verified (the chain stays unready, naming it).
		_ = k.resolve(sess)
	}
	return nil
}

// Verified is nil once the token is logged in, else why not (naming the token and the PIN file,
// never the PIN).
func (t *Token) Verified() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reason
}

// Run logs in again, while the token refuses the PIN, on a backoff from minRetry to maxRetry,
// until it is logged in or ctx is done. A PIN file whose content the token already refused is not
// tried again. Only the first call runs; later ones return at once.
func (t *Token) Run(ctx context.Context) {
	t.mu.Lock()
	if t.running || t.sess != nil {
		t.mu.Unlock()
		return
	}
	t.running = true
	t.mu.Unlock()
	wait := minRetry
	for {
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-t.loggedIn:
			timer.Stop()
			return
		case <-timer.C:
		}
		wait = min(2*wait, maxRetry)
		digest, err := t.pinDigest()
		if err != nil {
			t.logger.Warn("PKCS#11 PIN file refused", zap.String("pinFile", t.s.PINFile), zap.Error(err))
			continue
		}
		t.mu.Lock()
		same := t.hasRefd && digest == t.refused
		t.mu.Unlock()
		if same {
			t.skipped.Add(1)
			continue
		}
		if err := t.login(digest); err == nil {
			return
		} else if !t.isLogin(err) {
			t.mu.Lock()
			t.reason = err
			t.mu.Unlock()
			t.logger.Warn("PKCS#11 token not opened", zap.String("token", t.s.Token), zap.Error(err))
		}
	}
}

// Close ends the session.
func (t *Token) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.sess == nil {
		return nil
	}
	err := t.sess.Close()
	t.sess = nil
	return err
}

// Signs is the number of signatures the token made for every chain's keys.
func (t *Token) Signs() uint64 {
	t.mu.Lock()
	ks := append([]*Keys(nil), t.keys...)
	t.mu.Unlock()
	var n uint64
	for _, k := range ks {
		n += k.Signs()
	}
	return n
}

// Keys is a chain's key backend on the token over the keys its setting names. It answers no
// account and signs nothing until the token is logged in.
type Keys struct {
	t       *Token
	setting string
	kt      KeyType
	addr    AddressFunc
	refs    []string

	mu  sync.RWMutex
	b   Signing
	err error
}

var (
	_ keys.Backend = (*Keys)(nil)
	_ keys.Finder  = (*Keys)(nil)
)

// Keys is the key backend over the keys refs names (labels, or "id:<hex>" object ids) of type
// kt, each given the address addr derives; setting names the flag that lists them, in errors. A
// key the token does not hold is an error naming it when the token is logged in; otherwise it
// keeps Verified failing once the token logs in.
func (t *Token) Keys(setting string, kt KeyType, addr AddressFunc, refs []string) (*Keys, error) {
	if len(refs) == 0 {
		return nil, fmt.Errorf("%s names no key", setting)
	}
	k := &Keys{t: t, setting: setting, kt: kt, addr: addr, refs: append([]string(nil), refs...)}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keys = append(t.keys, k)
	if t.sess != nil {
		if err := k.resolve(t.sess); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// resolve finds the keys in a logged-in session.
func (k *Keys) resolve(sess Session) error {
	b, err := sess.Backend(k.kt, k.addr, k.refs)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		k.err = fmt.Errorf("%s %s: PKCS#11 token %q: %w", k.setting, strings.Join(k.refs, ","), k.t.s.Token, err)
		k.t.logger.Error("PKCS#11 key not usable", zap.String("setting", k.setting), zap.Error(k.err))
		return k.err
	}
	k.b, k.err = b, nil
	return nil
}

func (k *Keys) backend() Signing {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.b
}

// Accounts lists the keys (none before the token is logged in).
func (k *Keys) Accounts() []keys.Account {
	if b := k.backend(); b != nil {
		return b.Accounts()
	}
	return nil
}

// Account finds the key of an address (keys.Finder).
func (k *Keys) Account(address string) (keys.Account, bool) {
	if b := k.backend(); b != nil {
		return keys.Find(b, address)
	}
	return keys.Account{}, false
}

// Has reports whether the token holds the key of address.
func (k *Keys) Has(address string) bool {
	_, ok := k.Account(address)
	return ok
}

// Len is the number of keys found (0 before the token is logged in).
func (k *Keys) Len() int { return len(k.Accounts()) }

// Sign signs payload with acct's key in the token.
func (k *Keys) Sign(ctx context.Context, acct keys.Account, scheme keys.Scheme, payload []byte) ([]byte, error) {
	b := k.backend()
	if b == nil {
		if err := k.Verified(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("PKCS#11 token %q is not logged in", k.t.s.Token)
	}
	return b.Sign(ctx, acct, scheme, payload)
}

// Signs is the number of sign calls the token received for these keys.
func (k *Keys) Signs() uint64 {
	if b := k.backend(); b != nil {
		return b.Signs()
	}
	return 0
}

// Verified is nil once the token is logged in and holds every key named; else why not. It
// makes Keys a readiness check of the module that signs with them (module.Network).
func (k *Keys) Verified() error {
	if err := k.t.Verified(); err != nil {
		return err
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.err != nil {
		return k.err
	}
	if k.b == nil {
		return fmt.Errorf("PKCS#11 token %q is not logged in", k.t.s.Token)
	}
	return nil
}

// Run does nothing: the worker runs the token's logins (Token.Run) once for every chain.
func (k *Keys) Run(context.Context) {}

// CheckChoice checks one chain's key settings: its key files (fileFlag, set when fileSet) or its
// keys in the token (hsmFlag, refs), not both.
func CheckChoice(fileFlag string, fileSet bool, hsmFlag string, refs []string) error {
	if fileSet && len(refs) > 0 {
		return fmt.Errorf("%s and %s are both set: a chain signs with key files or with keys in the HSM, not both", fileFlag, hsmFlag)
	}
	return nil
}

// KeysOf is t.Keys, or an error naming setting and the PKCS#11 settings when the worker has no
// token (t nil).
func KeysOf(t *Token, setting string, kt KeyType, addr AddressFunc, refs []string) (*Keys, error) {
	if t == nil {
		return nil, fmt.Errorf("%s names keys in an HSM but no token is configured: set --pkcs11-module, --pkcs11-token and --pkcs11-pin-file", setting)
	}
	return t.Keys(setting, kt, addr, refs)
}
