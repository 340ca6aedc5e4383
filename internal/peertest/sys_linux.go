package peertest

import "syscall"

// sysProcAttr puts a child in its own process group (so that the whole
// group can be killed) and has the kernel kill it if the test binary dies
// first (a timeout panic, say), so that no peer outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
