package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// NonceTakenError is a nonce another operation recorded first for the same key.
type NonceTakenError struct {
	Address   string
	Nonce     uint64
	Operation string
}

func (e *NonceTakenError) Error() string {
	return fmt.Sprintf("nonce %d of %s was recorded by operation %s", e.Nonce, e.Address, e.Operation)
}

// ClaimNonce records that operation signs with nonce under the key of address (a 0x address,
// compared without case), before it signs. Claiming again for the same operation succeeds and
// changes nothing; a nonce another operation claimed is a *NonceTakenError naming it. Claims are
// kept across restarts: a nonce is never claimed by two operations.
func (db *DB) ClaimNonce(ctx context.Context, address string, nonce uint64, operation string, at time.Time) error {
	if address == "" || operation == "" {
		return errors.New("store: nonce claim without an address or an operation")
	}
	if nonce > math.MaxInt64 {
		return fmt.Errorf("store: nonce %d is past what the store keeps", nonce)
	}
	address = strings.ToLower(address)
	if at.IsZero() {
		at = time.Now()
	}
	const ins = `INSERT INTO hyperliquid_nonces (address, nonce, operation, signed_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (address, nonce) DO NOTHING`
	if _, err := db.sql.ExecContext(ctx, ins, address, int64(nonce), operation, db.timeArg(at)); err != nil {
		return fmt.Errorf("store: claiming nonce %d of %s: %w", nonce, address, err)
	}
	var owner string
	if err := db.sql.QueryRowContext(ctx, `SELECT operation FROM hyperliquid_nonces WHERE address = $1 AND nonce = $2`, address, int64(nonce)).Scan(&owner); err != nil {
		return fmt.Errorf("store: reading the claim of nonce %d of %s: %w", nonce, address, err)
	}
	if owner != operation {
		return &NonceTakenError{Address: address, Nonce: nonce, Operation: owner}
	}
	return nil
}
