package worker

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/modules/all"
)

// parsed is the worker's configuration from args, as cmd/worker reads it.
func parsed(t *testing.T, args ...string) Config {
	t.Helper()
	cfg := Config{Modules: all.Modules()}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	cfg.Register(fs)
	require.NoError(t, cli.Parse(fs, append([]string{"--service-url", "http://127.0.0.1:1", "--service-token-file", "token"}, args...), "config"))
	return cfg
}

// TestAChainTakesKeyFilesOrHSMKeysNotBoth: each chain given its key files and keys in the HSM is
// refused at start, the error naming both settings.
func TestAChainTakesKeyFilesOrHSMKeysNotBoth(t *testing.T) {
	pkcs11 := []string{"--pkcs11-module", "/usr/lib/softhsm/libsofthsm2.so", "--pkcs11-token", "t", "--pkcs11-pin-file", "pin"}
	for _, tc := range []struct {
		files, hsm string
		args       []string
	}{
		{"--solana-keys", "--solana-hsm-keys", []string{"--solana-rpc", "testnet=http://127.0.0.1:1", "--solana-keys", "k"}},
		{"--evm-keys", "--evm-hsm-keys", []string{"--evm-rpc", "sepolia=http://127.0.0.1:1", "--evm-keys", "k"}},
		{"--celestia-keys", "--celestia-hsm-keys", []string{"--celestia-rest", "celestia-mocha-testnet=http://127.0.0.1:1", "--celestia-keys", "k"}},
		{"--hyperliquid-keys", "--hyperliquid-hsm-keys", []string{"--hyperliquid-api", "testnet=http://127.0.0.1:1", "--hyperliquid-keys", "k"}},
	} {
		t.Run(tc.hsm, func(t *testing.T) {
			cfg := parsed(t, append(append(append([]string{}, pkcs11...), tc.args...), tc.hsm, "label-0")...)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.files+" and "+tc.hsm+" are both set")

			// The HSM keys alone are accepted (the passphrase file goes with the key files).
			args := append(append([]string{}, pkcs11...), tc.args[:2]...)
			cfg = parsed(t, append(args, tc.hsm, "label-0,id:0a0b")...)
			require.NoError(t, cfg.Validate())
		})
	}
}

// TestPKCS11SettingsComeTogether: a PKCS#11 setting without the others is refused, naming them.
func TestPKCS11SettingsComeTogether(t *testing.T) {
	cfg := parsed(t, "--solana-rpc", "testnet=http://127.0.0.1:1", "--solana-hsm-keys", "a", "--pkcs11-module", "/lib/x.so")
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--pkcs11-token and --pkcs11-pin-file: required")
}

// TestPINFileOthersMayReadStopsTheWorker: the worker does not start with a PIN file the group
// or others may read; the error names the file and not the PIN.
func TestPINFileOthersMayReadStopsTheWorker(t *testing.T) {
	dir := t.TempDir()
	pin := filepath.Join(dir, "pin")
	require.NoError(t, os.WriteFile(pin, []byte("5150-canary-pin\n"), 0o644))
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte("t"), 0o600))
	cfg := parsed(t, "--solana-rpc", "testnet=http://127.0.0.1:1", "--solana-hsm-keys", "a",
		"--pkcs11-module", "/usr/lib/softhsm/libsofthsm2.so", "--pkcs11-token", "t", "--pkcs11-pin-file", pin,
		"--service-token-file", token, "--data-dir", dir, "--health-addr", "")
	err := Run(context.Background(), cfg, zap.NewNop())
	require.ErrorIs(t, err, hsmkeys.ErrPINFileMode)
	assert.Contains(t, err.Error(), pin)
	assert.NotContains(t, err.Error(), "5150-canary-pin")
}

// TestHSMKeysWithoutAToken: a chain naming keys in an HSM on a worker with no PKCS#11 token is
// refused at start, naming the chain's setting and the token's.
func TestHSMKeysWithoutAToken(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte("t"), 0o600))
	cfg := parsed(t, "--solana-rpc", "testnet=http://127.0.0.1:1", "--solana-genesis", "testnet=4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY",
		"--solana-hsm-keys", "a", "--service-token-file", token, "--data-dir", dir, "--health-addr", "")
	err := Run(context.Background(), cfg, zap.NewNop())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--solana-hsm-keys names keys in an HSM but no token is configured: set --pkcs11-module")
}
