//go:build linux

package solanart

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill node when the thread that started it exits, which
// covers the Go process dying without calling Close.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
