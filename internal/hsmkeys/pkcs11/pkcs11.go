// Package pkcs11 is hsmkeys' driver over package hsm (PKCS#11), and the chains' address functions
// over the public keys a token holds. Importing it (each chain's module does) registers the
// driver, so that the worker, which knows no chain's package, opens the token through it.
package pkcs11

import (
	"errors"

	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/signer/keys/hsm"
)

func init() {
	hsmkeys.Register(hsmkeys.Driver{Open: open, IsLogin: func(err error) bool { return errors.Is(err, hsm.ErrLogin) }})
}

// open opens and logs in to the token through package hsm.
func open(s hsmkeys.Settings) (hsmkeys.Session, error) {
	t, err := hsm.Open(hsm.Config{Module: s.Module, Token: s.Token, PINFile: s.PINFile})
	if err != nil {
		return nil, err
	}
	return session{t}, nil
}

// session adapts *hsm.Token to hsmkeys.Session.
type session struct{ t *hsm.Token }

func (h session) Close() error { return h.t.Close() }

func (h session) Backend(kt hsmkeys.KeyType, addr hsmkeys.AddressFunc, refs []string) (hsmkeys.Signing, error) {
	b, err := h.t.Backend(hsm.KeyType(kt), addr, refs)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// The chains' address functions over the public keys the token holds.
var (
	// SolanaAddress: base58 of the 32-byte ed25519 public key.
	SolanaAddress hsmkeys.AddressFunc = hsm.SolanaAddress
	// EVMAddress: the checksummed 0x address (Polygon, EigenLayer, Hyperliquid).
	EVMAddress hsmkeys.AddressFunc = hsm.EVMAddress
)

// CosmosAddress is the bech32 account address under prefix hrp (Celestia: "celestia").
func CosmosAddress(hrp string) hsmkeys.AddressFunc { return hsm.CosmosAddress(hrp) }
