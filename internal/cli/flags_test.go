package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func newSet() (*flag.FlagSet, *string, *string, *StringList, *StringMap) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	a := fs.String("service-url", "default-url", "")
	b := fs.String("namespace", "default", "")
	l := &StringList{}
	fs.Var(l, "solana-keys", "")
	m := &StringMap{}
	fs.Var(m, "solana-rpc", "")
	fs.String("config", "", "")
	return fs, a, b, l, m
}

func TestPrecedenceCommandLineThenEnvThenFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"service-url":"file-url","namespace":"file-ns","solana-keys":["a","b"],"solana-rpc":"testnet=http://x"}`), 0o600))
	t.Setenv("STAKEFLOW_NAMESPACE", "env-ns")

	fs, url, ns, keys, rpc := newSet()
	require.NoError(t, Parse(fs, []string{"--config", file, "--service-url", "flag-url"}, "config"))
	require.Equal(t, "flag-url", *url)
	require.Equal(t, "env-ns", *ns)
	require.Equal(t, StringList{"a", "b"}, *keys)
	require.Equal(t, StringMap{"testnet": "http://x"}, *rpc)
}

func TestConfigFileErrorsNameTheSetting(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"servce-url":"x"}`), 0o600))
	fs, _, _, _, _ := newSet()
	require.ErrorContains(t, Parse(fs, []string{"--config", file}, "config"), `unknown setting "servce-url"`)

	require.NoError(t, os.WriteFile(file, []byte(`{"solana-rpc":"testnet"}`), 0o600))
	fs, _, _, _, _ = newSet()
	require.ErrorContains(t, Parse(fs, []string{"--config", file}, "config"), `setting "solana-rpc"`)

	require.NoError(t, os.WriteFile(file, []byte(`[1]`), 0o600))
	fs, _, _, _, _ = newSet()
	require.ErrorContains(t, Parse(fs, []string{"--config", file}, "config"), "not a JSON object")
}

func TestConfigFileKeepsLargeNumbersExact(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"threshold":100000000000,"max":18446744073709551615,"on":true}`), 0o600))
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	threshold := fs.Uint64("threshold", 0, "")
	maxv := fs.Uint64("max", 0, "")
	on := fs.Bool("on", false, "")
	fs.String("config", "", "")
	require.NoError(t, Parse(fs, []string{"--config", file}, "config"))
	require.Equal(t, uint64(100_000_000_000), *threshold)
	require.Equal(t, uint64(18446744073709551615), *maxv)
	require.True(t, *on)
}

func TestEnvName(t *testing.T) {
	require.Equal(t, "STAKEFLOW_SERVICE_TOKEN_FILE", EnvName("service-token-file"))
}
