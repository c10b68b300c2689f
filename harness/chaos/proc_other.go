//go:build !linux

package chaos

import "os/exec"

// setChildAttrs has nothing to add outside Linux.
func setChildAttrs(*exec.Cmd) {}
