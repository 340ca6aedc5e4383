//go:build unix && !mcptape_portable

package http1

import (
	"bufio"
	"net"
	"syscall"
	"unsafe"
)

// IdlePeek looks at an idle keep-alive connection without waiting and
// without consuming anything: one non-blocking MSG_PEEK receive, with
// nothing allocated per look. It is for the one goroutine that owns the
// connection (the look is not safe for concurrent use).
type IdlePeek struct {
	rc  syscall.RawConn // nil: cannot look
	fn  func(fd uintptr) bool
	buf [1]byte
	err error
}

// NewIdlePeek returns a look at nc (a connection without a socket, such
// as a TLS wrapper, cannot be looked at: Quiet then reports true). br,
// the reader of nc's responses, is not needed on this system.
func NewIdlePeek(nc net.Conn, _ *bufio.Reader) *IdlePeek {
	p := &IdlePeek{}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			p.rc = rc
		}
	}
	p.fn = func(fd uintptr) bool {
		// A raw call: a non-blocking receive never blocks, and the
		// runtime need not be told (see package rawsock).
		_, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p.buf[0])), 1,
			syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		p.err = nil
		if e != 0 {
			p.err = e
		}
		return true // never wait
	}
	return p
}

// Quiet reports whether the connection is open with nothing waiting to be
// read: fit for another request. A peer that closed it, or sent bytes
// nobody asked for (which would be read as the next answer), makes it
// unfit.
func (p *IdlePeek) Quiet() bool {
	if p.rc == nil {
		return true
	}
	if err := p.rc.Read(p.fn); err != nil {
		return false
	}
	// EAGAIN: open with nothing to read; no error: end of stream, or data
	return p.err == syscall.EAGAIN || p.err == syscall.EWOULDBLOCK
}
