//go:build unix

package gethdev

import (
	"os"
	"syscall"
)

// signalGroup sends sig to the process group led by p (geth runs in its own group on Linux),
// falling back to p alone.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err == nil {
		return nil
	}
	return p.Signal(sig)
}
