package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	defaults := config{
		StackDir: ".stack", TemporalPort: 7233, UIPort: 8233, SandboxAddr: "127.0.0.1:0", RPCAddr: "127.0.0.1:0",
		SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 256, Stakers: 3, StakerSOL: 100, EpochRecheck: time.Second, Persist: true, Timeout: 5 * time.Minute,
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    func(c *config)
		wantErr string
	}{
		{name: "defaults", want: func(*config) {}},
		{name: "flags", args: []string{"--ui-port", "9233", "--temporal-port", "9234", "--slots-per-epoch", "128", "--persist=false", "--stack-dir", "/tmp/x"},
			want: func(c *config) {
				c.UIPort, c.TemporalPort, c.SlotsPerEpoch, c.Persist, c.StackDir = 9233, 9234, 128, false, "/tmp/x"
			}},
		{name: "environment twin", env: map[string]string{"STAKEFLOW_UI_PORT": "9300", "STAKEFLOW_SLOT_DURATION": "50ms"},
			want: func(c *config) { c.UIPort, c.SlotDuration = 9300, 50*time.Millisecond }},
		{name: "flag beats environment", args: []string{"--ui-port", "9301"}, env: map[string]string{"STAKEFLOW_UI_PORT": "9300"},
			want: func(c *config) { c.UIPort = 9301 }},
		{name: "port out of range", args: []string{"--ui-port", "70000"}, wantErr: "--ui-port 70000"},
		{name: "same ports", args: []string{"--ui-port", "7233"}, wantErr: "--temporal-port and --ui-port are both 7233"},
		{name: "empty epoch", args: []string{"--slots-per-epoch", "0"}, wantErr: "--slots-per-epoch 0"},
		{name: "no recheck", args: []string{"--epoch-recheck", "0s"}, wantErr: "--epoch-recheck 0s"},
		{name: "no stakers", args: []string{"--stakers", "0"}, wantErr: "--stakers 0"},
		{name: "too little SOL", args: []string{"--staker-sol", "1"}, wantErr: "--staker-sol 1"},
		{name: "keyset given", args: []string{"--payload-keyset", "/tmp/k.json"}, want: func(c *config) { c.PayloadKeyset = "/tmp/k.json" }},
		{name: "keyset from the environment", env: map[string]string{"STAKEFLOW_PAYLOAD_KEYSET": "/tmp/k.json"}, want: func(c *config) { c.PayloadKeyset = "/tmp/k.json" }},
		{name: "no encryption", args: []string{"--no-encrypt"}, want: func(c *config) { c.NoEncrypt = true }},
		{name: "keyset and no encryption", args: []string{"--no-encrypt", "--payload-keyset", "/tmp/k.json"}, wantErr: "--payload-keyset and --no-encrypt together"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope"},
		{name: "stray argument", args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := parseConfig("up", tt.args)
			if tt.wantErr != "" {
				var usage *usageError
				require.ErrorAs(t, err, &usage)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			want := defaults
			tt.want(&want)
			require.Equal(t, want, got)
		})
	}
}

func TestRunRefusesBadCommandLines(t *testing.T) {
	var out, errOut bytes.Buffer
	var usage *usageError

	err := run(context.Background(), nil, &out, &errOut)
	require.ErrorAs(t, err, &usage)
	require.Contains(t, errOut.String(), "usage: devstack")

	err = run(context.Background(), []string{"launch"}, &out, &errOut)
	require.ErrorAs(t, err, &usage)
	require.ErrorContains(t, err, `unknown command "launch"`)

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"--help"}, &out, &errOut))
	require.Contains(t, out.String(), "warp")
}

func TestCheckPortsNamesTheBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	// Port 0 is not checked: each case holds one busy port and checks nothing else that could be
	// taken meanwhile.
	tests := []struct {
		name     string
		cfg      config
		wantFlag string
	}{
		{"temporal port", config{TemporalPort: busyPort, UIPort: 0, SandboxAddr: "127.0.0.1:0", RPCAddr: "127.0.0.1:0"}, "temporal-port"},
		{"ui port", config{TemporalPort: 0, UIPort: busyPort, SandboxAddr: "127.0.0.1:0", RPCAddr: "127.0.0.1:0"}, "ui-port"},
		{"sandbox address", config{TemporalPort: 0, UIPort: 0, SandboxAddr: busy.Addr().String(), RPCAddr: "127.0.0.1:0"}, "sandbox-addr"},
		{"rpc address", config{TemporalPort: 0, UIPort: 0, SandboxAddr: "127.0.0.1:0", RPCAddr: busy.Addr().String()}, "rpc-addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPorts(tt.cfg)
			var inUse *portInUseError
			require.ErrorAs(t, err, &inUse)
			require.Equal(t, tt.wantFlag, inUse.Flag)
			require.ErrorContains(t, err, "127.0.0.1:"+strconv.Itoa(busyPort))
			require.ErrorContains(t, err, "--"+tt.wantFlag)
		})
	}
}

// TestCheckPortsPassesFreePorts: fixed ports nothing holds pass the check. A port picked free
// can be taken by another process before the check binds it; the check is then tried again on
// new ports, and only a refusal of a port nobody took fails the test.
func TestCheckPortsPassesFreePorts(t *testing.T) {
	for attempt := 1; ; attempt++ {
		cfg := config{TemporalPort: pickPort(t), UIPort: pickPort(t), SandboxAddr: "127.0.0.1:0", RPCAddr: "127.0.0.1:0"}
		err := checkPorts(cfg)
		if err == nil {
			return
		}
		var inUse *portInUseError
		require.ErrorAs(t, err, &inUse)
		if attempt == 5 || !takenSince(inUse.Addr) {
			t.Fatalf("free ports refused: %v", err)
		}
	}
}

// pickPort is a port free now (another process may take it before it is used).
func pickPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// takenSince reports whether something now holds addr: a port checkPorts refused because another
// process took it after it was picked.
func takenSince(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return true
	}
	_ = l.Close()
	return false
}

// fakeRuntime answers getEpochInfo and sandbox_warpEpochs like the Solana runtime does, and
// records the warp requests' params.
type fakeRuntime struct {
	mu     sync.Mutex
	epoch  uint64
	warps  []json.RawMessage
	server *httptest.Server
}

func newFakeRuntime(t *testing.T, epoch uint64) *fakeRuntime {
	f := &fakeRuntime{epoch: epoch}
	f.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     any             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if !assert.NoError(t, json.NewDecoder(r.Body).Decode(&req)) {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		var result any
		switch req.Method {
		case "getEpochInfo":
			result = map[string]any{"absoluteSlot": f.epoch * 64, "blockHeight": f.epoch * 64, "epoch": f.epoch,
				"slotIndex": 0, "slotsInEpoch": 64, "transactionCount": 1}
		case "sandbox_warpEpochs":
			f.warps = append(f.warps, req.Params)
			var p []struct{ N uint64 }
			if assert.NoError(t, json.Unmarshal(req.Params, &p)) && assert.Len(t, p, 1) {
				f.epoch += p[0].N
			}
			result = map[string]any{"epoch": f.epoch}
		default:
			t.Errorf("unexpected method %s", req.Method)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(f.server.Close)
	return f
}

func TestWarpCallsSandboxWarpEpochs(t *testing.T) {
	f := newFakeRuntime(t, 3)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"warp", "--epochs", "2", "--rpc", f.server.URL}, &out, io.Discard))
	require.Equal(t, "warped the chain at "+f.server.URL+" from epoch 3 to epoch 5\n", out.String())
	require.Len(t, f.warps, 1)
	require.JSONEq(t, `[{"n":2}]`, string(f.warps[0]))
}

func TestWarpReadsTheRunningStacksRPCURL(t *testing.T) {
	f := newFakeRuntime(t, 0)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, rpcURLFile), []byte(f.server.URL+"\n"), 0o600))
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"warp", "--stack-dir", dir}, &out, io.Discard))
	require.Contains(t, out.String(), "from epoch 0 to epoch 1")
	require.JSONEq(t, `[{"n":1}]`, string(f.warps[0]))
}

func TestWarpRefusesWhatItCannotDo(t *testing.T) {
	var usage *usageError
	err := run(context.Background(), []string{"warp", "--stack-dir", t.TempDir()}, io.Discard, io.Discard)
	require.ErrorAs(t, err, &usage)
	require.ErrorContains(t, err, "no stack is running")

	err = run(context.Background(), []string{"warp", "--epochs", "0", "--rpc", "http://127.0.0.1:1"}, io.Discard, io.Discard)
	require.ErrorAs(t, err, &usage)
	require.ErrorContains(t, err, "--epochs 0")

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	err = run(context.Background(), []string{"warp", "--rpc", closed.URL}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "reading the epoch from "+closed.URL)
}

func TestStepWatchSignalsAfterTheStepLine(t *testing.T) {
	var out bytes.Buffer
	w := newStepWatch(&out, "waiting-deactivation")
	_, err := io.WriteString(w, "  unstake X, wait for deactivation, withdraw\n  00:00:01  confirming (unstake tx S)\n")
	require.NoError(t, err)
	select {
	case <-w.seen:
		t.Fatal("signalled before the step was printed")
	default:
	}
	_, err = io.WriteString(w, "  00:00:02  waiting-deactivation (unstake tx S)\n")
	require.NoError(t, err)
	_, err = io.WriteString(w, "  00:00:03  waiting-deactivation again\n")
	require.NoError(t, err)
	select {
	case <-w.seen:
	default:
		t.Fatal("not signalled after the step was printed")
	}
	require.Equal(t, 4, strings.Count(out.String(), "\n"), "every write passes through")
}

func TestClockLineStatesTheChainClock(t *testing.T) {
	line := clockLine(config{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 256, EpochRecheck: time.Second})
	require.Contains(t, line, "slot 100ms")
	require.Contains(t, line, "256 slots per epoch (an epoch every 25.6s)")
	require.Contains(t, line, "final 32 slots deep (3.2s)")
	require.Contains(t, line, "read again at least every 1s")
}

func TestTemporalCLIPrefersFlagThenEnvironment(t *testing.T) {
	dir := t.TempDir()
	flagBin := filepath.Join(dir, "flag-temporal")
	envBin := filepath.Join(dir, "env-temporal")
	for _, p := range []string{flagBin, envBin} {
		require.NoError(t, os.WriteFile(p, nil, 0o700))
	}
	t.Setenv("TEMPORAL_CLI", envBin)

	got, err := temporalCLI(flagBin, io.Discard)
	require.NoError(t, err)
	require.Equal(t, flagBin, got)

	got, err = temporalCLI("", io.Discard)
	require.NoError(t, err)
	require.Equal(t, envBin, got)

	missing := filepath.Join(dir, "missing")
	_, err = temporalCLI(missing, io.Discard)
	require.ErrorContains(t, err, missing)
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"usage", &usageError{msg: "no command given"}, 2},
		{"interrupted", errInterrupted, 130},
		{"failure", errors.New("stake failed"), 1},
		{"wrapped usage", fmt.Errorf("demo: %w", &usageError{msg: "x"}), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, exitCode(tt.err))
		})
	}
}

func TestPayloadKeysetIsGeneratedOnceInTheStackDirectory(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	path, err := payloadKeyset(config{StackDir: dir}, &out)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, keysetFile), path)
	require.Contains(t, out.String(), "generated the payload keyset "+path)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	first, err := os.ReadFile(path)
	require.NoError(t, err)

	// The next run keeps it: the database holds payloads sealed with it.
	out.Reset()
	again, err := payloadKeyset(config{StackDir: dir}, &out)
	require.NoError(t, err)
	require.Equal(t, path, again)
	require.Empty(t, out.String())
	second, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, first, second)

	none, err := payloadKeyset(config{StackDir: t.TempDir(), NoEncrypt: true}, &out)
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestPayloadKeysetGivenIsCheckedBeforeTheStackStarts(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open.json")
	require.NoError(t, os.WriteFile(open, []byte(`{"current":"k","keys":[]}`), 0o644))
	_, err := payloadKeyset(config{StackDir: dir, PayloadKeyset: open}, io.Discard)
	require.ErrorContains(t, err, "--payload-keyset")
	require.ErrorContains(t, err, open)
	require.NoFileExists(t, filepath.Join(dir, keysetFile), "a keyset given is used, none generated")

	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{"current":"k","keys":[]}`), 0o600))
	_, err = payloadKeyset(config{StackDir: dir, PayloadKeyset: empty}, io.Discard)
	require.ErrorContains(t, err, "no keys")
}
