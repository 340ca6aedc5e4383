//go:build !mcptape_portable

package capture

import "syscall"

// childAttr puts the child in a process group of its own (see the package
// documentation) and asks the kernel to send it SIGTERM if mcptape dies
// first, even by SIGKILL, so that a server that ignores the end of its
// stdin is not left running alone.
//
// Pdeathsig fires when the thread that started the child exits; Go keeps
// its threads for the life of the process unless a goroutine exits while
// locked to its thread, which nothing in the proxy does.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
