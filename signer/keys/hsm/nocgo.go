//go:build !cgo

package hsm

import (
	"context"
	"fmt"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// errNoCgo is every error of a binary built without cgo: PKCS#11 modules are C libraries loaded
// with dlopen, which needs cgo.
var errNoCgo = fmt.Errorf("%w: built without cgo: PKCS#11 unavailable", ErrUnavailable)

// Token is a PKCS#11 token; without cgo none can be opened.
type Token struct{}

// Open fails: this binary was built without cgo.
func Open(Config) (*Token, error) { return nil, errNoCgo }

// Close does nothing.
func (t *Token) Close() error { return nil }

// Generate fails: this binary was built without cgo.
func (t *Token) Generate(KeyType, string) ([]byte, error) { return nil, errNoCgo }

// List fails: this binary was built without cgo.
func (t *Token) List() ([]KeyInfo, error) { return nil, errNoCgo }

// Backend fails: this binary was built without cgo.
func (t *Token) Backend(KeyType, func([]byte) (string, error), []string) (*Backend, error) {
	return nil, errNoCgo
}

// Backend is a key backend over a token's keys; without cgo it holds none.
type Backend struct{}

var _ keys.Backend = (*Backend)(nil)

// Accounts returns nothing.
func (b *Backend) Accounts() []keys.Account { return nil }

// Account finds nothing.
func (b *Backend) Account(string) (keys.Account, bool) { return keys.Account{}, false }

// Signs returns 0.
func (b *Backend) Signs() uint64 { return 0 }

// Sign fails: this binary was built without cgo.
func (b *Backend) Sign(_ context.Context, acct keys.Account, scheme keys.Scheme, _ []byte) ([]byte, error) {
	return nil, &keys.SignError{Address: acct.Address, Scheme: scheme, Err: errNoCgo}
}
