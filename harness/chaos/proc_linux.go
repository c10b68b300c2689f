//go:build linux

package chaos

import (
	"os/exec"
	"syscall"
)

// setChildAttrs makes the kernel kill the child when the thread that started it exits, so that a
// chaos run that dies leaves no Temporal server or worker behind.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
