package stack

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/cli"
)

// TestStartRefusesMissingOptions: the two required options are named before anything starts.
func TestStartRefusesMissingOptions(t *testing.T) {
	_, err := Start(context.Background(), Options{Dir: t.TempDir()})
	require.ErrorContains(t, err, "TemporalCLI is required")
	_, err = Start(context.Background(), Options{TemporalCLI: "/nonexistent/temporal"})
	require.ErrorContains(t, err, "Dir is required")
}

// TestCompressionDefaultsToNone: on loopback the stack's Temporal connections skip gzip unless
// asked for it.
func TestCompressionDefaultsToNone(t *testing.T) {
	require.Equal(t, cli.CompressionNone, (&Stack{}).compression())
	require.Equal(t, "gzip", (&Stack{opts: Options{GRPCCompression: "gzip"}}).compression())
}

// TestPortRefusalWatchSeesTheCLIRefusal: the Temporal CLI's refusal of a taken port (the line
// Temporal CLI 1.5.1 prints, here split across writes as a pipe may deliver it) is seen once and
// reported; other output is not taken for a refusal.
func TestPortRefusalWatchSeesTheCLIRefusal(t *testing.T) {
	calls := 0
	w := &PortRefusalWatch{OnRefused: func() { calls++ }}
	for _, chunk := range []string{
		"time=2026-11-23T20:36:41.100 level=WARN msg=\"listening on 127.0.0.1:7233\"\n",
		"time=2026-11-23T20:36:41.292 level=ERROR msg=\"can't set frontend port 47723: listen tcp 127.0.0.1:47723: bind: add",
		"ress already in use\"\n",
		"time=2026-11-23T20:36:41.384 level=ERROR msg=\"can't set UI port 47724: listen tcp 127.0.0.1:47724: bind: address already in use\"\n",
	} {
		n, err := w.Write([]byte(chunk))
		require.NoError(t, err)
		require.Equal(t, len(chunk), n)
	}
	require.Equal(t, `time=2026-11-23T20:36:41.292 level=ERROR msg="can't set frontend port 47723: listen tcp 127.0.0.1:47723: bind: address already in use"`, w.Refused())
	require.Equal(t, 1, calls)

	quiet := &PortRefusalWatch{}
	_, err := quiet.Write([]byte("time=2026-11-23T20:36:41.384 level=ERROR msg=\"failed starting server: missing frontend port\"\n"))
	require.NoError(t, err)
	require.Empty(t, quiet.Refused())
}

// TestDupListenerOutlivesItsCopy: a worker closing the listener the stack handed it leaves the
// stack's socket bound, and the next copy serves on the same address.
func TestDupListenerOutlivesItsCopy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	for i := 0; i < 2; i++ {
		dup, err := dupListener(ln)
		require.NoError(t, err)
		require.Equal(t, ln.Addr().String(), dup.Addr().String())
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "copy "+strconv.Itoa(i))
		}))
		srv.Listener = dup
		srv.Start()
		resp, err := http.Get("http://" + ln.Addr().String())
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, "copy "+strconv.Itoa(i), string(body))
		srv.Close() // closes dup
	}
	// The stack's socket is still bound: nothing else can take its port.
	_, err = net.Listen("tcp", ln.Addr().String())
	require.Error(t, err)
}
