// Package hsmtest makes SoftHSM2 tokens for tests of the PKCS#11 key backend: each in a directory
// of its own (SOFTHSM2_CONF names a config whose tokendir is that directory), initialised with
// softhsm2-util, its user PIN in a 0600 file. SoftHSM2 comes from scripts/tools.sh softhsm, which
// installs Debian's softhsm2 when it is missing; when it cannot be had, the test fails with the
// reason (it is never skipped).
package hsmtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stakeflow/stakeflow/signer/keys/hsm"
)

// Token is one initialised SoftHSM2 token.
type Token struct {
	// Dir holds the config (softhsm2.conf), the token directory (tokens/) and the PIN file.
	Dir string
	// Conf is the SoftHSM2 config path: SOFTHSM2_CONF must name it in every process using the token.
	Conf string
	// Module is the SoftHSM2 PKCS#11 module path.
	Module string
	// Label is the token's label.
	Label string
	// PIN is the user PIN; PINFile holds it (mode 0600).
	PIN, PINFile string
}

// Config is the hsm.Config that opens the token.
func (tk *Token) Config() hsm.Config {
	return hsm.Config{Module: tk.Module, Token: tk.Label, PINFile: tk.PINFile}
}

// Env is the environment entry a process needs to see the token (for exec.Cmd.Env).
func (tk *Token) Env() string { return "SOFTHSM2_CONF=" + tk.Conf }

var (
	moduleOnce sync.Once
	modulePath string
	moduleErr  error
)

// ModulePath returns SoftHSM2's PKCS#11 module: $SOFTHSM2_MODULE when set, else what
// scripts/tools.sh softhsm prints (installing Debian's softhsm2 once when missing).
func ModulePath() (string, error) {
	moduleOnce.Do(func() {
		if m := os.Getenv("SOFTHSM2_MODULE"); m != "" {
			modulePath = m
			return
		}
		script, err := findUp(filepath.Join("scripts", "tools.sh"))
		if err != nil {
			moduleErr = err
			return
		}
		cmd := exec.Command("bash", script, "softhsm")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			moduleErr = fmt.Errorf("hsmtest: %s softhsm: %w: %s", script, err, strings.TrimSpace(stderr.String()))
			return
		}
		modulePath = strings.TrimSpace(string(out))
		if modulePath == "" {
			moduleErr = fmt.Errorf("hsmtest: %s softhsm printed no path", script)
		}
	})
	return modulePath, moduleErr
}

func findUp(rel string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("hsmtest: no SoftHSM2: set $SOFTHSM2_MODULE, or run inside the stakeflow tree (no %s above %s)", rel, wd)
		}
		dir = parent
	}
}

// NewToken initialises a SoftHSM2 token labelled label in dir (created if missing) with user PIN
// pin and a random security officer PIN, and writes the PIN file. It does not touch this
// process's environment: set SOFTHSM2_CONF to Conf where the token is used.
func NewToken(dir, label, pin string) (*Token, error) {
	module, err := ModulePath()
	if err != nil {
		return nil, err
	}
	util, err := exec.LookPath("softhsm2-util")
	if err != nil {
		return nil, fmt.Errorf("hsmtest: softhsm2-util: %w (scripts/tools.sh softhsm installs it)", err)
	}
	tk := &Token{Dir: dir, Conf: filepath.Join(dir, "softhsm2.conf"), Module: module, Label: label, PIN: pin,
		PINFile: filepath.Join(dir, "pin")}
	tokens := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n", tokens)
	if err := os.WriteFile(tk.Conf, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	so := make([]byte, 8)
	if _, err := rand.Read(so); err != nil {
		return nil, err
	}
	cmd := exec.Command(util, "--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", hex.EncodeToString(so))
	cmd.Env = append(os.Environ(), tk.Env())
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("hsmtest: softhsm2-util --init-token --label %s: %w: %s", label, err, strings.TrimSpace(strings.ReplaceAll(string(out), pin, "[PIN]")))
	}
	if err := os.WriteFile(tk.PINFile, []byte(pin+"\n"), 0o600); err != nil {
		return nil, err
	}
	return tk, nil
}

// New makes a token for one test in a t.TempDir() and points this process's SOFTHSM2_CONF at it
// for the test's duration (t.Setenv: the test may not run in parallel). SoftHSM2 reads its config
// when the module is initialised, so every hsm.Token of the previous test must be closed. It
// fails the test when SoftHSM2 cannot be had.
func New(t testing.TB) *Token {
	t.Helper()
	pin := make([]byte, 6)
	if _, err := rand.Read(pin); err != nil {
		t.Fatal(err)
	}
	tk, err := NewToken(t.TempDir(), "stakeflow-test", hex.EncodeToString(pin))
	if err != nil {
		t.Fatalf("SoftHSM2 token: %v", err)
	}
	t.Setenv("SOFTHSM2_CONF", tk.Conf)
	return tk
}

// Open opens tk through the hsm package and closes it when the test ends.
func Open(t testing.TB, tk *Token) *hsm.Token {
	t.Helper()
	tok, err := hsm.Open(tk.Config())
	if err != nil {
		t.Fatalf("open SoftHSM2 token %s: %v", tk.Label, err)
	}
	t.Cleanup(func() {
		if err := tok.Close(); err != nil {
			t.Errorf("close token %s: %v", tk.Label, err)
		}
	})
	return tok
}
