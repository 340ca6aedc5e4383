package http1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// BufSize is the size of a connection's read buffer (as net/http's).
const BufSize = 4 << 10

// MaxResponseHead bounds the bytes of a response head, as net/http's
// Transport does by default: of each head when the interim (1xx) ones
// are handed to the caller, else of all the heads of one response.
const MaxResponseHead = 10 << 20

// ErrResponseHeadTooLarge fails a response head beyond MaxResponseHead.
var ErrResponseHeadTooLarge = fmt.Errorf("server response headers exceeded %d bytes", MaxResponseHead)

// aLongTimeAgo is a deadline in the past: it interrupts a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

// Conn is the client end of one HTTP/1.1 keep-alive connection, used by
// one goroutine at a time: it writes a request (WriteRequest), then reads
// its response (ReadResponse), whose body reads from BR.
type Conn struct {
	// NC is the connection requests are written to and responses read
	// from: plain, or TLS over Raw.
	NC net.Conn
	// Raw is the TCP connection under NC (NC itself when plain).
	Raw net.Conn
	// BR reads NC (through the head limit).
	BR *bufio.Reader
	// Reuse lets ReadResponse make each response in the memory of the
	// last one read with Reuse (its header map included), saving
	// allocations: set it only when nothing uses that response (head,
	// header map, body) any more once the next is asked for (see
	// KeepLast). It may change between responses: one read without it is
	// made in new memory.
	Reuse bool

	peek    *IdlePeek
	spare   *fastResponse // the memory of the last response, with Reuse
	lim     headLimit
	head    []byte  // scratch: the request head being written
	fields  []field // scratch: header fields, sorted by name
	written int64
}

// NewConn returns the HTTP/1.1 connection over nc, whose socket is raw.
func NewConn(nc, raw net.Conn) *Conn {
	c := &Conn{NC: nc, Raw: raw}
	c.lim.r = nc
	c.BR = bufio.NewReaderSize(&c.lim, BufSize)
	c.peek = NewIdlePeek(raw, c.BR)
	return c
}

// Close closes the connection.
func (c *Conn) Close() error { return c.NC.Close() }

// KeepLast gives the memory of the last response read with Reuse to its
// caller: the next response is made in new memory, so that the caller
// may go on using the last one meanwhile.
func (c *Conn) KeepLast() { c.spare = nil }

// Written returns how many bytes were written on the connection.
func (c *Conn) Written() int64 { return c.written }

// Quiet reports whether c, idle, may carry another request: the server
// has not closed it, and nothing waits to be read on it (bytes nobody
// asked for would be read as the next response; net/http drops such a
// connection too: "Unsolicited response received on idle HTTP channel").
func (c *Conn) Quiet() bool {
	if c.BR.Buffered() > 0 || !c.peek.Quiet() {
		return false
	}
	if c.NC == c.Raw {
		return true
	}
	// TLS: bytes read from the socket along with the last response may
	// wait in the TLS connection, decrypted or not. Look without waiting.
	c.NC.SetReadDeadline(aLongTimeAgo)
	_, err := c.BR.Peek(1)
	c.NC.SetReadDeadline(time.Time{})
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// headLimit is the reader under a connection's bufio.Reader: while on,
// it lets left more bytes through, then fails.
type headLimit struct {
	r    io.Reader
	on   bool
	left int
}

func (l *headLimit) Read(p []byte) (int, error) {
	if !l.on {
		return l.r.Read(p)
	}
	if l.left <= 0 {
		return 0, ErrResponseHeadTooLarge
	}
	if len(p) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= n
	return n, err
}

// NoResponseError is the error of ReadResponse when the connection
// failed or ended before any byte of a response came.
type NoResponseError struct{ Err error }

// Error returns the text of the connection's error.
func (e *NoResponseError) Error() string { return e.Err.Error() }

// Unwrap returns the connection's error.
func (e *NoResponseError) Unwrap() error { return e.Err }

// ReadResponse reads the response to req, as net/http reads it: a head
// the fast reader takes (response.go) without net/http's allocations, any
// other with http.ReadResponse. Interim (1xx) responses before it but 101
// go to interim, or are skipped when it is nil; a 101 is returned. The
// body of the response reads from BR; reading it to its end (or Close,
// which reads the rest unless the connection closes after) leaves BR at
// the next response.
func (c *Conn) ReadResponse(req *http.Request, interim func(*http.Response) error) (*http.Response, error) {
	c.lim.on, c.lim.left = true, MaxResponseHead
	defer func() { c.lim.on = false }()
	if _, err := c.BR.Peek(1); err != nil {
		return nil, &NoResponseError{err} // io.EOF when the server had closed
	}
	for {
		var into *fastResponse // nil: new memory
		if c.Reuse {
			if c.spare == nil {
				c.spare = new(fastResponse)
			}
			into = c.spare
		}
		resp := parseFastInto(c.BR, req, into)
		if resp == nil {
			var err error
			if resp, err = http.ReadResponse(c.BR, req); err != nil {
				return nil, err
			}
		}
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
		if interim != nil {
			if err := interim(resp); err != nil {
				return nil, err
			}
			c.lim.left = MaxResponseHead // the next head may have as much
		}
	}
}

// Retryable reports whether a request that failed with err on a reused
// connection may be sent again on a new one, by net/http's rules: nothing
// of it was written (nothingWritten), or no byte of a response came
// because the server had closed the connection, and the request may be
// sent twice (replayable: see Replayable).
func Retryable(err error, nothingWritten, replayable bool) bool {
	if nothingWritten {
		return true
	}
	var nr *NoResponseError
	return replayable && errors.As(err, &nr) && ConnGone(err)
}

// ConnGone reports whether err says the peer closed the connection.
func ConnGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Replayable reports whether a request with method and header may be
// sent twice (net/http's rule): an idempotent method, or an idempotency
// key.
func Replayable(method string, h http.Header) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return h["Idempotency-Key"] != nil || h["X-Idempotency-Key"] != nil
}
