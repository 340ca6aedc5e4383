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
// chunked" (not both); no Trailer header.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"sync"
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
	line, rest, ok := cutLine(head)
	if !ok || len(line) < len("HTTP/1.1 200") || line[:9] != "HTTP/1.1 " || len(line) > 12 && line[12] != ' ' {
		return nil
	}
	code := 0
	for _, c := range []byte(line[9:12]) {
		if c < '0' || c > '9' {
			return nil
		}
		code = code*10 + int(c-'0')
	}
	if code < 200 || code > 599 || code == http.StatusNoContent || code == http.StatusNotModified {
		return nil
	}
	status := line[9:]
	for i := 12; i < len(line); i++ {
		if c := line[i]; c < ' ' && c != '\t' || c == 0x7f {
			return nil // a control byte in the reason: http.ReadResponse's to judge
		}
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
		if line, rest, ok = cutLine(rest); !ok {
			return nil
		}
		if line == "" {
			break
		}
		name, value, ok := splitHeaderLine(line)
		if !ok {
			return nil
		}
		switch name {
		case "Content-Length":
			contentLength, lengths = value, lengths+1
		case "Transfer-Encoding":
			if !asciiEqualFold(value, "chunked") {
				return nil
			}
			encodings++
			continue // http.ReadResponse takes it out of the header map
		case "Trailer":
			return nil
		}
		addValue(h, name, value, &values)
	}
	if lengths+encodings != 1 {
		return nil
	}
	resp := &r.resp
	*resp = http.Response{
		Status: status, StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Request: req,
	}
	if containsToken(h["Connection"], "close") {
		resp.Close = true
		delete(h, "Connection") // as http.ReadResponse does
	}
	if p := h["Pragma"]; len(p) > 0 && p[0] == "no-cache" && h["Cache-Control"] == nil {
		h["Cache-Control"] = []string{"no-cache"}
	}
	r.body = fastBody{r: br, closing: resp.Close}
	if encodings == 1 {
		resp.ContentLength = -1
		r.te[0] = "chunked"
		resp.TransferEncoding = r.te[:]
		r.body.src, r.body.resp = httputil.NewChunkedReader(br), resp
		resp.Body = &r.body
	} else {
		length, ok := parseDigits(contentLength)
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

// parseDigits parses a Content-Length of plain digits (not too many).
func parseDigits(s string) (int64, bool) {
	if s == "" || len(s) > maxFastContentLength {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
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

// errFastTrailerEOF is the error of a chunked body cut in its trailer.
var errFastTrailerEOF = errors.New("http: unexpected EOF reading trailer")

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
			if e := b.readTrailer(); e != nil {
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

// readTrailer reads the trailer of a chunked body into the response's.
func (b *fastBody) readTrailer() error {
	buf, err := b.r.Peek(2)
	if string(buf) == "\r\n" {
		b.r.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return errFastTrailerEOF
	}
	if err != nil {
		return err
	}
	// The trailer must end within the reader's buffer.
	if !trailerEndBuffered(b.r) {
		return errors.New("http: suspiciously long trailer after chunked body")
	}
	hdr, err := textproto.NewReader(b.r).ReadMIMEHeader()
	if err != nil {
		if err == io.EOF {
			return errFastTrailerEOF
		}
		return err
	}
	if b.resp.Trailer == nil {
		b.resp.Trailer = http.Header(hdr)
	} else {
		for k, vv := range hdr {
			b.resp.Trailer[k] = vv
		}
	}
	return nil
}

// trailerEndBuffered reports whether a double CRLF ends some first bytes
// of r, looking no further than r's buffer can hold.
func trailerEndBuffered(r *bufio.Reader) bool {
	for size := 4; ; size++ {
		buf, err := r.Peek(size)
		if bytes.HasSuffix(buf, headEnd) {
			return true
		}
		if err != nil {
			return false
		}
	}
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
