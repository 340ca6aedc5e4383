//go:build unix && !linux

package capture

import (
	"os"
	"syscall"
)

// sysRead and sysWrite are read(2) and write(2) on a non-blocking
// descriptor. n is 0 when err is not nil.
func sysRead(fd uintptr, p []byte) (int, error) {
	n, err := syscall.Read(int(fd), p)
	if err != nil {
		return 0, err
	}
	return n, nil
}

func sysWrite(fd uintptr, p []byte) (int, error) {
	n, err := syscall.Write(int(fd), p)
	if err != nil {
		return 0, err
	}
	return n, nil
}

// reopenPipe opens a pipe again where /proc/self/fd allows it; elsewhere
// it returns nil and the client's side is used as it is.
func reopenPipe(*os.File, int) *os.File { return nil }
