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
// empty; at most one Content-Length, of plain digits; no
// Transfer-Encoding, Trailer, Expect or Upgrade header.

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// readRequest reads the connection's next request head, its first bytes
// already buffered (cut: the wait for them was cut short), and sets up the
// reading of its body. A request the fast parser declines is read by
// http.ReadRequest, with the bytes of its head kept in lc.tap.buf (for a
// hand-over) and the time net/http allows for a head (ReadHeaderTimeout)
// unless the head came whole.
func (lc *leanConn) readRequest(cut bool) (*http.Request, error) {
	if lc.lastPost {
		lc.skipBlankLines()
	}
	if !cut {
		if req, n := parseFastHead(peekBuffered(lc.br)); req != nil && fastLeanable(req) {
			lc.br.Discard(n)
			lc.tap.buf = lc.tap.buf[:0]
			if req.ContentLength > 0 {
				lc.reqBody = fixedBody{r: lc.br, n: req.ContentLength}
				req.Body = &lc.reqBody
			}
			lc.lastPost = req.Method == http.MethodPost
			return req, nil
		}
	}
	lc.tap.buf = append(lc.tap.buf[:0], peekBuffered(lc.br)...)
	deadline := cut || !bytes.Contains(lc.tap.buf, headEnd)
	if deadline {
		lc.c.SetReadDeadline(time.Now().Add(leanHeaderTimeout))
	}
	lc.tap.on = true
	req, err := http.ReadRequest(lc.br)
	lc.tap.on = false
	if deadline {
		lc.c.SetReadDeadline(time.Time{})
	}
	lc.lastPost = err == nil && req.Method == http.MethodPost
	return req, err
}

// skipBlankLines drops up to four CR or LF bytes before a request, as
// net/http's server does after a POST (the tolerance of RFC 9112 2.2 for
// clients that end a body with a CRLF it does not count): like it, it
// looks at four bytes, waiting for them (within the time allowed for a
// head) unless a byte of the request is there already.
func (lc *leanConn) skipBlankLines() {
	b := peekBuffered(lc.br)
	if len(b) < 4 && leadingCRLF(b) == len(b) {
		lc.c.SetReadDeadline(time.Now().Add(leanHeaderTimeout))
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

// addValue adds value to h[name]; a name's first value gets a one-value
// slice cut from pool (the values of a head share one allocation) while
// pool lasts.
func addValue(h http.Header, name, value string, pool *[]string) {
	if vv := h[name]; vv != nil || len(*pool) == 0 {
		h[name] = append(vv, value)
		return
	}
	vv := (*pool)[:1:1]
	*pool = (*pool)[1:]
	vv[0] = value
	h[name] = vv
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
// parser reads (more go to http.ReadRequest, which refuses an overflow).
const maxFastContentLength = 15

// parseFastHead parses the request head at the start of b when it lies
// whole in b and keeps to the fast subset (see the top of this file). It
// returns the request as http.ReadRequest would, but for the body of a
// request with one (it follows the head in b's source): Body is nil then,
// for the caller to set; and the length of the head. It returns nil when
// it declines.
func parseFastHead(b []byte) (*http.Request, int) {
	end := bytes.Index(b, headEnd)
	if end < 0 {
		return nil, 0
	}
	n := end + len(headEnd)
	// One string for the whole head; the request's strings are its parts.
	head := string(b[:n])
	line, rest, ok := cutLine(head)
	if !ok {
		return nil, 0
	}
	method, target, proto, ok := splitRequestLine(line)
	if !ok || proto != "HTTP/1.1" || method == http.MethodConnect || !isToken(method) || target == "" || target[0] != '/' {
		return nil, 0
	}
	// The request, its URL and (mostly) its values in one allocation.
	r := new(fastRequest)
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
	h := make(http.Header, lines)
	values := r.values[:] // each single value is a one-string slice of this
	if lines > len(values) {
		values = make([]string, lines)
	}
	var host, contentLength string
	hosts, lengths := 0, 0
	for {
		if line, rest, ok = cutLine(rest); !ok {
			return nil, 0
		}
		if line == "" {
			break
		}
		name, value, ok := splitHeaderLine(line)
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
		addValue(h, name, value, &values)
	}
	if hosts != 1 || host == "" || lengths > 1 {
		return nil, 0
	}
	var length int64
	if lengths == 1 {
		if length, ok = parseDigits(contentLength); !ok {
			return nil, 0
		}
	}
	// As http.ReadRequest: "Pragma: no-cache" stands for Cache-Control.
	if p := h["Pragma"]; len(p) > 0 && p[0] == "no-cache" && h["Cache-Control"] == nil {
		h["Cache-Control"] = []string{"no-cache"}
	}
	req := &r.req
	*req = http.Request{
		Method: method, URL: &r.url, Proto: proto, ProtoMajor: 1, ProtoMinor: 1,
		Header: h, ContentLength: length, Host: r.url.Host, RequestURI: target,
		Close: containsToken(h["Connection"], "close"),
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

// cutLine cuts the first CRLF-ended line off s; ok is false when there is
// none or it ends in a bare LF. (A CR inside the line is refused later: no
// line of the fast subset may hold one.)
func cutLine(s string) (line, rest string, ok bool) {
	i := strings.IndexByte(s, '\n')
	if i < 1 || s[i-1] != '\r' {
		return "", "", false
	}
	return s[:i-1], s[i+1:], true
}

// splitRequestLine splits a request line at its first two spaces, as
// net/http does.
func splitRequestLine(line string) (method, target, proto string, ok bool) {
	i := indexByte(line, ' ')
	if i < 0 {
		return "", "", "", false
	}
	j := indexByte(line[i+1:], ' ')
	if j < 0 {
		return "", "", "", false
	}
	return line[:i], line[i+1 : i+1+j], line[i+2+j:], true
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// splitHeaderLine splits "name:value" into the canonical name and the
// value without the white space around it. ok is false for a name that is
// not a token directly followed by ':' (a line starting with white space,
// obs-fold, included) and for a value with a byte net/http refuses.
func splitHeaderLine(line string) (name, value string, ok bool) {
	i := 0
	upper, canonical := true, true
	for ; i < len(line) && tokenBytes[line[i]]; i++ {
		c := line[i]
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			canonical = false
		}
		upper = c == '-'
	}
	if i == 0 || i == len(line) || line[i] != ':' {
		return "", "", false
	}
	v := line[i+1:]
	for j := 0; j < len(v); j++ {
		if c := v[j]; c < ' ' && c != '\t' || c == 0x7f {
			return "", "", false
		}
	}
	name = line[:i]
	if !canonical {
		name = canonicalName(name)
	}
	return name, trimOWS(v), true
}

// canonicalName returns the canonical form of the header name s (made of
// token bytes, not canonical): a common name without allocating, a new
// string otherwise.
func canonicalName(s string) string {
	var buf [32]byte
	if len(s) > len(buf) {
		return textproto.CanonicalMIMEHeaderKey(s)
	}
	b := buf[:len(s)]
	upper := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
		upper = c == '-'
	}
	if name, ok := commonHeaderNames[string(b)]; ok {
		return name
	}
	return string(b)
}

// commonHeaderNames interns the header names clients commonly send in
// lower case (HTTP/2-minded and Node clients do).
var commonHeaderNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{
		"Accept", "Accept-Encoding", "Accept-Language", "Authorization", "Cache-Control", "Connection",
		"Content-Length", "Content-Type", "Cookie", "Host", "Keep-Alive", "Last-Event-Id", "Mcp-Protocol-Version",
		"Mcp-Session-Id", "Origin", "Pragma", "Referer", "Sec-Fetch-Mode", "Te", "Transfer-Encoding", "Trailer",
		"Upgrade", "Expect", "User-Agent", "X-Api-Key", "Traceparent", "Tracestate",
	} {
		m[n] = n
	}
	return m
}()

// tokenByte reports whether c may be part of a token (RFC 9110 tchar).
func tokenByte(c byte) bool { return tokenBytes[c] }

// tokenBytes tells the bytes of tokens.
var tokenBytes = func() (t [256]bool) {
	for c := 0; c < 0x80; c++ {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			indexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()

// isToken reports whether s is a non-empty token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !tokenByte(s[i]) {
			return false
		}
	}
	return s != ""
}

// trimOWS trims spaces and tabs off both ends of s.
func trimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// containsToken reports whether a comma-separated header holds token, as
// net/http judges it (ASCII case folding only).
func containsToken(values []string, token string) bool {
	for _, v := range values {
		for {
			elem, more, found := cutByte(v, ',')
			if asciiEqualFold(trimOWS(elem), token) {
				return true
			}
			if !found {
				break
			}
			v = more
		}
	}
	return false
}

func cutByte(s string, c byte) (before, after string, found bool) {
	if i := indexByte(s, c); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// asciiEqualFold reports whether a and b are equal under ASCII case
// folding (a non-ASCII byte equals only itself... and never a token's).
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 0x80 || y >= 0x80 {
			return false
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
