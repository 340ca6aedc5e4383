package capture

// The request head reader of the lean path (http_lean.go). A head that
// came whole in the connection's buffer (nearly all do) and keeps to a
// small, strict subset of HTTP/1.1 is parsed in place by parseFastHead,
// with one string for the head's bytes and substrings of it for the values:
// what net/http's http.ReadRequest would build, at a fraction of its
// allocations. Any other head, and any head the lean path would not serve,
// is left untouched for http.ReadRequest, which reads it as before (and
// whose verdict decides a hand-over to net/http). FuzzFastRequestHead
// holds the two parsers to the same result wherever the fast one accepts.
//
// The subset: a request line "token SP /origin-form SP HTTP/1.1" (not
// CONNECT); header lines "name:value" ending in CRLF, the name made of
// token bytes, the value of bytes net/http accepts (no control byte but
// HTAB); no obs-fold, no bare CR or LF; exactly one Host header, not
// empty; at most one Content-Length, of at most 15 plain digits; no
// Transfer-Encoding, Trailer, Expect or Upgrade header. The line and field
// primitives are internal/httphead's, shared with the response reader of
// internal/http1 (the upstream side); the choice of heads beyond them is
// made here. The tap that keeps a head's bytes for a hand-over, the head's
// deadline and the notes of malformed heads are here too.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/mcptape/mcptape/internal/httphead"
)

// readRequest reads the connection's next request head, its first bytes
// already buffered (cut: the wait for them was cut short), and sets up the
// reading of its body. A request the fast parser declines is read by
// http.ReadRequest, with the bytes of its head kept in lc.tap.buf (for a
// hand-over) and what is left of the time net/http allows for a head
// (ReadHeaderTimeout, see headDeadline) unless the head came whole. checked reports a request of the fast
// parser, found leanable already (see serve).
func (lc *leanConn) readRequest(cut bool) (req *http.Request, checked bool, err error) {
	if lc.lastPost {
		lc.skipBlankLines()
	}
	if !cut {
		if req, n := parseFastInto(peekBuffered(lc.br), &lc.head); req != nil && fastLeanable(req) {
			lc.br.Discard(n)
			lc.tap.buf = lc.tap.buf[:0]
			if req.ContentLength > 0 {
				lc.reqBody = fixedBody{r: lc.br, n: req.ContentLength}
				req.Body = &lc.reqBody
			}
			lc.lastPost = req.Method == http.MethodPost
			return req, true, nil
		}
	}
	lc.tap.buf = append(lc.tap.buf[:0], peekBuffered(lc.br)...)
	deadline := cut || !bytes.Contains(lc.tap.buf, headEnd)
	if deadline {
		lc.c.SetReadDeadline(lc.headDeadline())
	}
	lc.tap.on, lc.tap.err = true, nil
	req, err = http.ReadRequest(lc.br)
	lc.tap.on = false
	if err != nil && lc.tap.err != nil {
		err = lc.tap.err // the cause, rather than the cut line it left
	}
	if deadline {
		lc.c.SetReadDeadline(time.Time{})
	}
	lc.lastPost = err == nil && req.Method == http.MethodPost
	return req, false, err
}

// skipBlankLines drops up to four CR or LF bytes before a request, as
// net/http's server does after a POST (the tolerance of RFC 9112 2.2 for
// clients that end a body with a CRLF it does not count): like it, it
// looks at four bytes, waiting for them (within the time allowed for a
// head) unless a byte of the request is there already.
func (lc *leanConn) skipBlankLines() {
	b := peekBuffered(lc.br)
	if len(b) < 4 && leadingCRLF(b) == len(b) {
		lc.c.SetReadDeadline(lc.headDeadline())
		b, _ = lc.br.Peek(4) // an error comes again from the head's read
		lc.c.SetReadDeadline(time.Time{})
	}
	lc.br.Discard(leadingCRLF(b[:min(len(b), 4)]))
}

// leadingCRLF counts the CR and LF bytes b starts with.
func leadingCRLF(b []byte) int {
	n := 0
	for n < len(b) && (b[n] == '\r' || b[n] == '\n') {
		n++
	}
	return n
}

// fastLeanable is leanable for a request of parseFastHead, whose header
// names are tokens and whose values have no control bytes: of
// checkRequestHead, only the Host check is left.
func fastLeanable(r *http.Request) bool {
	return leanFraming(r) && validHost(r.Host)
}

// targetAsIs reports whether r's target, which the lean path forwards as
// received, is what net/http forwards: its URL's, re-encoded.
func targetAsIs(r *http.Request) bool {
	return plainPath(r.RequestURI) || r.URL.RequestURI() == r.RequestURI
}

// fixedBody reads a request body of n bytes from the client connection's
// reader, as http.ReadRequest's body does: short of n bytes, the end is
// io.ErrUnexpectedEOF.
type fixedBody struct {
	r *bufio.Reader
	n int64
}

func (b *fixedBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	if err == io.EOF && b.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// Close does nothing: the lean path reads a body whole, or ends the
// connection.
func (b *fixedBody) Close() error { return nil }

// maxFastContentLength bounds the digits of a Content-Length the fast
// parsers read (more go to net/http, which refuses an overflow).
const maxFastContentLength = 15

// fastLength parses a Content-Length of plain digits, not too many: the
// fast parsers of this package (unlike transport's, which takes any
// number httphead.ParseDigits takes) leave longer ones to net/http.
func fastLength(s string) (int64, bool) {
	if len(s) > maxFastContentLength {
		return 0, false
	}
	return httphead.ParseDigits(s)
}

// parseFastHead is parseFastInto with a new fastRequest.
func parseFastHead(b []byte) (*http.Request, int) {
	return parseFastInto(b, new(fastRequest))
}

// parseFastInto parses the request head at the start of b when it lies
// whole in b and keeps to the fast subset (see the top of this file). It
// returns the request as http.ReadRequest would, but for the body of a
// request with one (it follows the head in b's source): Body is nil then,
// for the caller to set; and the length of the head. It returns nil when
// it declines. The request is made in r: a new one, or one whose last
// request nothing holds any more (a lean connection's, whose requests
// come one after another), whose header map is cleared and used again.
func parseFastInto(b []byte, r *fastRequest) (*http.Request, int) {
	end := bytes.Index(b, headEnd)
	if end < 0 {
		return nil, 0
	}
	n := end + len(headEnd)
	// One string for the whole head; the request's strings are its parts.
	head := httphead.Text(r.head, b[:n])
	line, rest, ok := httphead.CutLine(head)
	if !ok {
		return nil, 0
	}
	method, target, proto, ok := httphead.SplitRequestLine(line)
	if !ok || proto != "HTTP/1.1" || method == http.MethodConnect || !httphead.IsToken(method) || target == "" || target[0] != '/' {
		return nil, 0
	}
	// The request, its URL and (mostly) its values in one allocation.
	h := r.header
	if len(h) > len(r.values) {
		h = nil // grown for a head of many fields: not kept
	}
	clear(h)
	*r = fastRequest{}
	if len(head) <= httphead.MaxKeptText {
		r.head = head
	}
	if plainPath(target) {
		r.url.Path = target // what url.ParseRequestURI makes of it
	} else {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return nil, 0
		}
		r.url = *u
	}
	lines := bytes.Count(b[len(line)+2:n], []byte{'\n'}) - 1 // header lines: what is left, less the blank one
	if h == nil {
		h = make(http.Header, lines)
	}
	r.header = h
	values := r.values[:] // each single value is a one-string slice of this
	if lines > len(values) {
		values = make([]string, lines)
	}
	var host, contentLength string
	hosts, lengths := 0, 0
	for {
		if line, rest, ok = httphead.CutLine(rest); !ok {
			return nil, 0
		}
		if line == "" {
			break
		}
		name, value, ok := httphead.SplitHeaderLine(line)
		if !ok {
			return nil, 0
		}
		switch name {
		case "Host":
			host, hosts = value, hosts+1
			continue // http.ReadRequest keeps it out of the header map
		case "Content-Length":
			contentLength, lengths = value, lengths+1
		case "Transfer-Encoding", "Trailer", "Expect", "Upgrade":
			return nil, 0
		}
		httphead.AddValue(h, name, value, &values)
	}
	if hosts != 1 || host == "" || lengths > 1 {
		return nil, 0
	}
	var length int64
	if lengths == 1 {
		if length, ok = fastLength(contentLength); !ok {
			return nil, 0
		}
	}
	httphead.PragmaCacheControl(h) // as http.ReadRequest
	req := &r.req
	*req = http.Request{
		Method: method, URL: &r.url, Proto: proto, ProtoMajor: 1, ProtoMinor: 1,
		Header: h, ContentLength: length, Host: r.url.Host, RequestURI: target,
		Close: httphead.HasToken(h["Connection"], "close"), // kept in Header, as http.ReadRequest does
	}
	if req.Host == "" {
		req.Host = host
	}
	if length == 0 {
		req.Body = http.NoBody
	}
	return req, n
}

// fastRequest holds what parseFastHead allocates for a request.
type fastRequest struct {
	req    http.Request
	url    url.URL
	header http.Header // req.Header, kept for the next request (see parseFastInto)
	head   string      // the head's text, given again for the same bytes (httphead.Text)
	values [12]string
}

// plainPath reports whether the request target t is a path of unreserved
// bytes and slashes only, with no escape, query or parameter: the URL of
// such a path is the path itself.
func plainPath(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// headTap passes the client's bytes to the request parser and, while on,
// keeps a copy: the bytes of a request head to hand over to net/http.
type headTap struct {
	c   net.Conn
	on  bool
	buf []byte
	// err is the connection's error met while on: bufio.Reader.ReadLine
	// hides it behind the part of a line read before it, which the
	// parser then finds malformed.
	err error
}

func (t *headTap) Read(p []byte) (int, error) {
	n, err := t.c.Read(p)
	if t.on {
		if err != nil {
			t.err = err
		}
		t.buf = append(t.buf, p[:n]...)
		if len(t.buf) > maxLeanHead && err == nil {
			err = errHeadTooLarge
		}
	}
	return n, err
}

// errHeadTooLarge ends the reading of a request head longer than
// maxLeanHead.
var errHeadTooLarge = errors.New("request head too large")

// headDeadline returns when the request head being read must be whole:
// the head timeout from its start, which is now unless a wait within
// the same head (or the first head's connection) set it before.
func (lc *leanConn) headDeadline() time.Time {
	if lc.headBy.IsZero() {
		lc.headBy = time.Now().Add(lc.p.o.headTimeout)
	}
	return lc.headBy
}

// noteMalformed records in the tape (an "error" event of no exchange) why
// the request head just read is refused: net/http, which it goes to,
// answers 400 (431 for a head too large). A head cut short by the client's
// going away or by its read timeout is not malformed; one the lean path
// does not serve but net/http accepts is not recorded either.
func (lc *leanConn) noteMalformed(req *http.Request, err error) {
	var why string
	var ne net.Error
	switch {
	case len(lc.tap.buf) > maxLeanHead && err != nil: // err may be a parser's on the cut head
		why = fmt.Sprintf("request head over %d bytes", http.DefaultMaxHeaderBytes)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne):
		return
	case err != nil:
		why = faultOf(err)
	default:
		// (An empty Host is not noted: net/http refuses it when the
		// header is missing, serves it when it is there, empty.)
		if err = checkRequestHead(req); err == nil {
			return
		}
		why = err.Error()
	}
	lc.p.noteMalformed(lc.remote, why)
}
