package http1

// The fast response head reader. A response head that came whole in the
// connection's buffer and keeps to a strict subset is parsed in place by
// parseFast into what http.ReadResponse would return, body framing
// included; any other is left untouched for http.ReadResponse. The
// differential tests (diff_test.go) hold the two to the same result,
// body, trailers and bytes consumed.
//
// The subset: a status line "HTTP/1.x ddd[ reason]" (x 0 or 1, a status
// of 100 to 999, no control byte in the reason), to a request other than
// CONNECT; header lines of internal/httphead's subset, each ending in
// CRLF; at most one Content-Length, of at most maxLength plain digits; at
// most one "Transfer-Encoding: chunked", only in an HTTP/1.1 response
// that may have a body and has no Content-Length; no Trailer header; and
// a body framed by one of them unless the response has none (HEAD, 1xx,
// 204, 304): a body that runs until the connection closes is
// http.ReadResponse's.

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"

	"github.com/mcptape/mcptape/internal/httphead"
)

// maxLength bounds the digits of a Content-Length the fast reader takes
// (more go to net/http, which refuses an overflow).
const maxLength = 15

// headEnd ends a head (with the end of its last line).
var headEnd = []byte("\r\n\r\n")

// fastResponse holds what parseFast allocates for a response.
type fastResponse struct {
	resp   http.Response
	te     [1]string
	body   body
	lim    io.LimitedReader
	header http.Header // resp.Header, kept for the next response (see Conn.Reuse)
	head   string      // the head's text, given again for the same bytes (httphead.Text)
	values [12]string
}

// buffered returns the bytes br holds, without reading.
func buffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return b
}

// parseFast parses the head of the response to req at the start of br's
// buffer when it lies whole there and keeps to the fast subset (see the
// top of this file), and consumes it. It returns the response as
// http.ReadResponse would, its body reading from br; nil when it
// declines, having consumed nothing.
func parseFast(br *bufio.Reader, req *http.Request) *http.Response {
	return parseFastInto(br, req, nil)
}

// parseFastInto is parseFast making the response in r: a new one when r
// is nil, else one whose last response nothing uses any more, whose
// header map is cleared and used again.
func parseFastInto(br *bufio.Reader, req *http.Request, r *fastResponse) *http.Response {
	if req.Method == http.MethodConnect {
		return nil
	}
	b := buffered(br)
	end := bytes.Index(b, headEnd)
	if end < 0 {
		return nil
	}
	n := end + len(headEnd)
	var last string
	if r != nil {
		last = r.head
	}
	head := httphead.Text(last, b[:n])
	line, rest, ok := httphead.CutLine(head)
	if !ok {
		return nil
	}
	// A control byte in the reason is net/http's to judge (it takes one).
	minor, code, status, ok := httphead.ParseStatusLine(line)
	if !ok || !httphead.ValidValue(status[3:]) {
		return nil
	}
	proto := line[:len("HTTP/1.1")]
	var h http.Header
	if r == nil {
		r = new(fastResponse)
	} else {
		if h = r.header; len(h) > len(r.values) {
			h = nil // grown for a head of many fields: not kept
		}
		clear(h)
		*r = fastResponse{}
	}
	if len(head) <= httphead.MaxKeptText {
		r.head = head
	}
	lines := bytes.Count(b[len(line)+2:n], []byte{'\n'}) - 1
	if h == nil {
		h = make(http.Header, lines)
	}
	r.header = h
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
	length := int64(-1)
	if lengths > 0 {
		if len(contentLength) > maxLength {
			return nil
		}
		if length, ok = httphead.ParseDigits(contentLength); !ok {
			return nil
		}
	}
	isHead := req.Method == http.MethodHead
	noBody := code < 200 || code == http.StatusNoContent || code == http.StatusNotModified
	switch {
	case lengths > 1 || encodings > 1:
		return nil // net/http removes duplicates, or refuses them
	case encodings == 1 && (lengths > 0 || minor == 0 || noBody || isHead):
		return nil
	case encodings == 0 && lengths == 0 && !noBody && !isHead:
		return nil // until the connection closes
	}
	resp := &r.resp
	*resp = http.Response{
		Status: status, StatusCode: code, Proto: proto, ProtoMajor: 1, ProtoMinor: minor,
		Header: h, Request: req, Body: http.NoBody,
	}
	resp.Close = httphead.CloseAfter(h, minor)
	httphead.PragmaCacheControl(h)
	r.body = body{r: br, closing: resp.Close}
	switch {
	case isHead:
		resp.ContentLength = length
	case noBody:
		resp.ContentLength = 0
	case encodings == 1:
		resp.ContentLength = -1
		r.te[0] = "chunked"
		resp.TransferEncoding = r.te[:]
		r.body.src, r.body.resp = httputil.NewChunkedReader(br), resp
		resp.Body = &r.body
	default:
		resp.ContentLength = length
		if length > 0 {
			r.lim = io.LimitedReader{R: br, N: length}
			r.body.src, r.body.lim = &r.lim, &r.lim
			resp.Body = &r.body
		}
	}
	br.Discard(n)
	return resp
}
