//go:build linux && integration

package solanart

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const helperEnv = "SOLANART_TEST_HELPER"

// TestHelperProcess is not a real test: run by TestNodeDiesWithParent, it starts a
// runtime, prints node's pid and blocks until it is killed.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	r, err := Start(context.Background(), Options{SlotDuration: testSlotDuration})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("NODEPID", r.cmd.Process.Pid)
	select {}
}

func TestNodeDiesWithParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	pid := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "NODEPID "); ok {
			pid, err = strconv.Atoi(rest)
			require.NoError(t, err)
			break
		}
		require.False(t, strings.HasPrefix(sc.Text(), "ERR"), sc.Text())
	}
	require.NotZero(t, pid, "helper did not report node's pid")
	require.NoError(t, syscall.Kill(pid, 0), "node not running")

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.Eventually(t, func() bool {
		// Gone, or a zombie awaiting its new parent's reaping.
		if err := syscall.Kill(pid, 0); err != nil {
			return true
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(b), ") Z ")
	}, 10*time.Second, 20*time.Millisecond)
}
