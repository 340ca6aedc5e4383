//go:build !unix || mcptape_portable

package http1

import (
	"bufio"
	"errors"
	"net"
	"os"
	"time"
)

// PeekWait is how long the portable look at an idle connection waits for
// a byte (see IdlePeek): what a reused connection costs on systems
// without a non-blocking peek (Windows).
const PeekWait = time.Millisecond

// IdlePeek looks at an idle keep-alive connection. Where a socket cannot
// be peeked at without waiting (Windows; on Linux the mcptape_portable
// build tag forces this version), it reads one byte into the connection's
// buffered reader with a read deadline PeekWait away: the byte, if any,
// stays buffered for the next response, and a connection with nothing to
// read costs PeekWait. It is for the one goroutine that owns the
// connection, between exchanges (the look is not safe for concurrent use).
type IdlePeek struct {
	nc net.Conn
	br *bufio.Reader
}

// NewIdlePeek returns a look at nc, whose bytes br reads; a nil br means
// nothing can be looked at without consuming it: Quiet then reports true.
func NewIdlePeek(nc net.Conn, br *bufio.Reader) *IdlePeek {
	return &IdlePeek{nc: nc, br: br}
}

// Quiet reports whether the connection is open with nothing waiting to be
// read: fit for another request. A peer that closed it, or sent bytes
// nobody asked for (which would be read as the next answer), makes it
// unfit. Any read deadline set before is cleared.
func (p *IdlePeek) Quiet() bool {
	if p.br == nil {
		return true
	}
	if p.br.Buffered() > 0 {
		return false
	}
	if err := p.nc.SetReadDeadline(time.Now().Add(PeekWait)); err != nil {
		return false // closed
	}
	_, err := p.br.Peek(1)
	p.nc.SetReadDeadline(time.Time{})
	return errors.Is(err, os.ErrDeadlineExceeded)
}
