package approval

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fingerprints printed by OpenSSH_9.2p1's ssh-keygen -lf for the keys of testdata/approvers.
const (
	bobFingerprint   = "SHA256:9Id81ys80yw3JWUQL4AQP7RUepsUaKHzcGpX6uhYOu8"
	carolFingerprint = "SHA256:BFzcnMFKC5c0yOYXozKWOl+epnDAoQaXZYq51SKoTwU"
	bobLine          = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIESbIE9X4QlsC8o8WThwZaIBKa5NbIDXbErwb3iha4Ne bob@example"
	// bobRaw is bob's key as its 32 raw bytes (the last 32 bytes of the line's blob), in base64.
	bobRaw  = "RJsgT1fhCWwLyjxZOHBlogEprk1sgNdsSvBveKFrg14="
	rsaLine = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC0BgvqqfeeYHSsJbvC7aHR3GWXT0e5QvHSjm/1sMhptap2EsbpCdQu1WyB+Nxu5ntxO2Kw/cyNb44pvzAZmIDv1bKyj6wq5YAumI9MWryblbe0P63drQF83afjChzoAQ14MjOSC5IIYfCBYbwFjpnkpHX7O5OPJILIZWwmG/MK6FWLmOJYBxvbpj9alfzmjzil4NvDvwn2I93CZur1t8lihzl/iYvlUx/VcANVvNjLcb6dD9PzS5YEkfJPzNWWH3NT97f9tSfkL6RoTdIG2/9uoppBw8OrMwVi/F5ghjtBf5kOY6xjaj/wUS4C9q7/yAxjMIsLD9VfGwG2mA7XElh9 root@vm"
)

func TestParseFileReadsOpenSSHLinesWithTheirFingerprints(t *testing.T) {
	got, err := ParseFile("testdata/approvers")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "bob", got[0].Name)
	assert.Equal(t, bobFingerprint, got[0].Fingerprint)
	assert.Equal(t, bobRaw, base64.StdEncoding.EncodeToString(got[0].PublicKey))
	assert.Equal(t, "carol", got[1].Name)
	assert.Equal(t, carolFingerprint, got[1].Fingerprint)
}

func TestParseTakesTheRawEd25519Form(t *testing.T) {
	got, err := Parse("f", strings.NewReader("bob ed25519:"+bobRaw+"\n"))
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, bobFingerprint, got[0].Fingerprint, "the same key whichever form names it")
}

func TestParseRefusesABadLineNamingItsNumber(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"no key", "# c\nbob\n", "approvers file f, line 2: approver \"bob\" has no key"},
		{"bad name", "b$b " + bobLine + "\n", "line 1: approver name \"b$b\" holds '$'"},
		{"key first", bobLine + "\n", "line 1: the line starts with a key: put the approver's name first"},
		{"not a key", "bob ssh-ed25519 AAAAnotbase64!\n", "line 1: approver \"bob\": not an OpenSSH public key line"},
		{"rsa", "bob " + rsaLine + "\n", "line 1: approver \"bob\": key type ssh-rsa; only ssh-ed25519 keys can approve"},
		{"short raw", "bob ed25519:" + base64.StdEncoding.EncodeToString(make([]byte, 31)) + "\n", "line 1: approver \"bob\": the ed25519: key is 31 bytes, want 32"},
		{"raw not base64", "bob ed25519:%%%\n", "the ed25519: key is not base64"},
		{"name twice", "bob " + bobLine + "\n\nBOB ed25519:" + base64.StdEncoding.EncodeToString(make([]byte, 32)) + "\n", "line 3: approver \"BOB\" is named again (first on line 1)"},
		{"key twice", "bob " + bobLine + "\ncarol ed25519:" + bobRaw + "\n", "line 2: approver \"carol\" has the key " + bobFingerprint + " of line 1: each approver needs their own key"},
		{"nobody", "# nobody\n\n", "approvers file f: names no approver"},
	} {
		_, err := Parse("f", strings.NewReader(c.file))
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		assert.NotContains(t, err.Error(), bobRaw, "%s: no key bytes in the error", c.name)
		assert.NotContains(t, err.Error(), "AAAAC3NzaC1lZDI1NTE5AAAAIESbIE9X4Qls", "%s: no key bytes in the error", c.name)
	}
}

func TestStatementTextIsTheVersionedForm(t *testing.T) {
	st := Statement{OperationID: "stake-1", Decision: Approve, Intent: strings.Repeat("0f", 32), At: time.Date(2026, 12, 2, 11, 0, 0, 0, time.FixedZone("x", 3600))}
	text := "stakeflow approval v1\noperation: stake-1\ndecision: approve\nintent: " + strings.Repeat("0f", 32) + "\nat: 2026-12-02T10:00:00Z\n"
	assert.Equal(t, text, st.Text())
	back, err := ParseStatement(text)
	require.NoError(t, err)
	assert.Equal(t, st.Text(), back.Text())
	for _, bad := range []struct{ text, want string }{
		{strings.TrimSuffix(text, "\n"), "does not end with a newline"},
		{strings.Replace(text, "v1", "v2", 1), "does not start with"},
		{strings.Replace(text, "approve", "maybe", 1), "neither approve nor reject"},
		{strings.Replace(text, "10:00:00Z", "10:00:00+00:00", 1), "not in its canonical form"},
		{strings.Replace(text, "intent:", "intent :", 1), "line 4 of the statement is not"},
		{text + "extra: 1\n", "the statement has 6 lines, want 5"},
	} {
		_, err := ParseStatement(bad.text)
		require.Error(t, err, bad.text)
		assert.Contains(t, err.Error(), bad.want)
	}
}

func TestSignedVerifies(t *testing.T) {
	k := ed25519.NewKeyFromSeed(make([]byte, 32))
	sg := Sign(k, "hello\n")
	pub, err := sg.Verify()
	require.NoError(t, err)
	assert.Equal(t, []byte(k.Public().(ed25519.PublicKey)), pub)
	sg.Statement = "hellp\n"
	_, err = sg.Verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("the signature does not verify with key %s", Fingerprint(pub)))
	sg.PublicKey = "AAAA"
	_, err = sg.Verify()
	assert.EqualError(t, err, "the public key is not a base64 Ed25519 key of 32 bytes")
}

func TestStartTextRoundTrips(t *testing.T) {
	s := Start{OperationID: "op", Chain: "solana", Operation: "stake", Staker: "S", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	assert.Equal(t, "stakeflow start v1\noperation: op\nchain: solana\nkind: stake\nstaker: S\nat: 2026-01-02T03:04:05Z\n", s.Text())
	back, err := ParseStart(s.Text())
	require.NoError(t, err)
	assert.Equal(t, s, back)
}
