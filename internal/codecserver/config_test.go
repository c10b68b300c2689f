package codecserver

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/internal/cli"
)

// writeKeyset writes a keyset file of one fresh key, mode 0600, and returns its path and keys.
func writeKeyset(t *testing.T, dir, id string) (string, *codec.Keyset) {
	t.Helper()
	f, err := codec.NewKeyFile(id)
	require.NoError(t, err)
	b, err := json.Marshal(f)
	require.NoError(t, err)
	p := filepath.Join(dir, "keyset.json")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	keys, err := codec.ParseKeyset(b)
	require.NoError(t, err)
	return p, keys
}

func writeSecret(t *testing.T, path, content string) string {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestReadTokens(t *testing.T) {
	dir := t.TempDir()
	other := strings.Repeat("b", 40)

	got, err := ReadTokens(writeSecret(t, filepath.Join(dir, "two"), "\n"+token+"\n\n  "+other+"  \r\n\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{token, other}, got, "one token a line, blank lines and surrounding space ignored")

	for name, c := range map[string]struct{ content, want string }{
		"empty":         {"\n\n", "holds no token"},
		"short":         {token + "\nabc\n", "line 2: a token of 3 characters; at least 32"},
		"inner space":   {token[:20] + " " + token[20:] + "\n", "line 1: a token holds a slash or a space"},
		"slash in path": {token[:20] + "/" + token[20:] + "\n", "line 1: a token holds a slash or a space"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadTokens(writeSecret(t, filepath.Join(dir, name), c.content))
			require.ErrorContains(t, err, c.want)
			assert.NotContains(t, err.Error(), token[:20], "a token in an error")
		})
	}
	t.Run("readable by others", func(t *testing.T) {
		p := writeSecret(t, filepath.Join(dir, "open"), token+"\n")
		require.NoError(t, os.Chmod(p, 0o640))
		_, err := ReadTokens(p)
		require.ErrorContains(t, err, "chmod 600 "+p)
		assert.NotContains(t, err.Error(), token)
	})
}

func TestValidateNamesEveryMissingSetting(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("codec-server", flag.ContinueOnError)
	c.Register(fs)
	require.NoError(t, cli.Parse(fs, []string{"--ui-origin", "http://ui.example/path", "--tls-cert", "c.pem"}, "config"))
	err := c.Validate()
	require.Error(t, err)
	for _, want := range []string{"--payload-keyset is required", "--token-file is required", `--ui-origin: UI origin "http://ui.example/path"`, "--tls-cert and --tls-key go together"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestUIOriginRepeatsAndSplits(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("codec-server", flag.ContinueOnError)
	c.Register(fs)
	require.NoError(t, fs.Parse([]string{"--ui-origin", "http://a:8080", "--ui-origin", "https://b.example, http://c:1"}))
	assert.Equal(t, OriginList{"http://a:8080", "https://b.example", "http://c:1"}, c.UIOrigins)
	assert.Equal(t, DefaultListen, c.Listen)
}

// startRun runs Run on a free port and returns its base URL, the channel Run returns on and the
// reload channel.
func startRun(t *testing.T, ctx context.Context, cfg Config) (string, <-chan error, chan<- struct{}) {
	t.Helper()
	reload := make(chan struct{})
	addr := make(chan net.Addr, 1)
	cfg.Listen = "127.0.0.1:0"
	cfg.Reload = reload
	cfg.Listening = func(a net.Addr) { addr <- a }
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, zap.NewNop()) }()
	select {
	case a := <-addr:
		return "http://" + a.String(), done, reload
	case err := <-done:
		require.NoError(t, err, "Run returned before listening")
		return "", nil, nil
	}
}

func TestRunServesRotatesTokensOnReloadAndStops(t *testing.T) {
	dir := t.TempDir()
	keysetPath, keys := writeKeyset(t, dir, "k1")
	second := strings.Repeat("c", 32)
	tokens := writeSecret(t, filepath.Join(dir, "tokens"), token+"\n\n"+second+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, reload := startRun(t, ctx, Config{PayloadKeyset: keysetPath, TokenFile: tokens, UIOrigins: OriginList{ui}, StopTimeout: 5 * time.Second})

	clear, err := converter.GetDefaultDataConverter().ToPayload("stake 2 SOL")
	require.NoError(t, err)
	sealed, err := codec.New(keys).Encode([]*commonpb.Payload{clear})
	require.NoError(t, err)
	decodeWith := func(tok string) int {
		resp, out := post(t, base+"/decode", "", "Bearer "+tok, body(t, sealed...))
		if resp.StatusCode == http.StatusOK {
			require.Equal(t, clear.Data, decoded(t, out)[0].Data)
		}
		return resp.StatusCode
	}
	// Both tokens of the file are accepted (a rotation in progress).
	assert.Equal(t, http.StatusOK, decodeWith(token))
	assert.Equal(t, http.StatusOK, decodeWith(second))

	// The file loses the first token; after a reload it is refused and the second still passes.
	writeSecret(t, tokens, second+"\n")
	reload <- struct{}{}
	require.Eventually(t, func() bool { return decodeWith(token) == http.StatusUnauthorized }, 5*time.Second, 20*time.Millisecond)
	assert.Equal(t, http.StatusOK, decodeWith(second))

	// A reload that fails (a token file others may read) keeps the last good state.
	require.NoError(t, os.Chmod(tokens, 0o644))
	reload <- struct{}{}
	reload <- struct{}{} // the second send returns once the first reload is done
	assert.Equal(t, http.StatusOK, decodeWith(second))

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	_, err = http.Get(base + "/healthz")
	require.Error(t, err, "still listening after stop")
}

func TestRunRefusesBeforeListening(t *testing.T) {
	dir := t.TempDir()
	keysetPath, _ := writeKeyset(t, dir, "k1")
	tokens := writeSecret(t, filepath.Join(dir, "tokens"), token+"\n")
	open := writeSecret(t, filepath.Join(dir, "open-keyset.json"), string(must(os.ReadFile(keysetPath))))
	require.NoError(t, os.Chmod(open, 0o644))

	for name, c := range map[string]struct {
		cfg  Config
		want string
	}{
		"no keyset":        {Config{TokenFile: tokens}, "--payload-keyset is required"},
		"no token file":    {Config{PayloadKeyset: keysetPath}, "--token-file is required"},
		"keyset readable":  {Config{PayloadKeyset: open, TokenFile: tokens}, "chmod 600 " + open},
		"token file gone":  {Config{PayloadKeyset: keysetPath, TokenFile: filepath.Join(dir, "absent")}, "--token-file: "},
		"tls pair missing": {Config{PayloadKeyset: keysetPath, TokenFile: tokens, TLSCert: filepath.Join(dir, "c"), TLSKey: filepath.Join(dir, "k")}, "--tls-cert/--tls-key"},
	} {
		t.Run(name, func(t *testing.T) {
			c.cfg.Listen = "127.0.0.1:0"
			c.cfg.Listening = func(net.Addr) { t.Error("listened") }
			err := Run(context.Background(), c.cfg, zap.NewNop())
			require.ErrorContains(t, err, c.want)
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
