package tx

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cosmjs's SIGN_MODE_DIRECT test vector, sequence 0 (cosmjs packages/proto-signing/src/testutils.spec.ts):
// a MsgSend from the cosmjs faucet key. Its signed transaction was encoded by protobufjs, which
// writes the empty memo, zero timeout height and empty fee payer/granter explicitly.
const (
	cosmjsFaucetPubKey  = "A08EGB7ro1ORuFhjOnZcSgwYlpe0DSFjVNUIkNNQxwKQ"
	cosmjsFaucetAddress = "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6"
	cosmjsSignedTx      = "0a97010a90010a1c2f636f736d6f732e62616e6b2e763162657461312e4d736753656e6412700a2d636f736d6f7331706b707472653766646b6c366766727a6c65736a6a766878686c63337234676d6d6b38727336122d636f736d6f7331717970717870713971637273737a673270767871367273307a716733797963356c7a763778751a100a0575636f736d12073132333435363712001800126b0a500a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a21034f04181eeba35391b858633a765c4a0c189697b40d216354d50890d350c7029012040a020801180012170a0d0a0575636f736d12043230303010c09a0c1a0022001a40d1bb55b0f3e5f9c260a20c8ccf2cb44f19bafccba84c7fb6e2b77fac401b15c9228c33236a701dd7a7c4a481aa5dedb902c982fe565504c4f4e7f39ccfcd73d6"
	cosmjsBodyBytes     = "0a90010a1c2f636f736d6f732e62616e6b2e763162657461312e4d736753656e6412700a2d636f736d6f7331706b707472653766646b6c366766727a6c65736a6a766878686c63337234676d6d6b38727336122d636f736d6f7331717970717870713971637273737a673270767871367273307a716733797963356c7a763778751a100a0575636f736d120731323334353637"
	cosmjsSignBytes     = "0a97010a90010a1c2f636f736d6f732e62616e6b2e763162657461312e4d736753656e6412700a2d636f736d6f7331706b707472653766646b6c366766727a6c65736a6a766878686c63337234676d6d6b38727336122d636f736d6f7331717970717870713971637273737a673270767871367273307a716733797963356c7a763778751a100a0575636f736d12073132333435363712001800126b0a500a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a21034f04181eeba35391b858633a765c4a0c189697b40d216354d50890d350c7029012040a020801180012170a0d0a0575636f736d12043230303010c09a0c1a0022001a0c73696d642d74657374696e672001"
)

// A Cosmos Hub delegation as a SIGN_MODE_DIRECT SignDoc, published with its SHA-256 in the test
// fixtures of the adamik transaction verifier: MsgDelegate of 10000 uatom to
// cosmosvaloper1z8zjv3lntpwxua0rtpvgrcwl0nm0tltgpgs6l7, memo "adamik-test-memo", sequence 180,
// fee 4724 uatom, gas 188954, chain cosmoshub-4. Encoded by the Go SDK's codec (no explicit defaults).
const (
	hubDelegateSignDoc = "0ab1010a9c010a232f636f736d6f732e7374616b696e672e763162657461312e4d736744656c656761746512750a2d636f736d6f73316738343933346a70753376356465357971756b6b6b68786d63767377337532616a787670646c1234636f736d6f7376616c6f706572317a387a6a76336c6e7470777875613072747076677263776c306e6d30746c7467706773366c371a0e0a057561746f6d1205313030303012106164616d696b2d746573742d6d656d6f12680a510a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a210388459b2653519948b12492f1a0b464720110c147a8155d23d423a5cc3c21d89a12040a02080118b40112130a0d0a057561746f6d120434373234109ac40b1a0b636f736d6f736875622d3420f6f201"
	hubDelegateSHA256  = "be61a24b1eeee510cbb29e91c2a0f1e616df9294bfb1208c17d36603af3c291e"
	hubDelegator       = "cosmos1g84934jpu3v5de5yqukkkhxmcvsw3u2ajxvpdl"
	hubValidator       = "cosmosvaloper1z8zjv3lntpwxua0rtpvgrcwl0nm0tltgpgs6l7"
	hubPubKey          = "0388459b2653519948b12492f1a0b464720110c147a8155d23d423a5cc3c21d89a"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func TestHubDelegateSignDocDecodesAndReencodes(t *testing.T) {
	raw := unhex(t, hubDelegateSignDoc)
	sum := sha256.Sum256(raw)
	require.Equal(t, hubDelegateSHA256, hex.EncodeToString(sum[:]), "fixture integrity")

	sd, err := UnmarshalSignDoc(raw)
	require.NoError(t, err)
	assert.Equal(t, "cosmoshub-4", sd.ChainID)
	assert.Equal(t, uint64(31094), sd.AccountNumber)

	body, err := UnmarshalTxBody(sd.BodyBytes)
	require.NoError(t, err)
	require.Len(t, body.Messages, 1)
	assert.Equal(t, "adamik-test-memo", body.Memo)
	msg, err := DecodeMsg(body.Messages[0])
	require.NoError(t, err)
	assert.Equal(t, Msg{TypeURL: TypeMsgDelegate, Delegator: hubDelegator, Validator: hubValidator,
		Amount: Coin{Denom: "uatom", Amount: "10000"}}, msg)

	ai, err := UnmarshalAuthInfo(sd.AuthInfoBytes)
	require.NoError(t, err)
	require.Len(t, ai.SignerInfos, 1)
	si := ai.SignerInfos[0]
	assert.Equal(t, uint64(180), si.Sequence)
	assert.Equal(t, int32(SignModeDirect), si.SignMode)
	require.NotNil(t, si.PublicKey)
	require.Equal(t, TypeSecp256k1PubKey, si.PublicKey.TypeURL)
	pk, err := UnmarshalPubKey(si.PublicKey.Value)
	require.NoError(t, err)
	assert.Equal(t, hubPubKey, hex.EncodeToString(pk.Key))
	assert.Equal(t, Fee{Amount: []Coin{{Denom: "uatom", Amount: "4724"}}, GasLimit: 188954}, ai.Fee)

	// The signer's key maps to the delegator.
	addr, err := Address("cosmos", pk.Key)
	require.NoError(t, err)
	assert.Equal(t, hubDelegator, addr)

	// Re-encoding each decoded part gives the published bytes back.
	again, err := msg.Encode()
	require.NoError(t, err)
	body.Messages[0] = again
	assert.Equal(t, hex.EncodeToString(sd.BodyBytes), hex.EncodeToString(body.Marshal()))
	assert.Equal(t, hex.EncodeToString(sd.AuthInfoBytes), hex.EncodeToString(ai.Marshal()))
	sd.BodyBytes, sd.AuthInfoBytes = body.Marshal(), ai.Marshal()
	assert.Equal(t, hubDelegateSignDoc, hex.EncodeToString(sd.Marshal()))
}

func TestHubDelegateSignDocBuiltFromValues(t *testing.T) {
	pub := PubKey{Key: unhex(t, hubPubKey)}.Any()
	body := TxBody{
		Messages: []Any{MsgDelegate{DelegatorAddress: hubDelegator, ValidatorAddress: hubValidator,
			Amount: Coin{Denom: "uatom", Amount: "10000"}}.Any()},
		Memo: "adamik-test-memo",
	}
	ai := AuthInfo{
		SignerInfos: []SignerInfo{{PublicKey: &pub, SignMode: SignModeDirect, Sequence: 180}},
		Fee:         Fee{Amount: []Coin{{Denom: "uatom", Amount: "4724"}}, GasLimit: 188954},
	}
	sd := SignDoc{BodyBytes: body.Marshal(), AuthInfoBytes: ai.Marshal(), ChainID: "cosmoshub-4", AccountNumber: 31094}
	assert.Equal(t, hubDelegateSignDoc, hex.EncodeToString(sd.Marshal()))
}

func TestCosmjsSignedTx(t *testing.T) {
	signed := unhex(t, cosmjsSignedTx)
	raw, err := UnmarshalTxRaw(signed)
	require.NoError(t, err)
	require.Len(t, raw.Signatures, 1)
	assert.Len(t, raw.Signatures[0], 64)
	assert.Equal(t, cosmjsSignedTx, hex.EncodeToString(raw.Marshal()), "TxRaw re-encodes byte for byte")

	// The sign bytes are the SignDoc over the transaction's own body and auth info bytes.
	assert.Equal(t, cosmjsSignBytes, hex.EncodeToString(raw.SignDoc("simd-testing", 1).Marshal()))

	// protobufjs wrote the body's empty memo and zero timeout height; decoded and re-encoded the
	// Go SDK way, the body is cosmjs's canonical bodyBytes.
	body, err := UnmarshalTxBody(raw.BodyBytes)
	require.NoError(t, err)
	require.Len(t, body.Messages, 1)
	assert.Equal(t, "/cosmos.bank.v1beta1.MsgSend", body.Messages[0].TypeURL)
	assert.Equal(t, cosmjsBodyBytes, hex.EncodeToString(body.Marshal()))

	ai, err := UnmarshalAuthInfo(raw.AuthInfoBytes)
	require.NoError(t, err)
	require.Len(t, ai.SignerInfos, 1)
	assert.Equal(t, uint64(0), ai.SignerInfos[0].Sequence)
	assert.Equal(t, Fee{Amount: []Coin{{Denom: "ucosm", Amount: "2000"}}, GasLimit: 200000}, ai.Fee)
	pk, err := UnmarshalPubKey(ai.SignerInfos[0].PublicKey.Value)
	require.NoError(t, err)
	assert.Equal(t, cosmjsFaucetPubKey, base64.StdEncoding.EncodeToString(pk.Key))
	addr, err := Address("cosmos", pk.Key)
	require.NoError(t, err)
	assert.Equal(t, cosmjsFaucetAddress, addr)
}

func TestDecodeAddress(t *testing.T) {
	acc, err := DecodeAddress("cosmos", cosmjsFaucetAddress)
	require.NoError(t, err)
	again, err := EncodeAddress("cosmos", acc)
	require.NoError(t, err)
	assert.Equal(t, cosmjsFaucetAddress, again)

	for name, tc := range map[string]struct{ hrp, addr string }{
		"wrong prefix":  {"celestia", cosmjsFaucetAddress},
		"bad checksum":  {"cosmos", cosmjsFaucetAddress[:len(cosmjsFaucetAddress)-1] + "7"},
		"upper case":    {"cosmos", "COSMOS1PKPTRE7FDKL6GFRZLESJJVHXHLC3R4GMMK8RS6"},
		"not bech32":    {"cosmos", "cosmos1"},
		"validator hrp": {"cosmos", hubValidator},
		"empty":         {"cosmos", ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeAddress(tc.hrp, tc.addr)
			assert.ErrorIs(t, err, ErrAddress)
		})
	}
}

func TestDecodeRefusesUnknownAndMalformed(t *testing.T) {
	for name, b := range map[string][]byte{
		"unknown field":      {0x22, 0x00},                   // field 4 in a TxBody
		"fixed64 wire type":  {0x19, 1, 2, 3, 4, 5, 6, 7, 8}, // field 3 as fixed64
		"truncated length":   {0x12, 0x05, 'a'},
		"bad utf-8 memo":     {0x12, 0x01, 0xff},
		"memo as varint":     {0x10, 0x01},
		"message not bytes":  {0x08, 0x01},
		"unordered (SDK 50)": {0x20, 0x01},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := UnmarshalTxBody(b)
			assert.ErrorIs(t, err, ErrDecode)
		})
	}
	_, err := DecodeMsg(Any{TypeURL: "/cosmos.bank.v1beta1.MsgSend"})
	assert.ErrorIs(t, err, ErrDecode)
	_, err = UnmarshalAuthInfo([]byte{0x1a, 0x00}) // tip
	assert.ErrorIs(t, err, ErrDecode)
}

// The Hub delegation's body with a timeout height: cosmos-sdk's tx.proto gives TxBody.timeout_height
// field number 3, type uint64, so it is encoded after the memo as tag 0x18 (3<<3 | varint) and the
// varint of 1234567 (0x12D687: 0x87 0xAD 0x4B), bytes written here by hand from the protobuf
// encoding rules, not by the code under test.
func TestTimeoutHeightEncodesAsField3(t *testing.T) {
	sd, err := UnmarshalSignDoc(unhex(t, hubDelegateSignDoc))
	require.NoError(t, err)
	want := append(append([]byte{}, sd.BodyBytes...), 0x18, 0x87, 0xad, 0x4b)
	body, err := UnmarshalTxBody(sd.BodyBytes)
	require.NoError(t, err)
	body.TimeoutHeight = 1234567
	assert.Equal(t, hex.EncodeToString(want), hex.EncodeToString(body.Marshal()))
	again, err := UnmarshalTxBody(want)
	require.NoError(t, err)
	assert.Equal(t, uint64(1234567), again.TimeoutHeight)
	assert.Equal(t, "adamik-test-memo", again.Memo)
}
