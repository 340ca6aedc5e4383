//go:build unix && (!linux || mcptape_portable)

package rawio

import "syscall"

// Read is read(2) on a non-blocking descriptor. n is 0 when err is not
// nil; err is a syscall.Errno (EAGAIN: nothing to read yet).
func Read(fd uintptr, p []byte) (int, error) {
	n, err := syscall.Read(int(fd), p)
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Write is write(2) on a non-blocking descriptor. n is 0 when err is not
// nil; err is a syscall.Errno (EAGAIN: no room yet).
func Write(fd uintptr, p []byte) (int, error) {
	n, err := syscall.Write(int(fd), p)
	if err != nil {
		return 0, err
	}
	return n, nil
}
