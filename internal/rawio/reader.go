//go:build unix

package rawio

import (
	"io"
	"syscall"
)

// Reader reads a pollable descriptor with Read, waiting in the poller
// while there is nothing to read. It is for one goroutine at a time; its
// state is kept in the struct, so that a read allocates nothing.
type Reader struct {
	rc  syscall.RawConn
	buf []byte
	n   int
	err error
	try func(fd uintptr) bool // r.read, bound once
}

// NewReader returns a Reader of the descriptor behind rc (from a
// SyscallConn method).
func NewReader(rc syscall.RawConn) *Reader {
	r := &Reader{rc: rc}
	r.try = r.read
	return r
}

// read is one attempt; it reports false when the read would block.
func (r *Reader) read(fd uintptr) bool {
	for {
		r.n, r.err = Read(fd, r.buf)
		if r.err != syscall.EINTR {
			return r.err != syscall.EAGAIN
		}
	}
}

// Read reads into p. err is io.EOF at the end of the stream, or the
// read's syscall.Errno; waitErr is the error the poller gave instead (a
// deadline passed, the descriptor was closed), as the RawConn returned it.
// Callers turn them into the errors their kind of file gives.
func (r *Reader) Read(p []byte) (n int, err, waitErr error) {
	if len(p) == 0 {
		return 0, nil, nil
	}
	r.buf = p
	waitErr = r.rc.Read(r.try)
	r.buf = nil
	switch {
	case waitErr != nil:
		return 0, nil, waitErr
	case r.err != nil:
		return 0, r.err, nil
	case r.n == 0:
		return 0, io.EOF, nil
	}
	return r.n, nil, nil
}
