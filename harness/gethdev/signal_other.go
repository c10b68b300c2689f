//go:build !unix

package gethdev

import (
	"os"
	"syscall"
)

// signalGroup kills p: there are no process groups to signal here.
func signalGroup(p *os.Process, _ syscall.Signal) error { return p.Kill() }
