//go:build !unix

package transport

import (
	"os"
	"syscall"
)

// newProcessGroup returns nil: process groups are a Unix notion.
func newProcessGroup() *syscall.SysProcAttr { return nil }

// signalGroup sends sig to p alone (SIGKILL becomes Kill).
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}
