//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package capture

import (
	"net"
	"syscall"
)

// connAlive reports whether the upstream has not closed c: a peek that
// neither waits nor consumes finds bytes waiting (alive) or nothing yet
// (alive), not an end of stream.
func connAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	alive := true
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = n > 0 || rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK || rerr == syscall.EINTR
		return true // never wait
	})
	return err == nil && alive
}
