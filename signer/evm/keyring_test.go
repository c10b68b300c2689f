package evm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// writeKeystore writes key encrypted with passphrase (light scrypt) to dir/name, mode 0600.
func writeKeystore(t *testing.T, dir, name, keyHex, passphrase string) common.Address {
	t.Helper()
	k, err := crypto.HexToECDSA(strings.TrimPrefix(keyHex, "0x"))
	if err != nil {
		t.Fatal(err)
	}
	addr := crypto.PubkeyToAddress(k.PublicKey)
	raw, err := keystore.EncryptKey(&keystore.Key{Address: addr, PrivateKey: k}, passphrase, keystore.LightScryptN, keystore.LightScryptP)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return addr
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // the umask may have narrowed it
		t.Fatal(err)
	}
	return path
}

// A second test key: Hardhat's development account #1.
const secondKey = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"

// TestLoadKeyringEthersKeystore decrypts ethers' keystore file and a go-ethereum one, with the
// passphrase file's trailing newline trimmed, and signs with the key loaded.
func TestLoadKeyringEthersKeystore(t *testing.T) {
	v := loadVectors(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "UTC--ethers"), v.Keystore.JSON, 0o600)
	second := writeKeystore(t, dir, "UTC--geth", secondKey, v.Keystore.Passphrase)
	writeFile(t, filepath.Join(dir, ".hidden"), "not a key", 0o644)
	pass := writeFile(t, filepath.Join(t.TempDir(), "pass"), v.Keystore.Passphrase+"\n", 0o400)
	kr, err := LoadKeyring(dir, pass)
	if err != nil {
		t.Fatal(err)
	}
	want := []common.Address{common.HexToAddress(v.Keystore.Address), second}
	sorted := append([]common.Address(nil), want...)
	if sorted[0].Cmp(sorted[1]) > 0 {
		sorted[0], sorted[1] = sorted[1], sorted[0]
	}
	if got := kr.Addresses(); fmt.Sprint(got) != fmt.Sprint(sorted) {
		t.Fatalf("addresses %v, want %v", got, want)
	}
	if !kr.Has(want[0]) || !kr.Has(want[1]) || kr.Has(stranger) || kr.Len() != 2 {
		t.Fatalf("Has/Len wrong: %v", kr)
	}
	s, err := New(kr, testPolicy(v))
	if err != nil {
		t.Fatal(err)
	}
	x := v.vector(t, "delegate")
	signed, err := s.Sign(t.Context(), intentFor(t, v, x, false), mustHex(t, x.Unsigned))
	if err != nil || signed.Transaction != x.Signed {
		t.Fatalf("sign with the ethers keystore key: %v, %v", signed, err)
	}
}

// TestLoadKeyringRefusals covers what LoadKeyring refuses, each error naming the file and none
// carrying the passphrase (a planted, unmistakable one).
func TestLoadKeyringRefusals(t *testing.T) {
	const planted = "PLANTED-passphrase-7f3c1e"
	v := loadVectors(t)
	cases := []struct {
		name  string
		setup func(t *testing.T, dir, passDir string) (passFile, named string)
		want  string
	}{
		{"key file readable by others", func(t *testing.T, dir, passDir string) (string, string) {
			writeKeystore(t, dir, "key", secondKey, planted)
			os.Chmod(filepath.Join(dir, "key"), 0o644)
			return writeFile(t, filepath.Join(passDir, "pass"), planted, 0o600), filepath.Join(dir, "key")
		}, "mode 0644"},
		{"key file writable by the group", func(t *testing.T, dir, passDir string) (string, string) {
			writeKeystore(t, dir, "key", secondKey, planted)
			os.Chmod(filepath.Join(dir, "key"), 0o620)
			return writeFile(t, filepath.Join(passDir, "pass"), planted, 0o600), filepath.Join(dir, "key")
		}, "mode 0620"},
		{"passphrase file readable by the group", func(t *testing.T, dir, passDir string) (string, string) {
			writeKeystore(t, dir, "key", secondKey, planted)
			p := writeFile(t, filepath.Join(passDir, "pass"), planted, 0o640)
			return p, p
		}, "mode 0640"},
		{"wrong passphrase", func(t *testing.T, dir, passDir string) (string, string) {
			writeKeystore(t, dir, "key", secondKey, "another passphrase")
			return writeFile(t, filepath.Join(passDir, "pass"), planted, 0o600), filepath.Join(dir, "key")
		}, "wrong passphrase"},
		{"address field of another key", func(t *testing.T, dir, passDir string) (string, string) {
			writeKeystore(t, dir, "key", secondKey, planted)
			raw, _ := os.ReadFile(filepath.Join(dir, "key"))
			var m map[string]any
			json.Unmarshal(raw, &m)
			m["address"] = strings.TrimPrefix(strings.ToLower(v.Key.Address), "0x")
			raw, _ = json.Marshal(m)
			writeFile(t, filepath.Join(dir, "key"), string(raw), 0o600)
			return writeFile(t, filepath.Join(passDir, "pass"), planted, 0o600), filepath.Join(dir, "key")
		}, "but the key is for"},
		{"same key twice", func(t *testing.T, dir, passDir string) (string, string) {
			writeKeystore(t, dir, "a", secondKey, planted)
			writeKeystore(t, dir, "b", secondKey, planted)
			return writeFile(t, filepath.Join(passDir, "pass"), planted, 0o600), filepath.Join(dir, "b")
		}, "already loaded from"},
		{"version 1 file", func(t *testing.T, dir, passDir string) (string, string) {
			writeFile(t, filepath.Join(dir, "key"), `{"version":"1","address":"00"}`, 0o600)
			return writeFile(t, filepath.Join(passDir, "pass"), planted, 0o600), filepath.Join(dir, "key")
		}, "want 3"},
		{"not JSON", func(t *testing.T, dir, passDir string) (string, string) {
			writeFile(t, filepath.Join(dir, "key"), planted, 0o600)
			return writeFile(t, filepath.Join(passDir, "pass"), planted, 0o600), filepath.Join(dir, "key")
		}, "not a JSON keystore"},
		{"empty passphrase", func(t *testing.T, dir, passDir string) (string, string) {
			writeKeystore(t, dir, "key", secondKey, "")
			p := writeFile(t, filepath.Join(passDir, "pass"), "\n", 0o600)
			return p, p
		}, "is empty"},
		{"no key files", func(t *testing.T, dir, passDir string) (string, string) {
			return writeFile(t, filepath.Join(passDir, "pass"), planted, 0o600), dir
		}, "holds no keystore files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, passDir := t.TempDir(), t.TempDir()
			pass, named := c.setup(t, dir, passDir)
			kr, err := LoadKeyring(dir, pass)
			if kr != nil || !errors.Is(err, ErrKeyLoad) {
				t.Fatalf("got %v, %v; want ErrKeyLoad", kr, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, named) || !strings.Contains(msg, c.want) {
				t.Fatalf("error %q does not name %s and %q", msg, named, c.want)
			}
			if strings.Contains(msg, planted) || strings.Contains(msg, strings.TrimPrefix(secondKey, "0x")) {
				t.Fatalf("error carries the passphrase or the key: %q", msg)
			}
		})
	}
}

// TestKeyMaterialNeverPrinted formats a keyring and a signer every way fmt and JSON can and
// looks for the key's bytes.
func TestKeyMaterialNeverPrinted(t *testing.T) {
	v := loadVectors(t)
	s := testSigner(t, v)
	kr := s.backend.(*Keyring)
	secret := strings.TrimPrefix(v.Key.PrivateKey, "0x")
	k, _ := crypto.HexToECDSA(secret)
	d := new(big.Int).SetBytes(crypto.FromECDSA(k)).String() // the scalar in decimal, as %v of a big.Int would print it
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%q", "%d"} {
		outs = append(outs, fmt.Sprintf(verb, kr), fmt.Sprintf(verb, *kr), fmt.Sprintf(verb, s), fmt.Sprintf(verb, *s))
	}
	for _, x := range []any{kr, *kr, s, *s} {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	for _, o := range outs {
		low := strings.ToLower(o)
		if strings.Contains(low, secret) || strings.Contains(o, d) {
			t.Fatalf("key material printed: %s", o)
		}
		if !strings.Contains(o, v.Key.Address) && !strings.Contains(low, strings.ToLower(v.Key.Address)) {
			t.Fatalf("address not listed: %s", o)
		}
	}
}
