package codec

import (
	"bytes"
	"compress/zlib"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// key is a fixed key of 32 bytes whose value the tests know, so they can open a payload with
// crypto/aes directly, following the format the package documents.
func key(id string, fill byte) Key {
	return Key{ID: id, Key: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{fill}, KeySize))}
}

func keyset(t *testing.T, current string, keys ...Key) *Keyset {
	t.Helper()
	b, err := json.Marshal(KeysetFile{Current: current, Keys: keys})
	require.NoError(t, err)
	ks, err := ParseKeyset(b)
	require.NoError(t, err)
	return ks
}

func jsonPayload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

// TestSealedPayloadFollowsTheDocumentedFormat opens a sealed payload with crypto/aes alone: nonce,
// then GCM over the payload's protobuf encoding, with the key ID bound as additional data.
func TestSealedPayloadFollowsTheDocumentedFormat(t *testing.T) {
	in := jsonPayload(t, map[string]string{"staker": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"})
	out, err := New(keyset(t, "k1", key("k1", 7))).Encode([]*commonpb.Payload{in})
	require.NoError(t, err)
	p := out[0]
	require.Equal(t, Encoding, string(p.Metadata[converter.MetadataEncoding]))
	require.Equal(t, "k1", string(p.Metadata[MetadataKeyID]))
	require.NotContains(t, string(p.Data), "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU")

	block, err := aes.NewCipher(bytes.Repeat([]byte{7}, KeySize))
	require.NoError(t, err)
	gcm, err := cipher.NewGCM(block)
	require.NoError(t, err)
	plain, err := gcm.Open(nil, p.Data[:12], p.Data[12:], []byte("stakeflow-payload-v1\x00k1\x00"))
	require.NoError(t, err)
	var opened commonpb.Payload
	require.NoError(t, proto.Unmarshal(plain, &opened))
	require.True(t, proto.Equal(in, &opened))
}

func TestRoundTripSmallAndLarge(t *testing.T) {
	c := New(keyset(t, "k1", key("k1", 1)))
	small := jsonPayload(t, "1000000000")
	large := jsonPayload(t, strings.Repeat("0xdeadbeef", 400))
	sealed, err := c.Encode([]*commonpb.Payload{small, large})
	require.NoError(t, err)
	require.Empty(t, sealed[0].Metadata[MetadataCompression], "a payload under 1 KiB is not compressed")
	require.Equal(t, CompressionZlib, string(sealed[1].Metadata[MetadataCompression]))
	require.Less(t, len(sealed[1].Data), len(large.Data)/4, "a repetitive payload shrinks")
	opened, err := c.Decode(sealed)
	require.NoError(t, err)
	require.True(t, proto.Equal(small, opened[0]))
	require.True(t, proto.Equal(large, opened[1]))
}

// TestIncompressibleLargePayloadIsNotCompressed keeps a payload that zlib would grow as it is.
func TestIncompressibleLargePayloadIsNotCompressed(t *testing.T) {
	c := New(keyset(t, "k1", key("k1", 1)))
	raw := make([]byte, 4096)
	_, err := rand.Read(raw)
	require.NoError(t, err)
	sealed, err := c.Encode([]*commonpb.Payload{{Data: raw}})
	require.NoError(t, err)
	require.Empty(t, sealed[0].Metadata[MetadataCompression], "random bytes do not shrink: sealed as they are")
	opened, err := c.Decode(sealed)
	require.NoError(t, err)
	require.Equal(t, raw, opened[0].Data)
}

// TestRotation: a keyset whose current key moved to k2 reads what k1 sealed and seals under k2.
func TestRotation(t *testing.T) {
	before := New(keyset(t, "k1", key("k1", 1)))
	after := New(keyset(t, "k2", key("k1", 1), key("k2", 2)))
	in := jsonPayload(t, "stake 5 SOL")
	old, err := before.Encode([]*commonpb.Payload{in})
	require.NoError(t, err)
	opened, err := after.Decode(old)
	require.NoError(t, err)
	require.True(t, proto.Equal(in, opened[0]))
	fresh, err := after.Encode([]*commonpb.Payload{in})
	require.NoError(t, err)
	require.Equal(t, "k2", string(fresh[0].Metadata[MetadataKeyID]))
	_, err = before.Decode(fresh)
	require.ErrorIs(t, err, ErrUnknownKey)
	require.ErrorContains(t, err, `key ID "k2"`)
}

func TestTamperingFailsAuthentication(t *testing.T) {
	ks := keyset(t, "k1", key("k1", 1), key("k2", 2))
	c := New(ks)
	sealed, err := c.Encode([]*commonpb.Payload{jsonPayload(t, strings.Repeat("amount 1000 ", 200))})
	require.NoError(t, err)
	require.Equal(t, CompressionZlib, string(sealed[0].Metadata[MetadataCompression]))
	cases := map[string]struct {
		alter func(p *commonpb.Payload)
		want  string
	}{
		"a flipped bit":                   {func(p *commonpb.Payload) { p.Data[len(p.Data)-1] ^= 1 }, "fails authentication"},
		"the compression flag dropped":    {func(p *commonpb.Payload) { delete(p.Metadata, MetadataCompression) }, "fails authentication"},
		"the key ID moved to another key": {func(p *commonpb.Payload) { p.Metadata[MetadataKeyID] = []byte("k2") }, "fails authentication"},
		"truncated":                       {func(p *commonpb.Payload) { p.Data = p.Data[:10] }, "too short"},
	}
	for name, c2 := range cases {
		t.Run(name, func(t *testing.T) {
			p := proto.Clone(sealed[0]).(*commonpb.Payload)
			c2.alter(p)
			_, err := c.Decode([]*commonpb.Payload{p})
			require.ErrorContains(t, err, c2.want)
		})
	}
}

func TestStrictRefusesClearLenientPasses(t *testing.T) {
	ks := keyset(t, "k1", key("k1", 1))
	clear := jsonPayload(t, "in clear")
	_, err := New(ks).Decode([]*commonpb.Payload{clear})
	require.ErrorIs(t, err, ErrClearPayload)
	out, err := NewLenient(ks).Decode([]*commonpb.Payload{clear})
	require.NoError(t, err)
	require.Same(t, clear, out[0])
}

func TestParseKeysetErrorsNameTheProblemNotTheKey(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 16))
	cases := map[string]struct {
		file KeysetFile
		want string
	}{
		"no keys":          {KeysetFile{Current: "a"}, "no keys"},
		"no current":       {KeysetFile{Keys: []Key{key("a", 1)}}, `no "current"`},
		"current not held": {KeysetFile{Current: "b", Keys: []Key{key("a", 1)}}, `"b" is not among`},
		"short key":        {KeysetFile{Current: "a", Keys: []Key{{ID: "a", Key: secret}}}, `"a" has 16 bytes`},
		"not base64":       {KeysetFile{Current: "a", Keys: []Key{{ID: "a", Key: "!!" + secret}}}, `"a" is not base64`},
		"duplicate ID":     {KeysetFile{Current: "a", Keys: []Key{key("a", 1), key("a", 2)}}, "twice"},
		"ID with a space":  {KeysetFile{Current: "a b", Keys: []Key{key("a b", 1)}}, "use letters"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(c.file)
			require.NoError(t, err)
			_, err = ParseKeyset(b)
			require.ErrorContains(t, err, c.want)
			require.NotContains(t, err.Error(), secret)
		})
	}
}

func TestLoadKeysetRefusesAFileOthersCanRead(t *testing.T) {
	f, err := NewKeyFile("k1")
	require.NoError(t, err)
	b, err := json.Marshal(f)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "keyset.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, err = LoadKeyset(path)
	require.ErrorContains(t, err, "0644")
	require.ErrorContains(t, err, path)
	require.NotContains(t, err.Error(), f.Keys[0].Key)
	require.NoError(t, os.Chmod(path, 0o600))
	ks, err := LoadKeyset(path)
	require.NoError(t, err)
	require.Equal(t, "k1", ks.Current())
}

// TestFailureMessagesAreSealed: with the failure converter, an error's message travels in the
// encoded attributes, and the failure's own message field is the SDK's placeholder.
func TestFailureMessagesAreSealed(t *testing.T) {
	dc := DataConverter(New(keyset(t, "k1", key("k1", 1))))
	fc := FailureConverter(dc)
	f := fc.ErrorToFailure(errors.New("stake of 1000000000 lamports to Vote111 refused"))
	require.NotContains(t, f.GetMessage(), "Vote111")
	require.Equal(t, Encoding, string(f.GetEncodedAttributes().GetMetadata()[converter.MetadataEncoding]))
	require.ErrorContains(t, fc.FailureToError(f), "Vote111")
}

func TestInflateIsBounded(t *testing.T) {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	zero := make([]byte, 1<<20)
	for range maxInflated/len(zero) + 1 {
		_, err := w.Write(zero)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	_, err := inflate(buf.Bytes())
	require.ErrorContains(t, err, "inflates past")
}
