//go:build unix && !linux

package peertest

import "syscall"

// sysProcAttr puts a child in its own process group, so that the whole
// group can be killed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
