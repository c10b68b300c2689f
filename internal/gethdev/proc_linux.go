//go:build linux

package gethdev

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts geth in its own process group (so Close can signal the group) and makes the
// kernel kill it when the thread that started it exits, which covers the Go process dying
// without calling Close.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
