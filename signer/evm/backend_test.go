package evm

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
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

// TestCheckpointSignHandsTheBackendTheSigningHash: the checkpoint signer built on a key backend
// hands it the EIP-1559 signing hash (as go-ethereum's London signer computes it) of the verified
// startCheckpoint, for the owner's account, once; what it returns is that transaction signed.
func TestCheckpointSignHandsTheBackendTheSigningHash(t *testing.T) {
	files, owner := checkpointSigner(t)
	rec := &keystest.Recorder{Inner: files.keys}
	s, err := NewCheckpointSignerBackend(rec, CheckpointPolicy{ChainID: testChain})
	require.NoError(t, err)
	unsignedTx := types.NewTx(&types.DynamicFeeTx{ChainID: new(big.Int).SetUint64(testChain), Nonce: 3, GasTipCap: big.NewInt(params.GWei),
		GasFeeCap: big.NewInt(2 * params.GWei), Gas: 100_000, To: &testPod, Value: new(big.Int),
		Data: append(common.FromHex("0x88676cad"), make([]byte, 32)...)})
	raw, err := unsignedTx.MarshalBinary()
	require.NoError(t, err)
	in := StartIntent{ChainID: testChain, Owner: owner, Pod: testPod,
		TxChoices: TxChoices{Nonce: 3, GasLimit: 100_000, MaxFeePerGas: big.NewInt(2 * params.GWei), MaxPriorityFeePerGas: big.NewInt(params.GWei)}}
	signed, err := s.SignStart(context.Background(), in, raw)
	require.NoError(t, err)
	calls := rec.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, owner.Hex(), calls[0].Account.Address)
	assert.Equal(t, keys.Secp256k1Recoverable, calls[0].Scheme)
	want := types.NewLondonSigner(new(big.Int).SetUint64(testChain)).Hash(unsignedTx)
	assert.Equal(t, want.Bytes(), calls[0].Payload, "the payload is the transaction's signing hash")
	var tx types.Transaction
	require.NoError(t, tx.UnmarshalBinary(common.FromHex(signed.Transaction)))
	from, err := types.Sender(types.NewLondonSigner(new(big.Int).SetUint64(testChain)), &tx)
	require.NoError(t, err)
	assert.Equal(t, owner, from, "the signature recovers to the owner")
}
