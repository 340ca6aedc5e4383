package http1

import (
	"bufio"
	"io"
	"net/http"
	"sync"

	"github.com/mcptape/mcptape/internal/httphead"
)

// body is the body of a response the fast parser read: it reads as
// net/http's response body does (the same chunked decoder; the trailer
// merged into the response's; a Content-Length body's early end is
// io.ErrUnexpectedEOF, its last bytes come with io.EOF; Close reads what
// is left unless the connection closes after).
type body struct {
	mu      sync.Mutex
	r       *bufio.Reader
	src     io.Reader
	lim     *io.LimitedReader // src, for a Content-Length body
	resp    *http.Response    // the response whose trailer is still to read (chunked)
	closing bool              // the connection closes after the response
	sawEOF  bool
	closed  bool
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.readLocked(p)
}

func (b *body) readLocked(p []byte) (int, error) {
	if b.sawEOF {
		return 0, io.EOF
	}
	n, err := b.src.Read(p)
	if err == io.EOF {
		b.sawEOF = true
		if b.resp != nil {
			if e := httphead.ReadTrailer(b.r, b.resp); e != nil {
				err = e
				b.sawEOF, b.closed = false, true // no more reads of any kind
			}
			b.resp = nil
		} else if b.lim != nil && b.lim.N > 0 {
			err = io.ErrUnexpectedEOF
		}
	}
	if err == nil && n > 0 && b.lim != nil && b.lim.N == 0 {
		err, b.sawEOF = io.EOF, true
	}
	return n, err
}

// Close reads what is left of the body (the connection can carry another
// response then), unless the body ended or the connection closes after it.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	var err error
	if !b.sawEOF && (b.resp != nil || !b.closing) {
		_, err = io.Copy(io.Discard, lockedBody{b})
	}
	b.closed = true
	return err
}

// lockedBody reads a body whose lock is held.
type lockedBody struct{ b *body }

func (l lockedBody) Read(p []byte) (int, error) {
	if l.b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return l.b.readLocked(p)
}
