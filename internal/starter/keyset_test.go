package starter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/stakeflow/stakeflow/codec"
)

// keyset runs `starter keyset ARGS...` and returns its output.
func keyset(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), append([]string{"keyset"}, args...), &out, noDial(t))
	return out.String(), err
}

// readRaw decodes a keyset file's JSON as it is on disk, independently of the starter's reader.
func readRaw(t *testing.T, path string) codec.KeysetFile {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var f codec.KeysetFile
	require.NoError(t, json.Unmarshal(b, &f))
	return f
}

func assertMode0600(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "%s", path)
	assert.True(t, fi.Mode().IsRegular())
}

// seal encrypts a payload holding s with the keyset file at path, as the worker would.
func seal(t *testing.T, path, s string) *commonpb.Payload {
	t.Helper()
	keys, err := codec.LoadKeyset(path)
	require.NoError(t, err)
	p, err := converter.GetDefaultDataConverter().ToPayload(s)
	require.NoError(t, err)
	sealed, err := codec.New(keys).Encode([]*commonpb.Payload{p})
	require.NoError(t, err)
	return sealed[0]
}

// open decrypts p with the keyset file at path and returns the string it holds.
func open(t *testing.T, path string, p *commonpb.Payload) (string, error) {
	t.Helper()
	keys, err := codec.LoadKeyset(path)
	require.NoError(t, err)
	out, err := codec.New(keys).Decode([]*commonpb.Payload{p})
	if err != nil {
		return "", err
	}
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(out[0], &s))
	return s, nil
}

func TestKeysetNew(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keyset.json")
	out, err := keyset(t, "new", "--id", "k1", "--out", file)
	require.NoError(t, err)
	assertMode0600(t, file)

	f := readRaw(t, file)
	assert.Equal(t, "k1", f.Current)
	require.Len(t, f.Keys, 1)
	assert.Equal(t, "k1", f.Keys[0].ID)
	raw, err := base64.StdEncoding.DecodeString(f.Keys[0].Key)
	require.NoError(t, err)
	assert.Len(t, raw, 32, "an AES-256 key")
	assert.NotContains(t, out, f.Keys[0].Key, "the key is printed")
	assert.Contains(t, out, "k1  (current)")

	// A second keyset has another key.
	other := filepath.Join(dir, "other.json")
	_, err = keyset(t, "new", "--id", "k1", "--out", other)
	require.NoError(t, err)
	assert.NotEqual(t, f.Keys[0].Key, readRaw(t, other).Keys[0].Key)

	// What it seals, it opens.
	got, err := open(t, file, seal(t, file, "stake 2 SOL"))
	require.NoError(t, err)
	assert.Equal(t, "stake 2 SOL", got)
}

func TestKeysetNewRefuses(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "keyset.json")
	require.NoError(t, os.WriteFile(existing, []byte("precious"), 0o600))
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"existing file": {[]string{"new", "--id", "k1", "--out", existing}, "--out " + existing + " exists"},
		"no id":         {[]string{"new", "--out", filepath.Join(dir, "a.json")}, "--id is required"},
		"no out":        {[]string{"new", "--id", "k1"}, "--out is required"},
		"bad id":        {[]string{"new", "--id", "k 1", "--out", filepath.Join(dir, "b.json")}, `--id: key ID "k 1"`},
		"unknown verb":  {[]string{"delete", "x"}, `keyset: unknown command "delete"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := keyset(t, c.args...)
			var usage *UsageError
			require.ErrorAs(t, err, &usage)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	assert.Equal(t, "precious", string(must(os.ReadFile(existing))), "the existing file was touched")
	for _, f := range []string{"a.json", "b.json"} {
		assert.NoFileExists(t, filepath.Join(dir, f))
	}
}

func TestKeysetRotateKeepsOldKeysAndReadsWhatTheyOnceSealed(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keyset.json")
	_, err := keyset(t, "new", "--id", "k1", "--out", file)
	require.NoError(t, err)
	before := readRaw(t, file)
	old := seal(t, file, "sealed under k1")

	out, err := keyset(t, "rotate", "--id", "k2", file)
	require.NoError(t, err)
	assertMode0600(t, file)
	after := readRaw(t, file)
	assert.Equal(t, "k2", after.Current)
	require.Len(t, after.Keys, 2)
	assert.Equal(t, before.Keys[0], after.Keys[0], "the old key is kept as it was")
	assert.Equal(t, "k2", after.Keys[1].ID)
	assert.NotEqual(t, before.Keys[0].Key, after.Keys[1].Key)
	assert.NotContains(t, out, after.Keys[0].Key)
	assert.NotContains(t, out, after.Keys[1].Key)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "a temporary file is left beside the keyset")

	// The rotated keyset opens what k1 sealed, and seals new payloads under k2, which the old
	// keyset cannot open (that error names k2).
	got, err := open(t, file, old)
	require.NoError(t, err)
	assert.Equal(t, "sealed under k1", got)
	fresh := seal(t, file, "sealed under k2")
	assert.Equal(t, "k2", string(fresh.Metadata[codec.MetadataKeyID]))
	oldFile := filepath.Join(t.TempDir(), "old.json")
	b, err := json.Marshal(before)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(oldFile, b, 0o600))
	_, err = open(t, oldFile, fresh)
	require.ErrorIs(t, err, codec.ErrUnknownKey)
	assert.Contains(t, err.Error(), `"k2"`)

	// Flags may also follow the file.
	_, err = keyset(t, "rotate", file, "--id", "k3")
	require.NoError(t, err)
	assert.Equal(t, "k3", readRaw(t, file).Current)
	assert.Len(t, readRaw(t, file).Keys, 3)
}

func TestKeysetAddThenUse(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keyset.json")
	_, err := keyset(t, "new", "--id", "k1", "--out", file)
	require.NoError(t, err)

	out, err := keyset(t, "add", "--id", "k2", file)
	require.NoError(t, err)
	f := readRaw(t, file)
	assert.Equal(t, "k1", f.Current, "add leaves the current key")
	assert.Equal(t, []string{"k1", "k2"}, []string{f.Keys[0].ID, f.Keys[1].ID})
	assert.Contains(t, out, "starter keyset use --id k2 "+file)
	assert.Equal(t, "k1", string(seal(t, file, "x").Metadata[codec.MetadataKeyID]), "after add, payloads are still sealed under k1")
	assertMode0600(t, file)

	_, err = keyset(t, "use", "--id", "k2", file)
	require.NoError(t, err)
	g := readRaw(t, file)
	assert.Equal(t, "k2", g.Current)
	assert.Equal(t, f.Keys, g.Keys, "use changes no key")
	assert.Equal(t, "k2", string(seal(t, file, "x").Metadata[codec.MetadataKeyID]))
}

func TestKeysetChangesRefuse(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keyset.json")
	_, err := keyset(t, "new", "--id", "k1", "--out", file)
	require.NoError(t, err)
	original := must(os.ReadFile(file))
	open := filepath.Join(dir, "open.json")
	require.NoError(t, os.WriteFile(open, original, 0o600))
	require.NoError(t, os.Chmod(open, 0o644))
	notKeyset := filepath.Join(dir, "not.json")
	require.NoError(t, os.WriteFile(notKeyset, []byte(`{"current":"k1","keys":[]}`), 0o600))

	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"rotate to an ID it holds": {[]string{"rotate", "--id", "k1", file}, `--id "k1": ` + file + " already holds a key of that ID"},
		"add an ID it holds":       {[]string{"add", "--id", "k1", file}, "already holds a key of that ID"},
		"use an ID it lacks":       {[]string{"use", "--id", "k9", file}, `--id "k9": ` + file + " holds no key of that ID (it holds [k1])"},
		"use the current":          {[]string{"use", "--id", "k1", file}, "already the current key"},
		"bad new ID":               {[]string{"rotate", "--id", "k/2", file}, `key ID "k/2"`},
		"no id":                    {[]string{"rotate", file}, "--id is required"},
		"no file":                  {[]string{"rotate", "--id", "k2"}, "keyset rotate: give the keyset FILE"},
		"two files":                {[]string{"rotate", "--id", "k2", file, file}, "unexpected argument"},
		"file others may read":     {[]string{"rotate", "--id", "k2", open}, "chmod 600 " + open},
		"missing file":             {[]string{"rotate", "--id", "k2", filepath.Join(dir, "absent.json")}, "absent.json"},
		"not a keyset":             {[]string{"rotate", "--id", "k2", notKeyset}, "no keys"},
		"show without file":        {[]string{"show"}, "keyset show: give the keyset FILE"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := keyset(t, c.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	assert.Equal(t, original, must(os.ReadFile(file)), "a refused change touched the keyset")
	assert.Equal(t, original, must(os.ReadFile(open)))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "a refused change left a file behind")
}

func TestKeysetShowNamesKeysNeverTheirBytes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keyset.json")
	_, err := keyset(t, "new", "--id", "k1", "--out", file)
	require.NoError(t, err)
	_, err = keyset(t, "rotate", "--id", "k2", file)
	require.NoError(t, err)
	f := readRaw(t, file)

	// The search key's fingerprint as docs/encryption.md defines it, computed here from the file.
	search, err := base64.StdEncoding.DecodeString(f.SearchKey)
	require.NoError(t, err)
	sum := sha256.Sum256(append([]byte("stakeflow search key fingerprint\x00"), search...))
	fingerprint := hex.EncodeToString(sum[:8])

	human, err := keyset(t, "show", file)
	require.NoError(t, err)
	assert.Equal(t, file+":\n  k1\n  k2  (current)\nsearch key fingerprint: "+fingerprint+"\n", human)

	out, err := keyset(t, "show", "--json", file)
	require.NoError(t, err)
	var got keysetShown
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, keysetShown{File: file, Current: "k2", Keys: []string{"k1", "k2"}, SearchKeyFingerprint: fingerprint}, got)
	for _, secret := range append([]string{f.SearchKey}, f.Keys[0].Key, f.Keys[1].Key) {
		for _, shown := range []string{human, out} {
			assert.NotContains(t, shown, secret)
			assert.NotContains(t, shown, strings.TrimRight(secret, "=")[:16])
		}
	}
	assert.NotContains(t, human, hex.EncodeToString(search)[:16])

	// Without a search key, show says so.
	f.SearchKey = ""
	b, err := json.Marshal(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o600))
	human, err = keyset(t, "show", file)
	require.NoError(t, err)
	assert.Contains(t, human, "\nno search key: operations write no staker, account or transaction search attributes")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
