package evm

import (
	"context"
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/keys"
	"github.com/stakeflow/stakeflow/signer/keys/keystest"
)

// TestSignHandsTheBackendTheSigningHash: for every ethers vector, the signer hands its key
// backend exactly ethers' signing hash (unsignedHash) under recoverable secp256k1 for the
// staker's account, once, and the signed transaction is ethers'.
func TestSignHandsTheBackendTheSigningHash(t *testing.T) {
	v := loadVectors(t)
	kr := testSigner(t, v).backend.(*Keyring)
	for _, x := range v.Vectors {
		t.Run(x.Name, func(t *testing.T) {
			rec := &keystest.Recorder{Inner: kr}
			s, err := NewBackend(rec, testPolicy(v))
			require.NoError(t, err)
			signed, err := s.Sign(context.Background(), intentFor(t, v, x, false), mustHex(t, x.Unsigned))
			require.NoError(t, err)
			calls := rec.Calls()
			require.Len(t, calls, 1)
			assert.Equal(t, common.HexToAddress(v.Key.Address).Hex(), calls[0].Account.Address)
			assert.Equal(t, keys.Secp256k1Recoverable, calls[0].Scheme)
			assert.Equal(t, x.UnsignedHash, hexutil.Encode(calls[0].Payload), "the payload is ethers' signing hash")
			assert.Equal(t, x.Signed, signed.Transaction)
		})
	}
}

// TestSignSurfacesABackendError: a backend that does not sign makes Sign fail with a
// *keys.SignError naming the staker and the backend's reason, and return nothing signed.
func TestSignSurfacesABackendError(t *testing.T) {
	v := loadVectors(t)
	x := v.Vectors[0]
	rec := &keystest.Recorder{Inner: testSigner(t, v).backend.(*Keyring), Err: errors.New("token removed")}
	s, err := NewBackend(rec, testPolicy(v))
	require.NoError(t, err)
	signed, err := s.Sign(context.Background(), intentFor(t, v, x, false), mustHex(t, x.Unsigned))
	require.ErrorIs(t, err, keys.ErrSign)
	addr := common.HexToAddress(v.Key.Address).Hex()
	var se *keys.SignError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, addr, se.Address)
	assert.Contains(t, err.Error(), addr)
	assert.Contains(t, err.Error(), "token removed")
	assert.Nil(t, signed, "nothing signed")
	assert.Len(t, rec.Calls(), 1)
}
