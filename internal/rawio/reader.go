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
	rc      syscall.RawConn
	buf     []byte
	n       int
	err     error
	blocked bool                  // the last tryOnce found nothing to read
	idle    func()                // see SetIdle
	try     func(fd uintptr) bool // r.read, bound once
	once    func(fd uintptr) bool // r.tryOnce, bound once
}

// NewReader returns a Reader of the descriptor behind rc (from a
// SyscallConn method).
func NewReader(rc syscall.RawConn) *Reader {
	r := &Reader{rc: rc}
	r.try, r.once = r.read, r.tryOnce
	return r
}

// SetIdle makes the next Read that finds nothing to read call f before it
// waits, then try once more: work that must not delay what is already
// there (a recorder's, say) runs while the peer is silent. f runs once, on
// the reading goroutine; nil cancels it. A Read that finds bytes leaves it
// set for the next one.
func (r *Reader) SetIdle(f func()) { r.idle = f }

// tryOnce is one attempt that never waits: r.blocked says whether it
// would have.
func (r *Reader) tryOnce(fd uintptr) bool {
	r.blocked = !r.read(fd)
	return true
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
	if f := r.idle; f != nil {
		if waitErr = r.rc.Read(r.once); waitErr == nil && r.blocked {
			r.idle = nil
			f()
			waitErr = r.rc.Read(r.try)
		}
	} else {
		waitErr = r.rc.Read(r.try)
	}
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
