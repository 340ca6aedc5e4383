//go:build linux && !mcptape_portable

package rawio

import (
	"syscall"
	"unsafe"
)

// Read is read(2) on a non-blocking descriptor, as a raw system call. n is
// 0 when err is not nil; err is a syscall.Errno (EAGAIN: nothing to read
// yet).
func Read(fd uintptr, p []byte) (n int, err error) {
	return rawRW(syscall.SYS_READ, fd, p)
}

// Write is write(2) on a non-blocking descriptor, as a raw system call. n
// is 0 when err is not nil; err is a syscall.Errno (EAGAIN: no room yet).
func Write(fd uintptr, p []byte) (n int, err error) {
	return rawRW(syscall.SYS_WRITE, fd, p)
}

func rawRW(trap, fd uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
