package peertest

import (
	"os/exec"
	"syscall"
)

// sysProcAttr has nothing to add on Windows: there is no process group to
// signal, and a peer is stopped by terminating it (signalGroup).
func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup stops cmd's process. Windows delivers no SIGTERM to another
// process, so every signal terminates it (TerminateProcess); a peer's own
// children are not reached.
func signalGroup(cmd *exec.Cmd, _ syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
