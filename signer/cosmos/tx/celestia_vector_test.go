package tx

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CelestiaVector is a real Celestia transaction with where it was published
// (testdata/celestia_mainnet_delegate.json: a MsgDelegate from block 408 of Celestia mainnet, as
// celestia-app's x/blob/test/testdata/block_response.json holds it).
type CelestiaVector struct {
	Source   string `json:"source"`
	ChainID  string `json:"chainId"`
	Height   int64  `json:"height"`
	Index    int    `json:"index"`
	TxBase64 string `json:"txBase64"`
	SHA256   string `json:"sha256"`
}

// LoadCelestiaVector reads the vector at path and checks its integrity.
func LoadCelestiaVector(t *testing.T, path string) (CelestiaVector, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v CelestiaVector
	require.NoError(t, json.Unmarshal(b, &v))
	raw, err := base64.StdEncoding.DecodeString(v.TxBase64)
	require.NoError(t, err)
	sum := sha256.Sum256(raw)
	require.Equal(t, v.SHA256, hex.EncodeToString(sum[:]), "fixture integrity")
	return v, raw
}

// The fields of the real transaction, read from its bytes independently of this package (the
// block's transaction walked field by field at the protobuf wire level, outside this package): one MsgDelegate of
// 250000000 utia, no memo, no timeout height; one signer at sequence 0 in
// SIGN_MODE_LEGACY_AMINO_JSON (127, a Ledger/Keplr amino signature); fee 44172 utia for gas 220856.
const (
	celestiaDelegator = "celestia1gz6y8kg22crcg7d3va3q936llmufjvhp2g7deq"
	celestiaValidator = "celestiavaloper1pnzrk7yzx0nr9xrcjyswj7ram4qxlrfz28xvn6"
	celestiaPubKey    = "027a99c76845f352cbdc047b88675ef158e949683903aab4236c2e7180ccd74bd8"
	signModeAminoJSON = 127
)

func TestCelestiaMainnetDelegateDecodesAndReencodesByteForByte(t *testing.T) {
	v, raw := LoadCelestiaVector(t, "testdata/celestia_mainnet_delegate.json")
	require.Equal(t, "celestia", v.ChainID)

	txr, err := UnmarshalTxRaw(raw)
	require.NoError(t, err)
	assert.Equal(t, raw, txr.Marshal(), "TxRaw re-encodes byte for byte")
	require.Len(t, txr.Signatures, 1)
	assert.Len(t, txr.Signatures[0], 64)

	body, err := UnmarshalTxBody(txr.BodyBytes)
	require.NoError(t, err)
	assert.Equal(t, txr.BodyBytes, body.Marshal(), "TxBody re-encodes byte for byte")
	assert.Empty(t, body.Memo)
	assert.Zero(t, body.TimeoutHeight)
	require.Len(t, body.Messages, 1)
	msg, err := DecodeMsg(body.Messages[0])
	require.NoError(t, err)
	assert.Equal(t, Msg{TypeURL: TypeMsgDelegate, Delegator: celestiaDelegator, Validator: celestiaValidator,
		Amount: Coin{Denom: "utia", Amount: "250000000"}}, msg)
	any, err := msg.Encode()
	require.NoError(t, err)
	assert.Equal(t, body.Messages[0], any, "the message re-encodes byte for byte")
	assert.Equal(t, body.Messages[0], MsgDelegate{DelegatorAddress: celestiaDelegator, ValidatorAddress: celestiaValidator,
		Amount: Coin{Denom: "utia", Amount: "250000000"}}.Any(), "our MsgDelegate encoding is the chain's")

	ai, err := UnmarshalAuthInfo(txr.AuthInfoBytes)
	require.NoError(t, err)
	assert.Equal(t, txr.AuthInfoBytes, ai.Marshal(), "AuthInfo re-encodes byte for byte")
	assert.Equal(t, Fee{Amount: []Coin{{Denom: "utia", Amount: "44172"}}, GasLimit: 220856}, ai.Fee)
	require.Len(t, ai.SignerInfos, 1)
	si := ai.SignerInfos[0]
	assert.Equal(t, int32(signModeAminoJSON), si.SignMode)
	assert.Zero(t, si.Sequence)
	require.NotNil(t, si.PublicKey)
	assert.Equal(t, TypeSecp256k1PubKey, si.PublicKey.TypeURL)
	pk, err := UnmarshalPubKey(si.PublicKey.Value)
	require.NoError(t, err)
	assert.Equal(t, celestiaPubKey, hex.EncodeToString(pk.Key))

	// The chain derived the delegator from this key: our address derivation is the chain's.
	addr, err := Address("celestia", pk.Key)
	require.NoError(t, err)
	assert.Equal(t, celestiaDelegator, addr)
	_, err = DecodeAddress("celestiavaloper", celestiaValidator)
	require.NoError(t, err)
}
