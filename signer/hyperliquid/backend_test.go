package hyperliquid

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/keys"
	"github.com/stakeflow/stakeflow/signer/keys/keystest"
)

// goldenAction is TestGoldenSignatures' first vector: its EIP-712 digest and signature are
// ethers v6's (testdata/vectors.js).
var goldenAction = Action{Type: TypeCWithdraw, SignatureChainID: "0x66eee", HyperliquidChain: "Testnet", Wei: 150000000, Nonce: 1764000000000}

const goldenDigest = "0xc6f8d075a0975319b3854fd05c6e567563bb22dabf5db9d392331dc202b0f839"

func recordingSigner(t *testing.T, rec *keystest.Recorder) *Signer {
	s := NewBackend(rec, Policy{})
	s.now = func() time.Time { return time.UnixMilli(int64(goldenAction.Nonce)) }
	return s
}

// TestSignHandsTheBackendTheEIP712Digest: the signer hands its key backend exactly ethers'
// EIP-712 digest under recoverable secp256k1 for the delegator's account, once, and the
// signature is ethers'.
func TestSignHandsTheBackendTheEIP712Digest(t *testing.T) {
	rec := &keystest.Recorder{Inner: keyring(t, sdkKey, web3Key)}
	s := recordingSigner(t, rec)
	signed, err := s.Sign(context.Background(), Intent{Network: "testnet", Delegator: common.HexToAddress(sdkAddr), Amount: "1.5"}, &Unsigned{Action: goldenAction})
	require.NoError(t, err)
	calls := rec.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, sdkAddr, calls[0].Account.Address)
	assert.Equal(t, keys.Secp256k1Recoverable, calls[0].Scheme)
	assert.Equal(t, goldenDigest, hexutil.Encode(calls[0].Payload), "the payload is ethers' digest")
	assert.Equal(t, Signature{R: "0xef4d7db06c2ae5fdb6522d371e2402d51d99cef39e2160d90a15f732bacf2f8d",
		S: "0x5030d85513625bfc390f5b871eed7862ca0cd55ffd9352d635799c49758b3f60", V: 27}, signed.Signature)
}

// TestSignSurfacesABackendError: a backend that does not sign makes Sign fail with a
// *keys.SignError naming the delegator and the backend's reason, and return nothing signed; the
// nonce is not booked, so a working backend then signs the same action.
func TestSignSurfacesABackendError(t *testing.T) {
	rec := &keystest.Recorder{Inner: keyring(t, sdkKey), Err: errors.New("token removed")}
	s := recordingSigner(t, rec)
	in := Intent{Network: "testnet", Delegator: common.HexToAddress(sdkAddr), Amount: "1.5"}
	signed, err := s.Sign(context.Background(), in, &Unsigned{Action: goldenAction})
	require.ErrorIs(t, err, keys.ErrSign)
	var se *keys.SignError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, sdkAddr, se.Address)
	assert.Contains(t, err.Error(), sdkAddr)
	assert.Contains(t, err.Error(), "token removed")
	assert.Nil(t, signed, "nothing signed")
	rec.Err = nil
	_, err = s.Sign(context.Background(), in, &Unsigned{Action: goldenAction})
	require.NoError(t, err)
}
