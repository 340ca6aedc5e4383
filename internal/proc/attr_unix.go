//go:build unix && (!linux || mcptape_portable)

package proc

import "syscall"

// sysProcAttr puts the child in a process group of its own. These systems
// have no parent-death signal (the mcptape_portable tag forces this
// version on Linux): a child whose mcptape died learns it from the end of
// its stdin.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
