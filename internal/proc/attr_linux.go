//go:build linux && !mcptape_portable

package proc

import "syscall"

// sysProcAttr puts the child in a process group of its own and asks the
// kernel to send it SIGTERM if mcptape dies first, even by SIGKILL.
//
// The signal fires when the thread that started the child exits; Go keeps
// its threads for the life of the process unless a goroutine exits while
// locked to its thread, which nothing in mcptape does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
