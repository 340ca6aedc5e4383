package capture

import (
	"errors"
	"os"
	"syscall"
)

// childAttr has nothing to add on Windows: the child is stopped by
// terminating it (signalChild).
func childAttr() *syscall.SysProcAttr { return nil }

// signalChild stops the child. Windows delivers no SIGTERM to another
// process, so every signal terminates it (TerminateProcess); its own
// children are not reached. A child already gone is not an error.
func signalChild(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil // gone
	}
	defer p.Release()
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// osSignalNames are the names of the signals only this system has: none.
var osSignalNames map[syscall.Signal]string
