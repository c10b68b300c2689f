//go:build !linux

package childproc

import "os/exec"

// DieWithParent does nothing here: without Pdeathsig, a Go process that dies without stopping
// its child leaves it running.
func DieWithParent(*exec.Cmd, bool) {}
