package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"slices"
	"strconv"
	"strings"
)

// The HTTP/1.1 wire format of the lean path (see leanTransport): writing
// a request, reading the head of an answer.

// maxResponseHead bounds the bytes of a response's status line and
// header fields.
const maxResponseHead = 1 << 20

// requestError is a request the lean path refuses before sending it (a bad
// header, a body shorter than announced): never retried.
type requestError struct{ err error }

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// defaultUserAgent is the User-Agent net/http sends.
const defaultUserAgent = "Go-http-client/1.1"

// writeRequest writes req, with body (which it closes), as HTTP/1.1 in one
// buffered write. Header fields are written in sorted order, each value
// on its own line, as net/http does.
func (c *leanConn) writeRequest(req *http.Request, body io.ReadCloser) error {
	defer closeReqBody(body)
	method, host := requestMethod(req), requestHost(req)
	ua := defaultUserAgent
	keys := c.keys[:0]
	for k, vs := range req.Header {
		switch k {
		case "User-Agent":
			if len(vs) > 0 {
				ua = vs[0]
			}
			continue
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	c.keys = keys

	bw := c.bw
	bw.WriteString(method)
	bw.WriteByte(' ')
	bw.WriteString(req.URL.RequestURI())
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(host)
	bw.WriteString("\r\n")
	if ua != "" {
		writeField(bw, "User-Agent", ua)
	}
	hasBody := body != nil && body != http.NoBody
	if hasBody || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		var n [20]byte
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(n[:0], max(req.ContentLength, 0), 10))
		bw.WriteString("\r\n")
	}
	for _, k := range keys {
		for _, v := range req.Header[k] {
			writeField(bw, k, v)
		}
	}
	bw.WriteString("\r\n")
	if hasBody {
		n, err := io.CopyN(bw, body, req.ContentLength)
		if n != req.ContentLength {
			bw.Reset(c.nc)
			if err == nil || err == io.EOF {
				err = fmt.Errorf("http: ContentLength=%d with Body length %d", req.ContentLength, n)
			}
			return &requestError{err}
		}
	}
	return bw.Flush()
}

// checkRequest reports a request the lean path must not send: a bad
// method, Host or header field (net/http refuses the same).
func checkRequest(req *http.Request) error {
	if method := requestMethod(req); !validHeaderName(method) {
		return fmt.Errorf("net/http: invalid method %q", method)
	}
	if host := requestHost(req); !validHeaderValue(host) || strings.ContainsAny(host, " \t") {
		return fmt.Errorf("http: invalid Host header %q", host)
	}
	for k, vs := range req.Header {
		if !validHeaderName(k) {
			return fmt.Errorf("net/http: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return fmt.Errorf("net/http: invalid header field value for %q", k)
			}
		}
	}
	return nil
}

func requestMethod(req *http.Request) string {
	if req.Method == "" {
		return http.MethodGet
	}
	return req.Method
}

func requestHost(req *http.Request) string {
	if req.Host != "" {
		return req.Host
	}
	return req.URL.Host
}

func writeField(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(strings.Trim(v, " \t"))
	bw.WriteString("\r\n")
}

// validHeaderValue reports whether v may be a field value: no control
// characters but horizontal tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; (b < ' ' && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

// readLine appends the next line of the answer's head, without its line
// end, plus "\n", to c.hdr, and returns its length. got reports that a
// byte was read.
func (c *leanConn) readLine(got *bool) (int, error) {
	start := len(c.hdr)
	for {
		frag, err := c.br.ReadSlice('\n')
		if len(frag) > 0 {
			*got = true
		}
		if len(c.hdr)+len(frag) > maxResponseHead {
			return 0, fmt.Errorf("response head longer than %d bytes", maxResponseHead)
		}
		c.hdr = append(c.hdr, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && *got {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		break
	}
	line := c.hdr[start : len(c.hdr)-1] // without '\n'
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	c.hdr = append(c.hdr[:start+len(line)], '\n')
	return len(line), nil
}

// readResponse reads the head of the answer to req (skipping interim 1xx
// answers) and decides how its body is framed. got reports that some of
// an answer arrived.
func (c *leanConn) readResponse(req *http.Request) (resp *http.Response, got bool, err error) {
	for interim := 0; ; interim++ {
		c.hdr = c.hdr[:0]
		lines := 0
		for {
			n, err := c.readLine(&got)
			if err != nil {
				return nil, got, err
			}
			if n == 0 {
				c.hdr = c.hdr[:len(c.hdr)-1]
				if lines == 0 {
					continue // a stray empty line before the status line
				}
				break
			}
			lines++
		}
		resp, err = parseHead(string(c.hdr), lines, req)
		if err != nil {
			return nil, true, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, true, nil
		}
		if interim >= 8 {
			return nil, true, errors.New("too many 1xx answers")
		}
	}
}

// parseHead parses a response head of lines lines, each ending in "\n".
func parseHead(block string, lines int, req *http.Request) (*http.Response, error) {
	status, rest, _ := strings.Cut(block, "\n")
	proto, st, _ := strings.Cut(status, " ")
	major, minor, ok := http.ParseHTTPVersion(proto)
	st = strings.TrimLeft(st, " ")
	if !ok || major != 1 || len(st) < 3 || (len(st) > 3 && st[3] != ' ') {
		return nil, fmt.Errorf("malformed HTTP response %q", status)
	}
	code, err := strconv.Atoi(st[:3])
	if err != nil || code < 100 || st[0] == '+' || st[0] == '-' {
		return nil, fmt.Errorf("malformed HTTP status code %q", st[:3])
	}
	h := make(http.Header, lines-1)
	vals := make([]string, lines-1)
	for i := 0; rest != ""; i++ {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		k, v, ok := strings.Cut(line, ":")
		if !ok || !validHeaderName(k) {
			return nil, fmt.Errorf("malformed MIME header line: %q", oneLine([]byte(line), 100))
		}
		k = canonicalKey(k)
		v = strings.Trim(v, " \t")
		if old, ok := h[k]; ok {
			h[k] = append(old, v)
		} else {
			vals[i] = v
			h[k] = vals[i : i+1 : i+1]
		}
	}
	resp := &http.Response{
		Status: st, StatusCode: code, Proto: proto, ProtoMajor: major, ProtoMinor: minor,
		Header: h, Request: req, ContentLength: -1,
	}
	resp.Close = closeAfter(h, minor)
	if !bodyAllowed(req.Method, code) {
		if req.Method != http.MethodHead {
			resp.ContentLength = 0
		}
		return resp, nil
	}
	if te, ok := h["Transfer-Encoding"]; ok {
		if len(te) != 1 || !strings.EqualFold(te[0], "chunked") {
			return nil, fmt.Errorf("unsupported transfer encoding %q", te)
		}
		delete(h, "Transfer-Encoding")
		resp.TransferEncoding = []string{"chunked"}
		return resp, nil
	}
	if cl, ok := h["Content-Length"]; ok {
		n, err := strconv.ParseInt(cl[0], 10, 64)
		if err != nil || n < 0 || cl[0][0] == '+' {
			return nil, fmt.Errorf("bad Content-Length %q", cl[0])
		}
		for _, other := range cl[1:] {
			if other != cl[0] {
				return nil, fmt.Errorf("message cannot contain multiple Content-Length headers; got %q", cl)
			}
		}
		resp.ContentLength = n
	}
	return resp, nil
}

// closeAfter reports whether the connection closes after an answer with
// header h (HTTP/1.minor).
func closeAfter(h http.Header, minor int) bool {
	keepAlive := false
	for _, v := range h["Connection"] {
		for tok := range strings.SplitSeq(v, ",") {
			tok = strings.TrimSpace(tok)
			if strings.EqualFold(tok, "close") {
				return true
			}
			keepAlive = keepAlive || strings.EqualFold(tok, "keep-alive")
		}
	}
	return minor == 0 && !keepAlive
}

// canonicalKey returns the canonical form of a valid field name, without
// allocating when it is canonical already.
func canonicalKey(k string) string {
	upper := true
	for i := 0; i < len(k); i++ {
		b := k[i]
		if (upper && b >= 'a' && b <= 'z') || (!upper && b >= 'A' && b <= 'Z') {
			return http.CanonicalHeaderKey(k)
		}
		upper = b == '-'
	}
	return k
}

// newChunkedReader reads the chunks of a chunked body from br.
func newChunkedReader(br *bufio.Reader) io.Reader { return httputil.NewChunkedReader(br) }
