// Package approvaltest serves what approvers use, for tests: an SSH agent holding their keys.
package approvaltest

import (
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh/agent"
)

// ServeAgent serves an in-process SSH agent holding keys on a unix socket, as an approver's
// ssh-agent would, and points SSH_AUTH_SOCK at it for the test.
func ServeAgent(t testing.TB, keys ...agent.AddedKey) {
	t.Helper()
	kr := agent.NewKeyring()
	for _, k := range keys {
		require.NoError(t, kr.Add(k))
	}
	// A short path: unix socket paths are limited to about 100 bytes, and t.TempDir's can be longer.
	dir, err := os.MkdirTemp("", "agent")
	require.NoError(t, err)
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); wg.Wait(); _ = os.RemoveAll(dir) })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); defer func() { _ = c.Close() }(); _ = agent.ServeAgent(kr, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
}
