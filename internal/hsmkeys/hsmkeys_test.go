package hsmkeys

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// fakeToken is a token holding ed25519 keys by label, with a PIN.
type fakeToken struct {
	pin  string
	keys map[string]ed25519.PrivateKey

	mu    sync.Mutex
	opens []string // the PIN of each login attempt
	signs int
}

var errFakeLogin = errors.New("CKR_PIN_INCORRECT")

func (f *fakeToken) open(s Settings) (Session, error) {
	raw, err := os.ReadFile(s.PINFile)
	if err != nil {
		return nil, err
	}
	pin := strings.TrimSpace(string(raw))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opens = append(f.opens, pin)
	if pin != f.pin {
		return nil, fmt.Errorf("token %q: %w", s.Token, errFakeLogin)
	}
	return fakeSession{f}, nil
}

func (f *fakeToken) attempts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.opens...)
}

type fakeSession struct{ f *fakeToken }

func (s fakeSession) Close() error { return nil }

func (s fakeSession) Backend(kt KeyType, addr AddressFunc, refs []string) (Signing, error) {
	b := &fakeBackend{f: s.f}
	for _, r := range refs {
		k, ok := s.f.keys[r]
		if !ok {
			return nil, fmt.Errorf("no key labelled %q", r)
		}
		pub := k.Public().(ed25519.PublicKey)
		a, err := addr(pub)
		if err != nil {
			return nil, err
		}
		b.accts = append(b.accts, keys.Account{Address: a, PublicKey: pub, Handle: r})
	}
	return b, nil
}

type fakeBackend struct {
	f     *fakeToken
	accts []keys.Account
}

func (b *fakeBackend) Accounts() []keys.Account { return b.accts }

func (b *fakeBackend) Sign(_ context.Context, acct keys.Account, _ keys.Scheme, payload []byte) ([]byte, error) {
	b.f.mu.Lock()
	defer b.f.mu.Unlock()
	b.f.signs++
	return ed25519.Sign(b.f.keys[acct.Handle], payload), nil
}

func (b *fakeBackend) Signs() uint64 {
	b.f.mu.Lock()
	defer b.f.mu.Unlock()
	return uint64(b.f.signs)
}

func hexAddr(pub []byte) (string, error) { return hex.EncodeToString(pub), nil }

func newFake(t *testing.T, pin string) (*fakeToken, Settings) {
	t.Helper()
	dir := t.TempDir()
	s := Settings{Module: "/lib/fake-pkcs11.so", Token: "stakeflow", PINFile: filepath.Join(dir, "pin")}
	require.NoError(t, os.WriteFile(s.PINFile, []byte(pin+"\n"), 0o600))
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	return &fakeToken{pin: "1234-right", keys: map[string]ed25519.PrivateKey{"solana-0": ed25519.NewKeyFromSeed(seed)}}, s
}

func isFakeLogin(err error) bool { return errors.Is(err, errFakeLogin) }

// TestPINFileOthersMayReadIsRefused: a PIN file the group or others may access is refused at
// start, naming the file and never reading the PIN to the token.
func TestPINFileOthersMayReadIsRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660} {
		f, s := newFake(t, "1234-right")
		require.NoError(t, os.Chmod(s.PINFile, mode))
		_, err := OpenWith(s, nil, Driver{f.open, isFakeLogin})
		require.ErrorIs(t, err, ErrPINFileMode, "mode %#o", mode)
		assert.Contains(t, err.Error(), s.PINFile)
		assert.Contains(t, err.Error(), "--pkcs11-pin-file")
		assert.NotContains(t, err.Error(), "1234-right")
		assert.Empty(t, f.attempts(), "the token is never asked with a PIN file others may read")
	}
}

// TestSettingsComeTogether: one PKCS#11 setting without the others is refused naming those missing.
func TestSettingsComeTogether(t *testing.T) {
	require.NoError(t, Settings{}.Validate())
	err := Settings{Module: "/lib/x.so"}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--pkcs11-token and --pkcs11-pin-file")
}

// TestWrongPINKeepsKeysUnusableThenLogsInOnceFixed: a token that refuses the PIN does not stop the
// start; its keys hold no account and sign nothing, Verified names the token and the PIN file
// (never the PIN); the same PIN is never tried twice however long it waits; once the PIN file
// holds the right PIN the token logs in on the backoff and the keys sign.
func TestWrongPINKeepsKeysUnusableThenLogsInOnceFixed(t *testing.T) {
	defer func(a, b time.Duration) { minRetry, maxRetry = a, b }(minRetry, maxRetry)
	minRetry, maxRetry = time.Millisecond, 2*time.Millisecond
	f, s := newFake(t, "9999-wrong")
	tok, err := OpenWith(s, nil, Driver{f.open, isFakeLogin})
	require.NoError(t, err)
	k, err := tok.Keys("--solana-hsm-keys", Ed25519, hexAddr, []string{"solana-0"})
	require.NoError(t, err, "a key is looked up once logged in")
	why := k.Verified()
	require.Error(t, why)
	assert.Contains(t, why.Error(), `token "stakeflow" refused the PIN in `+s.PINFile)
	assert.NotContains(t, why.Error(), "9999-wrong")
	assert.Zero(t, k.Len())
	_, err = k.Sign(context.Background(), keys.Account{Address: "x", Handle: "solana-0"}, keys.Ed25519, []byte("m"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "9999-wrong")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); tok.Run(ctx) }()
	require.Eventually(t, func() bool { return tok.skipped.Load() >= 5 }, 10*time.Second, time.Millisecond)
	require.Equal(t, []string{"9999-wrong"}, f.attempts(), "a PIN the token refused is not tried again")

	require.NoError(t, os.WriteFile(s.PINFile, []byte("1234-right\n"), 0o600))
	<-done
	require.NoError(t, k.Verified())
	require.NoError(t, tok.Verified())
	assert.Equal(t, []string{"9999-wrong", "1234-right"}, f.attempts())
	require.Equal(t, 1, k.Len())
	acct, ok := k.Account(k.Accounts()[0].Address)
	require.True(t, ok)
	sig, err := keys.Sign(context.Background(), k, acct, keys.Ed25519, []byte("message"))
	require.NoError(t, err)
	assert.True(t, ed25519.Verify(acct.PublicKey, []byte("message"), sig))
	assert.Equal(t, uint64(1), tok.Signs())
}

// TestUnknownKeyRefusedNamingIt: a label the token does not hold is refused when the chain's keys
// are built on a logged-in token (the worker's start), naming the setting and the label; on a
// token that logs in later it keeps the keys unready, naming them.
func TestUnknownKeyRefusedNamingIt(t *testing.T) {
	f, s := newFake(t, "1234-right")
	tok, err := OpenWith(s, nil, Driver{f.open, isFakeLogin})
	require.NoError(t, err)
	_, err = tok.Keys("--solana-hsm-keys", Ed25519, hexAddr, []string{"solana-0", "no-such-key"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--solana-hsm-keys")
	assert.Contains(t, err.Error(), `"no-such-key"`)

	defer func(a, b time.Duration) { minRetry, maxRetry = a, b }(minRetry, maxRetry)
	minRetry, maxRetry = time.Millisecond, time.Millisecond
	f, s = newFake(t, "wrong")
	tok, err = OpenWith(s, nil, Driver{f.open, isFakeLogin})
	require.NoError(t, err)
	k, err := tok.Keys("--evm-hsm-keys", Ed25519, hexAddr, []string{"no-such-key"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.PINFile, []byte("1234-right"), 0o600))
	tok.Run(context.Background())
	require.NoError(t, tok.Verified())
	require.Error(t, k.Verified())
	assert.Contains(t, k.Verified().Error(), `--evm-hsm-keys no-such-key`)
}

// TestTokenThatCannotOpenStopsTheStart: an error other than a refused PIN (a module that does not
// load, a token no slot holds) is refused at start.
func TestTokenThatCannotOpenStopsTheStart(t *testing.T) {
	_, s := newFake(t, "1234-right")
	_, err := OpenWith(s, nil, Driver{func(Settings) (Session, error) { return nil, errors.New("no slot holds token") }, isFakeLogin})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `PKCS#11 token "stakeflow"`)
	assert.Contains(t, err.Error(), "no slot holds token")
}

// TestCheckChoiceNamesBothFlags: a chain given key files and keys in the HSM is refused, naming both.
func TestCheckChoiceNamesBothFlags(t *testing.T) {
	require.NoError(t, CheckChoice("--solana-keys", false, "--solana-hsm-keys", []string{"a"}))
	require.NoError(t, CheckChoice("--solana-keys", true, "--solana-hsm-keys", nil))
	err := CheckChoice("--solana-keys", true, "--solana-hsm-keys", []string{"a"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--solana-keys and --solana-hsm-keys are both set")
	_, err = KeysOf(nil, "--celestia-hsm-keys", Secp256k1, hexAddr, []string{"a"})
	assert.ErrorContains(t, err, "--celestia-hsm-keys names keys in an HSM but no token is configured")
}
