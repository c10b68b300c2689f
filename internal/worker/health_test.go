package worker

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHealthListenerSources: the health server serves on the listener it is handed, on a socket
// inherited by file descriptor (the same socket, so a supervisor's address holds across
// restarts), or on a socket of its own at --health-addr, port 0 included; a descriptor that is no
// listening socket is refused by name, and with none of the three there is no health server.
func TestHealthListenerSources(t *testing.T) {
	handed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer handed.Close()
	got, err := healthListener(Config{HealthListener: handed, HealthAddr: "127.0.0.1:1"})
	require.NoError(t, err)
	require.Same(t, handed, got)

	sock, err := handed.(*net.TCPListener).File()
	require.NoError(t, err)
	inherited, err := healthListener(Config{HealthFD: dupFD(t, sock), HealthAddr: "127.0.0.1:1"})
	require.NoError(t, sock.Close())
	require.NoError(t, err)
	defer inherited.Close()
	require.Equal(t, handed.Addr().String(), inherited.Addr().String())
	accepted := make(chan error, 1)
	go func() {
		c, err := inherited.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	c, err := net.Dial("tcp", handed.Addr().String())
	require.NoError(t, err)
	c.Close()
	require.NoError(t, <-accepted, "the inherited descriptor accepts on the supervisor's socket")

	own, err := healthListener(Config{HealthAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	defer own.Close()
	require.NotZero(t, own.Addr().(*net.TCPAddr).Port)

	plain, err := os.Create(filepath.Join(t.TempDir(), "not-a-socket"))
	require.NoError(t, err)
	_, err = healthListener(Config{HealthFD: dupFD(t, plain)})
	require.NoError(t, plain.Close())
	require.ErrorContains(t, err, "--health-fd")
	require.ErrorContains(t, err, "is not a listening socket")

	none, err := healthListener(Config{})
	require.NoError(t, err)
	require.Nil(t, none)
}

// dupFD is a new descriptor of what src holds, as a child process inherits one: healthListener
// takes it over (and closes it).
func dupFD(t *testing.T, f *os.File) int {
	t.Helper()
	fd, err := syscall.Dup(int(f.Fd()))
	require.NoError(t, err)
	return fd
}
