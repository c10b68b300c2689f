package evm

import (
	"context"
	"fmt"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"go.temporal.io/sdk/temporal"
)

// ErrSignedUnavailable: the step names a signed transaction by hash only, and neither this
// worker's RawCache nor the node holds its bytes: they never reached the node from here (the
// worker that signed them stopped, or another worker signed them). Nothing was sent; the chain
// decides (Confirm follows the hash, and asks for a replacement under the same nonce).
const ErrSignedUnavailable = "EVMSignedUnavailable"

// DefaultRawCacheEntries bounds a RawCache made by NewRawCache(0): at the largest transactions
// the worker signs (an EigenLayer proofs batch, about 40 KB) a few megabytes.
const DefaultRawCacheEntries = 128

// RawCache keeps transaction bytes that workflows name by a 32-byte reference only (a signed
// transaction's hash, the Keccak-256 digest of a served transaction), so that large
// transactions never enter workflow history. It is in the worker's memory, bounded (the oldest
// entry goes first), and lost on restart: every reader has a way back when an entry is missing
// (the node for signed bytes, the staking service for served ones). Safe for concurrent use.
type RawCache struct {
	mu    sync.Mutex
	max   int
	order []common.Hash
	m     map[common.Hash][]byte
}

// NewRawCache is a cache of at most entries (0: DefaultRawCacheEntries).
func NewRawCache(entries int) *RawCache {
	if entries <= 0 {
		entries = DefaultRawCacheEntries
	}
	return &RawCache{max: entries, m: map[common.Hash][]byte{}}
}

// Put keeps raw under key (a copy).
func (c *RawCache) Put(key common.Hash, raw []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok {
		c.order = append(c.order, key)
	}
	c.m[key] = append([]byte(nil), raw...)
	for len(c.order) > c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

// Get is the bytes kept under key (a copy).
func (c *RawCache) Get(key common.Hash) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, ok := c.m[key]
	return append([]byte(nil), raw...), ok
}

// PutSigned keeps a signed transaction under its hash.
func (c *RawCache) PutSigned(raw []byte) (common.Hash, error) {
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		return common.Hash{}, fmt.Errorf("the signed transaction does not decode: %w", err)
	}
	c.Put(tx.Hash(), raw)
	return tx.Hash(), nil
}

// signedBytes are the signed bytes of the transaction hash: given (0x hex) when the step carries
// them, else this worker's RawCache, else the node's copy (a transaction it has pending or
// mined, re-encoded and checked to hash to hash). None of them: ErrSignedUnavailable.
func (a *Activities) signedBytes(ctx context.Context, c Chain, hash common.Hash, given string) ([]byte, error) {
	if given != "" {
		return decodeHex(given)
	}
	if raw, ok := a.Raw.Get(hash); ok {
		return raw, nil
	}
	l, err := c.Transaction(ctx, hash)
	if err != nil {
		return nil, chainErr("looking up "+hash.Hex(), err)
	}
	if l.Tx != nil && l.Tx.Hash() == hash {
		raw, err := l.Tx.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("re-encoding %s: %w", hash.Hex(), err)
		}
		return raw, nil
	}
	return nil, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("the signed bytes of %s are neither in this worker's cache nor on the node: nothing was sent from here; the chain decides", hash.Hex()),
		ErrSignedUnavailable, nil)
}
