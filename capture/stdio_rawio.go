//go:build unix && !mcptape_portable

package capture

import (
	"errors"
	"io"
	"os"

	"github.com/mcptape/mcptape/internal/rawio"
)

// Raw pipe I/O (package rawio).
//
// The proxy spends most of its time waiting for one of its pipes, and on
// a small machine the cost of a round trip is mostly the Go runtime waking
// up around each system call, not the copying. A read or write through
// *os.File enters the scheduler's syscall state (which wakes the runtime's
// monitor thread when it sleeps, and may hand the processor to another
// thread), and a Read on a blocking descriptor, such as a stdin that was
// inherited, keeps a thread and a processor parked in the kernel, which the
// monitor then polls and takes back. Here, instead, every pipe end is
// non-blocking and pollable: a pump reads and writes it with raw system
// calls, which return at once (EAGAIN when they would block), and waits for
// it in the runtime's poller. An idle proxy then has no thread in a system
// call and no monitor polling it, and a message wakes one thread, which
// reads, forwards and records it and goes back to the poller.
//
// The client's side (stdin and stdout) comes inherited and blocking. Its
// descriptors are shared with other processes, so they are not switched to
// non-blocking mode; when one is a pipe, it is opened again through
// /proc/self/fd, which gives this process a description of the same pipe
// of its own (see reopenPipe). Anything else is read and written as
// before, through its io.Reader and io.Writer.

// rawReader reads a pollable file with raw system calls, waiting in the
// poller while there is nothing to read (rawio.Reader). Read returns
// io.EOF at the end of the stream, os.ErrDeadlineExceeded after a read
// deadline and os.ErrClosed once the file is closed. It is for one
// goroutine; a Read allocates nothing.
type rawReader struct {
	r    *rawio.Reader
	name string // for errors
}

func newRawReader(f *os.File, name string) (*rawReader, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &rawReader{r: rawio.NewReader(rc), name: name}, nil
}

func (r *rawReader) Read(buf []byte) (int, error) {
	n, err, waitErr := r.r.Read(buf)
	switch {
	case waitErr != nil:
		if errors.Is(waitErr, os.ErrDeadlineExceeded) {
			return 0, waitErr
		}
		// On a pollable file the poller fails only on a deadline or a
		// file closed under the wait.
		return 0, os.ErrClosed
	case err == io.EOF:
		return 0, io.EOF
	case err != nil:
		return 0, &os.PathError{Op: "read", Path: r.name, Err: err}
	}
	return n, nil
}

// openClientPipes opens the client's stdin and stdout again where they are
// pipes, so that the pumps read and write them like the child's pipes (see
// stdio_rawio.go).
func (r *run) openClientPipes() {
	if f, ok := r.o.Stdin.(*os.File); ok {
		r.stdin = reopenPipe(f, os.O_RDONLY)
	}
	if f, ok := r.o.Stdout.(*os.File); ok {
		r.stdout = reopenPipe(f, os.O_WRONLY)
	}
}

// closeClientPipes closes what openClientPipes opened. A pump still
// reading stdin then ends (closing the caller's own stdin would not
// interrupt a Read).
func (r *run) closeClientPipes() {
	for _, f := range []*os.File{r.stdin, r.stdout} {
		if f != nil {
			f.Close()
		}
	}
}

// setRaw makes p read src and, when dst is not nil, write dst with raw
// system calls (see stdio_rawio.go); name names src in errors.
func setRaw(p *pump, src *os.File, name string, dst *os.File) {
	if src != nil {
		if r, err := newRawReader(src, name); err == nil {
			p.src = r
		}
	}
	if dst != nil {
		if rc, err := dst.SyscallConn(); err == nil {
			p.raw, p.rawName = rc, dst.Name()
		}
	}
}
