//go:build unix

package capture

import (
	"errors"
	"syscall"
)

// signalChild sends sig to the child's process group, falling back to the
// child alone; a child already gone is not an error.
func signalChild(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err == nil {
		return nil
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// osSignalNames are the names of the signals only Unix has.
var osSignalNames = map[syscall.Signal]string{syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2"}
