//go:build !mcptape_portable

package capture

import (
	"os"
	"strconv"
	"syscall"
)

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
