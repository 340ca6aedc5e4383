//go:build linux && !mcptape_portable

package rawio

import (
	"io"
	"net"
	"os"
	"syscall"
)

// Conn is a TCP connection whose Read and Write are raw system calls (see
// the package doc). Everything else (Close, deadlines, addresses,
// CloseWrite, SyscallConn) is the wrapped *net.TCPConn's. Its errors look
// like net's: a *net.OpError around an *os.SyscallError, a deadline's or
// a closed connection's error, and io.EOF at the end of the stream. Like
// any net.Conn, it takes one Read and one Write at a time.
type Conn struct {
	*net.TCPConn
	rc syscall.RawConn
	r  *Reader

	// The pending write, kept here so that a write allocates nothing.
	wbuf  []byte
	wn    int
	werr  error
	write func(fd uintptr) bool // c.writeSome, bound once
}

// Wrap returns c as a Conn when it is a *net.TCPConn, and c itself
// otherwise.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	rs := &Conn{TCPConn: tc, rc: rc, r: NewReader(rc)}
	rs.write = rs.writeSome
	return rs
}

// SetIdle makes the next Read that would wait call f first (see
// Reader.SetIdle).
func (c *Conn) SetIdle(f func()) { c.r.SetIdle(f) }

// Read reads like a net.Conn.
func (c *Conn) Read(p []byte) (int, error) {
	n, err, waitErr := c.r.Read(p)
	switch {
	case waitErr != nil:
		return 0, c.opError("read", waitErr)
	case err == io.EOF:
		return 0, io.EOF
	case err != nil:
		return 0, c.opError("read", os.NewSyscallError("read", err))
	}
	return n, nil
}

// Write writes all of p like a net.Conn, waiting in the poller while the
// socket's buffer is full.
func (c *Conn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.wbuf, c.wn, c.werr = p, 0, nil
	waitErr := c.rc.Write(c.write)
	n, err := c.wn, c.werr
	c.wbuf, c.werr = nil, nil
	switch {
	case waitErr != nil:
		return n, c.opError("write", waitErr)
	case err != nil:
		return n, c.opError("write", os.NewSyscallError("write", err))
	}
	return n, nil
}

// writeSome writes as much of the pending write as the socket takes; it
// reports false when it must wait for room.
func (c *Conn) writeSome(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		n, err := Write(fd, c.wbuf[c.wn:])
		c.wn += n
		switch err {
		case nil, syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werr = err
			return true
		}
	}
	return true
}

// opError wraps err as net does; the RawConn's own wrapping of a wait's
// error (a deadline, a closed connection) is taken off first.
func (c *Conn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
