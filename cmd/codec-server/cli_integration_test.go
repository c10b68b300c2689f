//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/internal/cli"
)

// probeInput is the input of the workflow started here: no worker runs it, the start alone puts
// the sealed input in the history.
type probeInput struct {
	Staker string `json:"staker"`
	Note   string `json:"note"`
}

// TestTemporalCLIReadsHistoriesThroughTheCodecServer runs the built codec-server binary beside a
// Temporal dev server, starts a workflow through a client that seals payloads with the keyset,
// and reads its history with the real Temporal CLI: with --codec-endpoint and the token the input
// shows in clear; without the endpoint only ciphertext; with a wrong token the CLI fails. The
// binary also refuses requests without a valid token and browser requests from another origin.
func TestTemporalCLIReadsHistoriesThroughTheCodecServer(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through `make test-integration` (scripts/tools.sh temporal installs it)")
	dir := t.TempDir()

	// The keyset and the tokens, as an operator makes them.
	keyFile, err := codec.NewKeyFile("k1")
	require.NoError(t, err)
	raw, err := json.Marshal(keyFile)
	require.NoError(t, err)
	keysetPath := filepath.Join(dir, "keyset.json")
	require.NoError(t, os.WriteFile(keysetPath, raw, 0o600))
	token, otherToken := randomHex(t), randomHex(t)
	tokenFile := filepath.Join(dir, "tokens")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))

	// The codec server: the command itself, built here.
	bin := filepath.Join(dir, "codec-server")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	const ui = "http://127.0.0.1:8233"
	codecURL, logs, proc := startCodecServer(t, bin, "--listen", "127.0.0.1:0", "--payload-keyset", keysetPath,
		"--token-file", tokenFile, "--ui-origin", ui, "--log-format", "json")

	// Temporal, and a client that seals every payload with the keyset.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	copts := &client.Options{}
	require.NoError(t, (&cli.Temporal{PayloadKeyset: keysetPath}).Encrypt(copts))
	dev, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: cliPath, ClientOptions: copts, LogLevel: "error",
		DBFilename: filepath.Join(dir, "temporal.db"),
	})
	require.NoError(t, err)
	t.Cleanup(func() { dev.Client().Close(); _ = dev.Stop() })

	canary := "Stake111Canary" + randomHex(t)[:12]
	wfID := "codec-cli-" + randomHex(t)[:8]
	_, err = dev.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wfID, TaskQueue: "codec-cli-probe"},
		"CodecProbe", probeInput{Staker: canary, Note: "stake 2 SOL"})
	require.NoError(t, err)

	show := func(extra ...string) (string, error) {
		args := append([]string{"workflow", "show", "--address", dev.FrontendHostPort(), "--namespace", "default",
			"--workflow-id", wfID, "--output", "json"}, extra...)
		cmd := exec.CommandContext(ctx, cliPath, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String() + stderr.String(), err
	}

	// Through the codec server, with the token: the input in clear.
	shown, err := show("--codec-endpoint", codecURL, "--codec-auth", "Bearer "+token)
	require.NoError(t, err, shown)
	md, data := startInput(t, shown)
	assert.Equal(t, "json/plain", md["encoding"], "the decoded input's encoding")
	var got probeInput
	require.NoError(t, json.Unmarshal(data, &got), "the decoded input: %s", data)
	assert.Equal(t, probeInput{Staker: canary, Note: "stake 2 SOL"}, got)

	// Without it: the same input, sealed under k1, with nothing of the input in it.
	shown, err = show()
	require.NoError(t, err, shown)
	md, data = startInput(t, shown)
	assert.Equal(t, codec.Encoding, md["encoding"], "the input is not marked as encrypted")
	assert.Equal(t, "k1", md[codec.MetadataKeyID])
	assert.NotContains(t, string(data), canary, "the input is in clear in the server's history")
	assert.NotContains(t, string(data), "stake 2 SOL")
	assert.NotContains(t, shown, canary)

	// A token the server does not hold: the CLI fails rather than show anything.
	// (The CLI retries the refused decode until its deadline and then names no status: the
	// server's log says why it failed.)
	const refusal = "without a valid token refused"
	before := strings.Count(logs(), refusal)
	refused, err := show("--codec-endpoint", codecURL, "--codec-auth", "Bearer "+otherToken)
	require.Error(t, err, "the CLI read the history through the codec server with a wrong token: %s", refused)
	assert.Eventually(t, func() bool { return strings.Count(logs(), refusal) > before }, 5*time.Second, 20*time.Millisecond,
		"the CLI failed for another reason than the codec server's refusal: %s", refused)
	assert.NotContains(t, refused, canary)
	assert.NotContains(t, refused, otherToken)

	// The binary, black-box: no token, a wrong token, another origin.
	body := `{"payloads":[]}`
	for name, c := range map[string]struct {
		url, origin, auth string
		want              int
	}{
		"no token":         {codecURL + "/decode", "", "", http.StatusUnauthorized},
		"wrong token":      {codecURL + "/decode", "", "Bearer " + otherToken, http.StatusUnauthorized},
		"wrong path token": {codecURL + "/" + otherToken + "/decode", ui, "", http.StatusUnauthorized},
		"another origin":   {codecURL + "/decode", "http://127.0.0.1:9999", "Bearer " + token, http.StatusForbidden},
		"the UI's origin":  {codecURL + "/" + token + "/decode", ui, "", http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer func() { _ = resp.Body.Close() }()
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, c.want, resp.StatusCode, "%s", b)
			if c.want == http.StatusForbidden {
				assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "a refused origin is allowed")
			}
		})
	}

	// SIGHUP: the token file now holds the other token only; once reloaded, the binary takes that
	// one and refuses the first.
	require.NoError(t, os.WriteFile(tokenFile, []byte(otherToken+"\n"), 0o600))
	require.NoError(t, proc.Signal(syscall.SIGHUP))
	status := func(tok string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, codecURL+"/decode", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Eventually(t, func() bool { return status(otherToken) == http.StatusOK }, 10*time.Second, 50*time.Millisecond, "the reloaded token is refused")
	assert.Equal(t, http.StatusUnauthorized, status(token), "the removed token is still taken")
	assert.Contains(t, logs(), "Reloaded")

	// The refusals were logged, and no token or input with them.
	l := logs()
	assert.Contains(t, l, refusal)
	assert.Contains(t, l, "http://127.0.0.1:9999")
	for _, secret := range []string{token, otherToken, canary} {
		assert.NotContains(t, l, secret, "the codec server logged a token or a payload")
	}
}

// startInput returns the metadata and data of the input of the history's first event (the
// workflow's start) in `temporal workflow show --output json`, base64-decoded.
func startInput(t *testing.T, out string) (map[string]string, []byte) {
	t.Helper()
	var h struct {
		Events []struct {
			EventType string `json:"eventType"`
			Started   struct {
				Input struct {
					Payloads []struct {
						Metadata map[string]string `json:"metadata"`
						Data     string            `json:"data"`
					} `json:"payloads"`
				} `json:"input"`
			} `json:"workflowExecutionStartedEventAttributes"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &h), "not the JSON of a history: %s", out)
	require.NotEmpty(t, h.Events, out)
	require.Equal(t, "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED", h.Events[0].EventType)
	payloads := h.Events[0].Started.Input.Payloads
	require.Len(t, payloads, 1, out)
	md := map[string]string{}
	for k, v := range payloads[0].Metadata {
		b, err := base64.StdEncoding.DecodeString(v)
		require.NoError(t, err)
		md[k] = string(b)
	}
	data, err := base64.StdEncoding.DecodeString(payloads[0].Data)
	require.NoError(t, err)
	return md, data
}

// startCodecServer starts the binary and returns its base URL, read from its "listening" log
// line; the process is stopped with SIGTERM (and must exit 0) when the test ends.
func startCodecServer(t *testing.T, bin string, args ...string) (string, func() string, *os.Process) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	addr := make(chan string, 1)
	var logs bytes.Buffer
	var mu sync.Mutex
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"codecAddr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Addr != "" {
				addr <- line.Addr
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		<-scanned
		mu.Lock()
		defer mu.Unlock()
		assert.NoError(t, err, "codec-server did not stop cleanly: %s", logs.String())
	})
	logged := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	select {
	case a := <-addr:
		return "http://" + a, logged, cmd.Process
	case <-scanned:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("codec-server exited before listening: %s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("codec-server did not log its address within 30s")
	}
	return "", nil, nil
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}
