//go:build unix

package proc

import (
	"errors"
	"syscall"
)

// sysChild has nothing to keep on Unix: the process group is the child's
// pid.
type sysChild struct{}

func attach(int) *sysChild { return &sysChild{} }

func (*sysChild) exited() {}

// signal sends sig to the process group pid, falling back to the process
// alone; a process already gone is not an error. Nothing is emulated.
func (*sysChild) signal(pid int, sig syscall.Signal) (emulated bool, err error) {
	if err := syscall.Kill(-pid, sig); err == nil {
		return false, nil
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, err
	}
	return false, nil
}

// killRest kills what is left of the process group pid once its leader
// exited (a grandchild holding the pipes open, say).
func (*sysChild) killRest(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }

// osSignalNames are the names of the signals only Unix has.
var osSignalNames = map[syscall.Signal]string{syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2"}
