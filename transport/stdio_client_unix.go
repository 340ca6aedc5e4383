//go:build unix

package transport

import (
	"errors"
	"os"
	"syscall"
)

// newProcessGroup returns the attributes that start a child as the leader
// of a new process group.
func newProcessGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group led by p.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
