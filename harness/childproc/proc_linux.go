//go:build linux

package childproc

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes the kernel kill cmd's process when the thread that started it exits,
// which covers the Go process dying without stopping it; with ownGroup the child also gets a
// process group of its own, so that the launcher can signal the group.
func DieWithParent(cmd *exec.Cmd, ownGroup bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: ownGroup, Pdeathsig: syscall.SIGKILL}
}
