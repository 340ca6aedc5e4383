//go:build unix && (!linux || mcptape_portable)

package capture

import "syscall"

// childAttr puts the child in a process group of its own (see the package
// documentation). Outside Linux there is no parent-death signal: a server
// whose proxy is killed learns it from the end of its stdin.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
