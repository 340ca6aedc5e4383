//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package capture

import (
	"net"
	"syscall"
)

// connQuiet reports whether c is open with nothing waiting to be read: an
// idle keep-alive connection fit for reuse.
func connQuiet(c net.Conn) bool {
	alive, pending := peekConn(c)
	return alive && !pending
}

// peekConn looks at c without waiting or consuming: alive unless the peer
// closed it (or it failed), pending when bytes wait.
func peekConn(c net.Conn) (alive, pending bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true, false
	}
	alive = true
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		pending = n > 0
		alive = n > 0 || rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK || rerr == syscall.EINTR
		return true // never wait
	})
	return err == nil && alive, pending
}
