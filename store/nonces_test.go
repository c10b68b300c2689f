package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/store"
)

// TestClaimNonce: a nonce of a key is claimed by one operation: claiming again for it changes
// nothing, another operation is refused naming the first (also after the store is closed and
// opened again, and whatever the address's case), and the same nonce of another key is free.
func TestClaimNonce(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		const (
			a     = "0xAbCdEf0000000000000000000000000000000001"
			b     = "0x0000000000000000000000000000000000000002"
			nonce = uint64(1764000000000)
		)
		at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		db, err := store.Open(ctx, dsn)
		require.NoError(t, err)
		require.NoError(t, db.ClaimNonce(ctx, a, nonce, "op-1", at))
		require.NoError(t, db.ClaimNonce(ctx, a, nonce, "op-1", at), "the same operation again")
		require.NoError(t, db.ClaimNonce(ctx, b, nonce, "op-2", at), "another key's nonce")
		require.NoError(t, db.Close())

		again := open(t, dsn)
		err = again.ClaimNonce(ctx, "0xabcdef0000000000000000000000000000000001", nonce, "op-2", at)
		var taken *store.NonceTakenError
		require.True(t, errors.As(err, &taken), "%v", err)
		assert.Equal(t, "op-1", taken.Operation)
		assert.Contains(t, err.Error(), "op-1")
		require.NoError(t, again.ClaimNonce(ctx, a, nonce, "op-1", at), "the first operation still holds it")
		require.NoError(t, again.ClaimNonce(ctx, a, nonce+1, "op-2", time.Time{}))

		var n int
		require.NoError(t, raw(t, dsn).QueryRowContext(ctx, `SELECT COUNT(*) FROM hyperliquid_nonces`).Scan(&n))
		assert.Equal(t, 3, n)
	})
}

// TestClaimNonceConcurrent: operations claiming one nonce at once through two stores: exactly one
// wins.
func TestClaimNonceConcurrent(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		dbs := []*store.DB{open(t, dsn), open(t, dsn)}
		const workers = 8
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = dbs[i%2].ClaimNonce(ctx, "0x0000000000000000000000000000000000000003", 42, "op-"+string(rune('a'+i)), time.Now())
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			var taken *store.NonceTakenError
			if err == nil {
				won++
			} else {
				require.True(t, errors.As(err, &taken), "%v", err)
			}
		}
		assert.Equal(t, 1, won)
	})
}

func TestClaimNonceRefusesOutOfRange(t *testing.T) {
	db := open(t, "sqlite:"+t.TempDir()+"/s.db")
	assert.Error(t, db.ClaimNonce(context.Background(), "0x01", 1<<63, "op", time.Now()))
	assert.Error(t, db.ClaimNonce(context.Background(), "0x01", 1, "", time.Now()))
}
