//go:build !linux

package solanart

import "os/exec"

// setProcAttr does nothing here; node still exits when its standard input closes.
func setProcAttr(*exec.Cmd) {}
