package capture

// The response head reader of the lean path's upstream side
// (http_upstream.go), on the model of the request one (http_head.go): a
// response head that came whole in the upstream connection's buffer and
// keeps to a strict subset is parsed in place by parseFastResponse into
// what http.ReadResponse would return, body framing included; any other is
// left untouched for http.ReadResponse. FuzzFastResponseHead holds the two
// to the same result, body, trailers and bytes consumed.
//
// The subset: a status line "HTTP/1.1 ddd[ reason]" with a status of 200
// to 599 but 204 and 304, to a request other than HEAD and CONNECT; header
// lines as for requests (http_head.go); a body framed by exactly one
// Content-Length of plain digits or exactly one "Transfer-Encoding:
// chunked" (not both); no Trailer header. The line, field and trailer
// primitives are internal/httphead's.

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"sync"

	"github.com/mcptape/mcptape/internal/httphead"
)

// fastResponse holds what parseFastResponse allocates for a response.
type fastResponse struct {
	resp   http.Response
	te     [1]string
	body   fastBody
	lim    io.LimitedReader
	values [12]string
}

// parseFastResponse parses the head of the response to req at the start
// of br's buffer when it lies whole there and keeps to the fast subset (see
// the top of this file), and consumes it. It returns the response as
// http.ReadResponse would, its body reading from br; nil when it declines,
// having consumed nothing.
func parseFastResponse(br *bufio.Reader, req *http.Request) *http.Response {
	if req.Method == http.MethodHead || req.Method == http.MethodConnect {
		return nil
	}
	b := peekBuffered(br)
	end := bytes.Index(b, headEnd)
	if end < 0 {
		return nil
	}
	n := end + len(headEnd)
	head := string(b[:n])
	line, rest, ok := httphead.CutLine(head)
	if !ok {
		return nil
	}
	// Of the status lines httphead takes, this reader takes HTTP/1.1 only,
	// codes with a body (1xx, 204 and 304 are net/http's to frame) and no
	// control byte in the reason (net/http takes one: left to it).
	minor, code, status, ok := httphead.ParseStatusLine(line)
	if !ok || minor != 1 || code < 200 || code > 599 || code == http.StatusNoContent ||
		code == http.StatusNotModified || !httphead.ValidValue(status[3:]) {
		return nil
	}
	r := new(fastResponse)
	lines := bytes.Count(b[len(line)+2:n], []byte{'\n'}) - 1
	h := make(http.Header, lines)
	values := r.values[:]
	if lines > len(values) {
		values = make([]string, lines)
	}
	var contentLength string
	lengths, encodings := 0, 0
	for {
		if line, rest, ok = httphead.CutLine(rest); !ok {
			return nil
		}
		if line == "" {
			break
		}
		name, value, ok := httphead.SplitHeaderLine(line)
		if !ok {
			return nil
		}
		switch name {
		case "Content-Length":
			contentLength, lengths = value, lengths+1
		case "Transfer-Encoding":
			if !httphead.EqualFold(value, "chunked") {
				return nil
			}
			encodings++
			continue // http.ReadResponse takes it out of the header map
		case "Trailer":
			return nil
		}
		httphead.AddValue(h, name, value, &values)
	}
	if lengths+encodings != 1 {
		return nil
	}
	resp := &r.resp
	*resp = http.Response{
		Status: status, StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Request: req,
	}
	resp.Close = httphead.CloseAfter(h, 1)
	httphead.PragmaCacheControl(h)
	r.body = fastBody{r: br, closing: resp.Close}
	if encodings == 1 {
		resp.ContentLength = -1
		r.te[0] = "chunked"
		resp.TransferEncoding = r.te[:]
		r.body.src, r.body.resp = httputil.NewChunkedReader(br), resp
		resp.Body = &r.body
	} else {
		length, ok := fastLength(contentLength)
		if !ok {
			return nil
		}
		resp.ContentLength = length
		resp.Body = http.NoBody
		if length > 0 {
			r.lim = io.LimitedReader{R: br, N: length}
			r.body.src, r.body.lim = &r.lim, &r.lim
			resp.Body = &r.body
		}
	}
	br.Discard(n)
	return resp
}

// fastBody is the body of a response parseFastResponse read: it reads as
// net/http's response body does (the same chunked decoder; the trailer
// merged into the response's; a Content-Length body's early end is
// io.ErrUnexpectedEOF, its last bytes come with io.EOF; Close reads what
// is left unless the connection closes after).
type fastBody struct {
	mu      sync.Mutex
	r       *bufio.Reader
	src     io.Reader
	lim     *io.LimitedReader // src, for a Content-Length body
	resp    *http.Response    // the response whose trailer is still to read (chunked)
	closing bool              // the connection closes after the response
	sawEOF  bool
	closed  bool
}

func (b *fastBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.readLocked(p)
}

func (b *fastBody) readLocked(p []byte) (int, error) {
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
func (b *fastBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	var err error
	if !b.sawEOF && (b.resp != nil || !b.closing) {
		_, err = io.Copy(io.Discard, lockedFastBody{b})
	}
	b.closed = true
	return err
}

// lockedFastBody reads a fastBody whose lock is held.
type lockedFastBody struct{ b *fastBody }

func (l lockedFastBody) Read(p []byte) (int, error) {
	if l.b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return l.b.readLocked(p)
}
