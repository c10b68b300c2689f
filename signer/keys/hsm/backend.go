//go:build cgo

package hsm

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/miekg/pkcs11"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// key is one key pair a Backend signs with.
type key struct {
	acct   keys.Account
	id     []byte
	uncomp []byte // secp256k1: the 65-byte uncompressed public key recovery is checked against

	mu   sync.Mutex
	priv pkcs11.ObjectHandle
}

// Backend signs with keys of one type in a token (keys.Backend, keys.Finder). It is safe for
// concurrent use.
type Backend struct {
	tok    *Token
	kt     KeyType
	accts  []keys.Account
	byAddr map[string]*key
	signs  atomic.Uint64
}

var (
	_ keys.Backend = (*Backend)(nil)
	_ keys.Finder  = (*Backend)(nil)
)

// Backend returns a key backend over the keys refs name ("label" or "id:<hex>"), each of type kt,
// their addresses made by addr from the public key (32 bytes ed25519, 33 compressed bytes
// secp256k1). A reference that names no key, several keys, or a key of another type is refused
// naming the reference. An account's Handle is "id:<hex>" of its key.
func (t *Token) Backend(kt KeyType, addr func(pub []byte) (string, error), refs []string) (*Backend, error) {
	if !kt.Valid() {
		return nil, configErr("unknown key type %q (want %s or %s)", kt, Ed25519, Secp256k1)
	}
	if addr == nil {
		return nil, configErr("no address function for %s keys", kt)
	}
	b := &Backend{tok: t, kt: kt, byAddr: map[string]*key{}}
	for _, ref := range refs {
		var (
			ki   KeyInfo
			priv pkcs11.ObjectHandle
		)
		err := t.withSession(context.Background(), func(sh pkcs11.SessionHandle, _ bool) error {
			var err error
			ki, priv, err = t.resolve(sh, ref)
			return err
		})
		if err != nil {
			if errors.Is(err, ErrConfig) || errors.Is(err, ErrLogin) {
				return nil, err
			}
			return nil, fmt.Errorf("hsm: token %q: key %q: %w", t.label, ref, err)
		}
		if ki.Type != kt {
			what := string(ki.Type)
			if what == "" {
				what = "a type this worker does not sign with"
			}
			return nil, configErr("key %q in token %q is %s, not %s", ref, t.label, what, kt)
		}
		a, err := addr(ki.PublicKey)
		if err != nil {
			return nil, configErr("key %q in token %q: address: %v", ref, t.label, err)
		}
		if _, dup := b.byAddr[a]; dup {
			continue
		}
		k := &key{acct: keys.Account{Address: a, PublicKey: ki.PublicKey, Handle: "id:" + hex.EncodeToString(ki.ID)}, id: ki.ID, priv: priv}
		if kt == Secp256k1 {
			pk, err := crypto.DecompressPubkey(ki.PublicKey)
			if err != nil {
				return nil, configErr("key %q in token %q: public key: %v", ref, t.label, err)
			}
			k.uncomp = crypto.FromECDSAPub(pk)
		}
		b.byAddr[a] = k
		b.accts = append(b.accts, k.acct)
	}
	return b, nil
}

// Accounts lists the backend's keys in the order of their references.
func (b *Backend) Accounts() []keys.Account { return append([]keys.Account(nil), b.accts...) }

// Account returns the account of an address (keys.Finder).
func (b *Backend) Account(address string) (keys.Account, bool) {
	k, ok := b.byAddr[address]
	if !ok {
		return keys.Account{}, false
	}
	return k.acct, true
}

// Signs returns how many C_Sign calls the backend has made.
func (b *Backend) Signs() uint64 { return b.signs.Load() }

// Sign signs payload under scheme with acct's key inside the token: keys.Ed25519 with CKM_EDDSA
// over the message; keys.Secp256k1Recoverable and keys.Secp256k1 with CKM_ECDSA over the 32-byte
// digest, the token's r || s normalised to low S and, for the recoverable scheme, V (0 or 1)
// found by recovering the account's public key. Every signature is checked against the
// account's public key before it is returned. Errors are *keys.SignError naming the account.
func (b *Backend) Sign(ctx context.Context, acct keys.Account, scheme keys.Scheme, payload []byte) ([]byte, error) {
	fail := func(err error) ([]byte, error) {
		return nil, &keys.SignError{Address: acct.Address, Scheme: scheme, Err: err}
	}
	k, ok := b.byAddr[acct.Address]
	if !ok {
		return fail(fmt.Errorf("token %q holds no key for this account in this backend", b.tok.label))
	}
	if !b.kt.signs(scheme) {
		return fail(fmt.Errorf("a %s key does not sign %s", b.kt, scheme))
	}
	if n := scheme.PayloadLen(); n != 0 && len(payload) != n {
		return fail(fmt.Errorf("payload is %d bytes, want %d", len(payload), n))
	}
	if len(payload) == 0 {
		return fail(errors.New("empty payload"))
	}
	mech := uint(pkcs11.CKM_ECDSA)
	if b.kt == Ed25519 {
		mech = ckmEdDSA
	}
	raw, err := b.signRaw(ctx, k, mech, payload)
	if err != nil {
		return fail(fmt.Errorf("token %q: %w", b.tok.label, err))
	}
	if len(raw) != 64 {
		return fail(fmt.Errorf("token %q returned a %d-byte signature, want 64", b.tok.label, len(raw)))
	}
	if b.kt == Ed25519 {
		if !ed25519.Verify(k.acct.PublicKey, payload, raw) {
			return fail(fmt.Errorf("token %q returned a signature that does not verify against the account's public key", b.tok.label))
		}
		return raw, nil
	}
	sig, err := recoverable(raw, payload, k.uncomp)
	if err != nil {
		return fail(fmt.Errorf("token %q: %w", b.tok.label, err))
	}
	if scheme == keys.Secp256k1 {
		return sig[:64], nil
	}
	return sig, nil
}

// signRaw makes one C_SignInit + C_Sign with k's private key.
func (b *Backend) signRaw(ctx context.Context, k *key, mech uint, payload []byte) ([]byte, error) {
	var sig []byte
	c := b.tok.mod.ctx
	err := b.tok.withSession(ctx, func(sh pkcs11.SessionHandle, retry bool) error {
		k.mu.Lock()
		h := k.priv
		k.mu.Unlock()
		if retry {
			hs, err := b.tok.find(sh, []*pkcs11.Attribute{
				pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_PRIVATE_KEY),
				pkcs11.NewAttribute(pkcs11.CKA_ID, k.id),
			})
			if err != nil {
				return err
			}
			if len(hs) != 1 {
				return fmt.Errorf("%d private keys with id %s, want 1", len(hs), hex.EncodeToString(k.id))
			}
			h = hs[0]
			k.mu.Lock()
			k.priv = h
			k.mu.Unlock()
		}
		if err := c.SignInit(sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(mech, nil)}, h); err != nil {
			return err
		}
		b.signs.Add(1)
		var err error
		sig, err = c.Sign(sh, payload)
		return err
	})
	return sig, err
}

// signs reports whether a key of type kt signs under scheme.
func (kt KeyType) signs(scheme keys.Scheme) bool {
	switch kt {
	case Ed25519:
		return scheme == keys.Ed25519
	case Secp256k1:
		return scheme == keys.Secp256k1Recoverable || scheme == keys.Secp256k1
	default:
		return false
	}
}
