//go:build integration

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/stack"
)

// lockedBuffer is a bytes.Buffer safe for the command and the test to use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stackArgs are the flags of demo and up for a stack on ports free now in its own directory. devstack
// takes fixed ports, as a developer gives them, and the Temporal CLI cannot bind port 0: another
// process may take a picked port before the stack binds it (portTaken), and the caller then starts
// again on new ports.
func stackArgs(t *testing.T, dir string) (args []string, temporalPort, uiPort int) {
	t.Helper()
	if os.Getenv("TEMPORAL_CLI") == "" {
		t.Fatal("TEMPORAL_CLI is not set; run with TEMPORAL_CLI=$(scripts/tools.sh temporal)")
	}
	temporalPort, uiPort = pickPort(t), pickPort(t)
	return []string{"--stack-dir", dir, "--temporal-port", strconv.Itoa(temporalPort), "--ui-port", strconv.Itoa(uiPort),
		"--stakers", "2"}, temporalPort, uiPort
}

// portTaken reports whether err is devstack refusing a port stackArgs picked, or the Temporal
// dev server refusing it, because another process took it after it was picked.
func portTaken(err error) bool {
	var inUse *portInUseError
	return errors.As(err, &inUse) || errors.Is(err, stack.ErrPortInUse)
}

// startAttempts bounds the starts on new ports after a picked port was taken.
const startAttempts = 5

func TestUpRunsUntilCancelledAndRefusesABusyPort(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		args                 []string
		temporalPort, uiPort int
		out                  *lockedBuffer
		done                 chan error
	)
	for attempt := 1; ; attempt++ {
		args, temporalPort, uiPort = stackArgs(t, dir)
		out, done = &lockedBuffer{}, make(chan error, 1)
		go func() { done <- run(ctx, append([]string{"up"}, args...), out, io.Discard) }()
		require.Eventually(t, func() bool {
			select {
			case err := <-done:
				done <- err
				return true
			default:
			}
			return bytes.Contains([]byte(out.String()), []byte("Running; Ctrl-C stops everything."))
		}, 10*time.Minute, 100*time.Millisecond)
		select {
		case err := <-done:
			if portTaken(err) && attempt < startAttempts {
				t.Logf("a picked port was taken; starting again on new ports: %v", err)
				continue
			}
			t.Fatalf("up ended early: %v\n%s", err, out.String())
		default:
		}
		break
	}
	text := out.String()
	ui := "http://127.0.0.1:" + strconv.Itoa(uiPort)
	assert.Contains(t, text, "Temporal:   127.0.0.1:"+strconv.Itoa(temporalPort))
	assert.Contains(t, text, "Web UI:     "+ui)
	assert.Contains(t, text, "go run ./harness/cmd/devstack warp --epochs 1 --rpc http://127.0.0.1:")

	resp, err := http.Get(ui + "/namespaces/default/workflows")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// Payloads are encrypted with a keyset made in the stack directory; the starter commands take
	// it, and the codec server up names reads them back for the CLI with the token in its file.
	keyset := filepath.Join(dir, keysetFile)
	assert.Contains(t, text, "STAKEFLOW_TEMPORAL_ADDRESS=127.0.0.1:"+strconv.Itoa(temporalPort)+" STAKEFLOW_PAYLOAD_KEYSET="+keyset+" go run ./cmd/starter stake --network testnet --staker ")
	show := regexp.MustCompile(`workflow show --address 127\.0\.0\.1:` + strconv.Itoa(temporalPort) +
		` -w OPERATION_ID --codec-endpoint (http://127\.0\.0\.1:\d+) --codec-auth "Bearer \$\(cat ([^)]+)\)"`).FindStringSubmatch(text)
	require.NotNil(t, show, "up prints the Temporal CLI command that decodes a history:\n%s", text)
	codecURL, tokenFile := show[1], show[2]
	require.Equal(t, filepath.Join(dir, stack.CodecTokenFile), tokenFile)
	for _, f := range []string{keyset, tokenFile} {
		info, err := os.Stat(f)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), f)
	}
	keys, err := codec.LoadKeyset(keyset)
	require.NoError(t, err)
	clear, err := converter.GetDefaultDataConverter().ToPayload("a staker address")
	require.NoError(t, err)
	sealed, err := codec.New(keys).Encode([]*commonpb.Payload{clear})
	require.NoError(t, err)
	token, err := os.ReadFile(tokenFile)
	require.NoError(t, err)
	remote := func(auth string) converter.PayloadCodec {
		return converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{Endpoint: codecURL, ModifyRequest: func(r *http.Request) error {
			r.Header.Set("Authorization", auth)
			return nil
		}})
	}
	opened, err := remote("Bearer " + strings.TrimSpace(string(token))).Decode(sealed)
	require.NoError(t, err)
	require.Len(t, opened, 1)
	require.True(t, proto.Equal(clear, opened[0]), "the codec server opens what the stack's keyset sealed")
	_, err = remote("Bearer " + strings.Repeat("0", 64)).Decode(sealed)
	require.ErrorContains(t, err, http.StatusText(http.StatusUnauthorized), "a wrong token is refused")
	// The Web UI is pointed at the same codec server.
	resp, err = http.Get(ui + "/api/v1/settings")
	require.NoError(t, err)
	settings, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(settings), codecURL+"/"+strings.TrimSpace(string(token)))

	// A second stack on the same ports is refused with the port named.
	err = run(ctx, append([]string{"demo"}, append(args, "--stack-dir", t.TempDir())...), io.Discard, io.Discard)
	var inUse *portInUseError
	require.ErrorAs(t, err, &inUse)
	require.Equal(t, "temporal-port", inUse.Flag)
	require.ErrorContains(t, err, "127.0.0.1:"+strconv.Itoa(temporalPort))

	// warp finds the running stack's runtime through the stack directory.
	var warpOut bytes.Buffer
	require.NoError(t, run(ctx, []string{"warp", "--stack-dir", dir}, &warpOut, io.Discard))
	require.Contains(t, warpOut.String(), "to epoch")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("up did not stop within a minute of the cancel")
	}
	require.Contains(t, out.String(), "stopped")
	require.NoFileExists(t, filepath.Join(dir, rpcURLFile))
	for _, port := range []int{temporalPort, uiPort} {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		require.NoError(t, err, "port %d still held after stop", port)
		_ = l.Close()
	}
}

func TestDemoStakesUnstakesAndWithdraws(t *testing.T) {
	dir := t.TempDir()
	var text string
	// Twice on one directory: the second run reopens the persisted Temporal database.
	for i := 0; i < 2; i++ {
		var out *lockedBuffer
		var err error
		for attempt := 1; ; attempt++ {
			args, _, _ := stackArgs(t, dir)
			out = &lockedBuffer{}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			err = run(ctx, append([]string{"demo"}, args...), out, io.Discard)
			cancel()
			if !portTaken(err) || attempt == startAttempts {
				break
			}
			t.Logf("a picked port was taken; starting again on new ports: %v", err)
		}
		text = out.String()
		require.NoError(t, err, text)
		for _, want := range []string{
			"chain clock: slot 100ms, 256 slots per epoch",
			"done: stake 2 SOL",
			"waiting-deactivation",
			"(devstack) warped the chain from epoch",
			"withdraw tx",
			"demo finished: 2 SOL staked, unstaked and withdrawn",
			"/namespaces/default/workflows/demo-unstake-",
			"waiting-withdrawal-delay",
			"(devstack) advanced the StakeManager",
			"demo finished: 100 POL delegated, 40 POL unstaked and claimed back to",
			"/namespaces/default/workflows/demo-polygon-unstake-",
			"done: celestia delegate 5 TIA",
			"the ledger holds 5000000 utia delegated by",
			"stopped",
		} {
			assert.Contains(t, text, want, "run %d", i+1)
		}
	}
	require.FileExists(t, filepath.Join(dir, "temporal.db"))
	assert.Contains(t, text, "STAKEFLOW_PAYLOAD_KEYSET="+filepath.Join(dir, keysetFile)+" go run ./cmd/starter stake ", "the starter runs with the keyset")

	// What the Temporal server stored of the last run: its database, reopened by a dev server
	// whose client has no codec, as anyone reading the database would.
	dev, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{
		ExistingPath: os.Getenv("TEMPORAL_CLI"), DBFilename: filepath.Join(dir, "temporal.db"), LogLevel: "error",
	})
	require.NoError(t, err)
	defer func() { _ = dev.Stop() }()
	keys, err := codec.LoadKeyset(filepath.Join(dir, keysetFile))
	require.NoError(t, err)
	lastMatch := func(re string) string {
		all := regexp.MustCompile(re).FindAllStringSubmatch(text, -1)
		require.NotEmpty(t, all, "%s in the demo's output:\n%s", re, text)
		return all[len(all)-1][1]
	}
	solStaker := lastMatch(`  staker: +(\S+) \(funded`)
	requireSealed(t, dev.Client(), keys, lastMatch(`/workflows/(demo-stake-\S+)`), solStaker, solStaker)
	// The Polygon delegate's events name its nonce lease, whose workflow ID holds the staker's
	// address (an ID is not a payload): only its payloads are checked.
	evmStaker := lastMatch(`  staker: +(0x[0-9a-fA-F]{40})`)
	requireSealed(t, dev.Client(), keys, lastMatch(`/workflows/(demo-polygon-delegate-\S+)`), evmStaker)
}

// requireSealed checks operation id's history as the server holds it: every payload is sealed
// under the stack's keyset and opens with it, the workflow's input opened names inInput, and no
// value of notInRaw appears in any event outside its search attributes (which are the server's
// index, not payloads the codec seals).
func requireSealed(t *testing.T, c client.Client, keys *codec.Keyset, id, inInput string, notInRaw ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dc := codec.DataConverter(codec.New(keys))
	iter := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	sealed, inputs := 0, 0
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		e = proto.Clone(e).(*historypb.HistoryEvent)
		if a := e.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			a.SearchAttributes = nil
			var input map[string]any
			require.NoError(t, dc.FromPayloads(a.GetInput(), &input), "the input opens with the keyset")
			assert.Contains(t, strings.ToLower(fmt.Sprint(input)), strings.ToLower(inInput), "the input opened")
			inputs++
		}
		if a := e.GetUpsertWorkflowSearchAttributesEventAttributes(); a != nil {
			a.SearchAttributes = nil
		}
		raw, err := proto.Marshal(e)
		require.NoError(t, err)
		for _, s := range notInRaw {
			require.NotContains(t, string(raw), s, "event %d (%s) of %s holds %s in clear", e.GetEventId(), e.GetEventType(), id, s)
		}
		eachPayload(e.ProtoReflect(), func(p *commonpb.Payload) {
			require.Equal(t, codec.Encoding, string(p.GetMetadata()[converter.MetadataEncoding]), "event %d (%s) of %s", e.GetEventId(), e.GetEventType(), id)
			_, err := codec.New(keys).Decode([]*commonpb.Payload{p})
			require.NoError(t, err)
			sealed++
		})
	}
	require.Equal(t, 1, inputs, "the history of %s starts the workflow", id)
	require.Greater(t, sealed, 5, "the history of %s holds its input, results and markers, sealed", id)
}

// eachPayload calls visit on every payload m holds, at any depth.
func eachPayload(m protoreflect.Message, visit func(*commonpb.Payload)) {
	if p, ok := m.Interface().(*commonpb.Payload); ok {
		visit(p)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				eachPayload(v.List().Get(i).Message(), visit)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				eachPayload(mv.Message(), visit)
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			eachPayload(v.Message(), visit)
		}
		return true
	})
}
