//go:build unix

package peertest

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether process pid exists and is not a zombie.
func Alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return syscall.Kill(pid, 0) == nil && runtime.GOOS != "linux"
	}
	// Field 3 (after "pid (comm)") is the state.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
