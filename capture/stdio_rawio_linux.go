package capture

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// sysRead and sysWrite are read(2) and write(2) on a non-blocking
// descriptor, as raw system calls: they never block, so they need not
// enter the scheduler's syscall state (see stdio_rawio.go). n is 0 when
// err is not nil.
func sysRead(fd uintptr, p []byte) (n int, err error) {
	return rawRW(syscall.SYS_READ, fd, p)
}

func sysWrite(fd uintptr, p []byte) (n int, err error) {
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

// reopenPipe returns a new, non-blocking and pollable description of the
// pipe that f is an end of (flag is os.O_RDONLY or os.O_WRONLY, matching
// that end), opened through /proc/self/fd so that f's own description,
// which other processes may share, keeps its blocking mode. It returns nil
// when f is not a pipe or cannot be opened again (no /proc, no reader left
// on the other end...): then f is used as it is.
func reopenPipe(f *os.File, flag int) *os.File {
	rc, err := f.SyscallConn() // not f.Fd(), which would make a pollable f blocking
	if err != nil {
		return nil
	}
	var g *os.File
	rc.Control(func(fd uintptr) { // f's descriptor stays open meanwhile
		var st, gst syscall.Stat_t
		if err := syscall.Fstat(int(fd), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			return
		}
		h, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(fd)), flag|syscall.O_NONBLOCK, 0)
		if err != nil {
			return
		}
		hc, err := h.SyscallConn()
		if err == nil {
			hc.Control(func(hfd uintptr) { err = syscall.Fstat(int(hfd), &gst) })
		}
		if err != nil || gst.Dev != st.Dev || gst.Ino != st.Ino {
			h.Close() // not the same pipe after all
			return
		}
		g = h
	})
	return g
}
