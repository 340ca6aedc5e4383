//go:build unix

package transport

import (
	"net"
	"syscall"
)

// connPeek looks at an idle connection without waiting: one non-blocking
// MSG_PEEK receive, with nothing allocated per look.
type connPeek struct {
	rc  syscall.RawConn // nil: cannot look
	fn  func(fd uintptr) bool
	buf [1]byte
	err error
}

func newConnPeek(nc net.Conn) *connPeek {
	p := &connPeek{}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			p.rc = rc
		}
	}
	p.fn = func(fd uintptr) bool {
		_, _, p.err = syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait
	}
	return p
}

// peerClosed reports whether the peer of an idle connection has closed it
// (or sent bytes nobody asked for).
func (p *connPeek) peerClosed() bool {
	if p.rc == nil {
		return false
	}
	if err := p.rc.Read(p.fn); err != nil {
		return true
	}
	// EAGAIN: open with nothing to read; no error: end of stream, or data
	return p.err != syscall.EAGAIN && p.err != syscall.EWOULDBLOCK
}
