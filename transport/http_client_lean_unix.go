//go:build unix

package transport

import (
	"net"
	"syscall"
)

// peerClosed reports whether the peer of an idle connection has closed it
// (or sent bytes nobody asked for), without waiting: one non-blocking
// MSG_PEEK receive.
func peerClosed(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var buf [1]byte
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	})
	if err != nil {
		return true
	}
	// EAGAIN: open with nothing to read; no error: end of stream, or data
	return rerr != syscall.EAGAIN && rerr != syscall.EWOULDBLOCK
}
