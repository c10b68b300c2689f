package signer

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/keys"
	"github.com/stakeflow/stakeflow/signer/keys/keystest"
)

// TestSignHandsTheBackendTheVerifiedMessage: for every web3.js vector, the signer hands its key
// backend exactly web3.js's message bytes under ed25519 for the staker's account, once, and the
// signed transaction is web3.js's.
func TestSignHandsTheBackendTheVerifiedMessage(t *testing.T) {
	v := readWeb3jsVectors(t)
	f := newFixture()
	for _, x := range v.Vectors {
		t.Run(x.Name, func(t *testing.T) {
			rec := &keystest.Recorder{Inner: f.keyring()}
			s := NewSolanaBackend(rec, SolanaPolicy{AllowedVoteAccounts: []string{f.vote.String()}})
			signed, err := s.Sign(context.Background(), x.Transaction, v.intent(t, x))
			require.NoError(t, err)
			want, err := hex.DecodeString(x.Message)
			require.NoError(t, err)
			calls := rec.Calls()
			require.Len(t, calls, 1)
			assert.Equal(t, f.staker.String(), calls[0].Account.Address)
			assert.Equal(t, keys.Ed25519, calls[0].Scheme)
			assert.Equal(t, want, calls[0].Payload, "the payload is web3.js's message")
			assert.Equal(t, x.SignedTransaction, signed.SignedTransaction)
		})
	}
}

// TestSignSurfacesABackendError: a backend that does not sign makes Sign fail with a
// *keys.SignError naming the staker and the backend's reason, and return nothing signed.
func TestSignSurfacesABackendError(t *testing.T) {
	v := readWeb3jsVectors(t)
	f := newFixture()
	x := v.Vectors[0]
	rec := &keystest.Recorder{Inner: f.keyring(), Err: errors.New("token removed")}
	s := NewSolanaBackend(rec, SolanaPolicy{AllowedVoteAccounts: []string{f.vote.String()}})
	signed, err := s.Sign(context.Background(), x.Transaction, v.intent(t, x))
	require.ErrorIs(t, err, keys.ErrSign)
	var se *keys.SignError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, f.staker.String(), se.Address)
	assert.Contains(t, err.Error(), f.staker.String())
	assert.Contains(t, err.Error(), "token removed")
	assert.Nil(t, signed, "nothing signed")
	assert.Len(t, rec.Calls(), 1)
}
