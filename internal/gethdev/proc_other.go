//go:build !linux

package gethdev

import "os/exec"

// setProcAttr does nothing here: without Pdeathsig, a Go process that dies without Close leaves
// geth running.
func setProcAttr(*exec.Cmd) {}
