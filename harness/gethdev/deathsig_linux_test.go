//go:build linux && integration

package gethdev

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
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

const helperEnv = "GETHDEV_TEST_HELPER"

// TestHelperProcess is not a real test: run by TestGethDiesWithParent, it starts a node,
// prints geth's pid and blocks until it is killed.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	// A long block period keeps geth quiet once its start-up work is logged, so it does not die
	// from writing its log into the pipe the dead parent held: only Pdeathsig stops it within
	// the wait below.
	core, logs := observer.New(zap.DebugLevel)
	n, err := Start(context.Background(), Options{Period: time.Minute, Logger: zap.New(core)})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	// Start-up is over once geth has logged nothing for two seconds (its last start-up lines vary
	// with the version and the machine's speed).
	deadline := time.Now().Add(time.Minute)
	seen, since := -1, time.Now()
	for {
		if n := logs.Len(); n != seen {
			seen, since = n, time.Now()
		}
		if time.Since(since) >= 2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("ERR geth never went quiet after its start-up")
			os.Exit(1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Println("GETHPID", n.Pid())
	select {}
}

func TestGethDiesWithParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	pid := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "GETHPID "); ok {
			pid, err = strconv.Atoi(rest)
			require.NoError(t, err)
			break
		}
		require.False(t, strings.HasPrefix(sc.Text(), "ERR"), sc.Text())
	}
	require.NotZero(t, pid, "helper did not report geth's pid")
	require.NoError(t, syscall.Kill(pid, 0), "geth not running")
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	// The parent dies without Close.
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
