//go:build unix

package peertest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// signalGroup sends sig to the process group led by cmd's process.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
