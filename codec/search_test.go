package codec

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTagIsTruncatedHMACSHA256 runs the RFC 4231 HMAC-SHA256 test vectors through Tag: each tag is
// the prefix and the first 128 bits of the RFC's HMAC (test case 5 is the RFC's own truncation to
// 128 bits).
func TestTagIsTruncatedHMACSHA256(t *testing.T) {
	cases := map[string]struct {
		key  []byte
		data string
		hmac string
	}{
		"test case 1": {bytes.Repeat([]byte{0x0b}, 20), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		"test case 2": {[]byte("Jefe"), "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		"test case 3": {bytes.Repeat([]byte{0xaa}, 20), string(bytes.Repeat([]byte{0xdd}, 50)), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
		"test case 5": {bytes.Repeat([]byte{0x0c}, 20), "Test With Truncation", "a3b6167473100ee06e0c796c2955552b"},
		"test case 6": {bytes.Repeat([]byte{0xaa}, 131), "Test Using Larger Than Block-Size Key - Hash Key First", "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tag, ok := (&Tagger{key: c.key}).Tag(c.data)
			require.True(t, ok)
			require.Equal(t, "h:"+c.hmac[:32], tag)
		})
	}
}

// searchKeyset is a keyset whose search key the test knows.
func searchKeyset(t *testing.T, search []byte) *Keyset {
	t.Helper()
	b, err := json.Marshal(KeysetFile{Current: "k1", Keys: []Key{key("k1", 1)}, SearchKey: base64.StdEncoding.EncodeToString(search)})
	require.NoError(t, err)
	ks, err := ParseKeyset(b)
	require.NoError(t, err)
	return ks
}

// TestKeysetTaggerUsesTheSearchKey: the tagger of a parsed keyset computes, for an address, what
// crypto/hmac computes under the file's searchKey.
func TestKeysetTaggerUsesTheSearchKey(t *testing.T) {
	search := bytes.Repeat([]byte{0x5a}, SearchKeySize)
	const addr = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"
	m := hmac.New(sha256.New, search)
	m.Write([]byte(addr))
	want := "h:" + hex.EncodeToString(m.Sum(nil))[:32]

	tag, ok := searchKeyset(t, search).Tagger().Tag(addr)
	require.True(t, ok)
	require.Equal(t, want, tag)
	require.NotContains(t, tag, addr)

	other, ok := searchKeyset(t, bytes.Repeat([]byte{0x5b}, SearchKeySize)).Tagger().Tag(addr)
	require.True(t, ok)
	require.NotEqual(t, tag, other, "another search key, another tag")
}

// TestEVMHexIsTaggedInLowerCase: a checksummed EVM address and its lower-case form have one tag;
// a Solana address (base58, where case matters) keeps its case.
func TestEVMHexIsTaggedInLowerCase(t *testing.T) {
	tg := searchKeyset(t, bytes.Repeat([]byte{1}, SearchKeySize)).Tagger()
	tag := func(v string) string {
		s, ok := tg.Tag(v)
		require.True(t, ok)
		return s
	}
	require.Equal(t, tag("0x5e3ef299fddf15eaa0432e6e66473ace8c13d908"), tag("0x5e3Ef299fDDf15eAa0432E6e66473ace8c13D908"))
	require.NotEqual(t, tag("Vote111111111111111111111111111111111111111"), tag("vote111111111111111111111111111111111111111"))
	require.Equal(t, "", tag(""), "an empty value names nothing")
}

// TestNoSearchKeyTagsNothing: a keyset without a searchKey gives no tag, so the confidential
// attributes are left out rather than written clear.
func TestNoSearchKeyTagsNothing(t *testing.T) {
	tag, ok := keyset(t, "k1", key("k1", 1)).Tagger().Tag("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU")
	require.False(t, ok)
	require.Empty(t, tag)
	require.False(t, keyset(t, "k1", key("k1", 1)).Tagger().Tags())
	require.True(t, searchKeyset(t, bytes.Repeat([]byte{7}, SearchKeySize)).Tagger().Tags())
}

func TestParseKeysetRefusesABadSearchKey(t *testing.T) {
	short := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 16))
	for name, c := range map[string]struct{ search, want string }{
		"not base64": {"!!" + short, `"searchKey" is not base64`},
		"16 bytes":   {short, `"searchKey" has 16 bytes; want 32`},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(KeysetFile{Current: "k1", Keys: []Key{key("k1", 1)}, SearchKey: c.search})
			require.NoError(t, err)
			_, err = ParseKeyset(b)
			require.ErrorContains(t, err, c.want)
			require.NotContains(t, err.Error(), short)
		})
	}
}

func TestNewKeyFileHasASearchKey(t *testing.T) {
	f, err := NewKeyFile("k1")
	require.NoError(t, err)
	b, err := json.Marshal(f)
	require.NoError(t, err)
	ks, err := ParseKeyset(b)
	require.NoError(t, err)
	_, ok := ks.Tagger().Tag("x")
	require.True(t, ok)
}

// TestSearchKeyFingerprint: the fingerprint of a search key is the first 8 bytes of SHA-256 of
// "stakeflow search key fingerprint", a NUL byte and the key (the expected value computed with
// coreutils: (printf 'stakeflow search key fingerprint\0'; head -c 32 /dev/zero | tr '\0' Z) |
// sha256sum | cut -c1-16). It tells keys apart, holds no tag of any value, and a keyset without a
// search key has none.
func TestSearchKeyFingerprint(t *testing.T) {
	search := bytes.Repeat([]byte{0x5a}, SearchKeySize)
	fp, ok := searchKeyset(t, search).Tagger().Fingerprint()
	require.True(t, ok)
	require.Equal(t, "3282b7350ac96ef8", fp)
	require.Equal(t, fp, SearchKeyFingerprint(search))

	other, ok := searchKeyset(t, bytes.Repeat([]byte{0x5b}, SearchKeySize)).Tagger().Fingerprint()
	require.True(t, ok)
	require.NotEqual(t, fp, other, "another search key, another fingerprint")

	tag, _ := searchKeyset(t, search).Tagger().Tag("stakeflow search key fingerprint")
	require.NotContains(t, tag, fp, "a fingerprint is no tag")

	none, ok := keyset(t, "k1", key("k1", 1)).Tagger().Fingerprint()
	require.False(t, ok)
	require.Empty(t, none)
}
