package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// Reading the head of an answer on the lean path (see leanTransport). A
// head in the common form (at most 100 lines, HTTP/1.0 or 1.1, a status
// of 100 or more,
// "Name: value" lines of valid bytes, at most one Content-Length and one
// Transfer-Encoding: chunked, no Pragma or Trailer field) is parsed here
// without net/http's allocations; any other head is handed whole to
// http.ReadResponse, so that every head reads as net/http reads it.

// maxResponseHead bounds the bytes of the heads of one answer, interim
// 1xx heads included (net/http's default MaxResponseHeaderBytes).
const maxResponseHead = 10 << 20

// maxCommonLines is the most lines of a head in the common form: the
// header is sized by them.
const maxCommonLines = 100

// maxKeptHead is the largest head buffer a connection keeps for the
// next answer.
const maxKeptHead = 64 << 10

// readLine appends the next line of the answer's head to c.hdr and
// returns its length without its line end ("\n" or "\r\n"). got reports that a
// byte was read.
func (c *leanConn) readLine(got *bool) (int, error) {
	start := len(c.hdr)
	for {
		frag, err := c.br.ReadSlice('\n')
		if len(frag) > 0 {
			*got = true
		}
		if len(c.hdr)+len(frag) > maxResponseHead {
			return 0, fmt.Errorf("server response headers exceeded %d bytes", maxResponseHead)
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
	n := len(c.hdr) - start - 1 // without '\n'
	if n > 0 && c.hdr[start+n-1] == '\r' {
		n--
	}
	return n, nil
}

// readResponse reads the head of the answer to req (skipping interim 1xx
// answers) and decides how its body is framed. got reports that some of
// an answer arrived.
func (c *leanConn) readResponse(req *http.Request) (resp *http.Response, got bool, err error) {
	c.hdr = c.hdr[:0]
	defer func() {
		if cap(c.hdr) > maxKeptHead {
			c.hdr = nil
		}
	}()
	for {
		start, lines := len(c.hdr), 0
		for {
			n, err := c.readLine(&got)
			if err != nil {
				return nil, got, err
			}
			if n == 0 {
				break
			}
			lines++
		}
		resp, err = parseHead(string(c.hdr[start:]), lines, req)
		if err != nil {
			return nil, true, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode < 100 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, true, nil
		}
	}
}

// parseHead parses a response head of lines lines, each ending in "\n"
// or "\r\n", the last one empty.
func parseHead(block string, lines int, req *http.Request) (*http.Response, error) {
	if resp := parseCommonHead(block, lines, req); resp != nil {
		return resp, nil
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(block)), req)
	if err != nil {
		return nil, err
	}
	resp.Body = nil // framed by the lean path, from the fields set here
	return resp, nil
}

// parseCommonHead parses a head in the common form (see above) as
// http.ReadResponse does; nil for any other head.
func parseCommonHead(block string, lines int, req *http.Request) *http.Response {
	if lines > maxCommonLines {
		return nil // sized as net/http sizes it
	}
	status, rest, _ := strings.Cut(block, "\n")
	status = strings.TrimSuffix(status, "\r")
	var minor int
	switch {
	case strings.HasPrefix(status, "HTTP/1.1 "):
		minor = 1
	case strings.HasPrefix(status, "HTTP/1.0 "):
	default:
		return nil
	}
	st := status[len("HTTP/1.1 "):]
	if len(st) < 3 || (len(st) > 3 && st[3] != ' ') || st[0] < '1' || st[0] > '9' ||
		st[1] < '0' || st[1] > '9' || st[2] < '0' || st[2] > '9' {
		return nil
	}
	code := int(st[0]-'0')*100 + int(st[1]-'0')*10 + int(st[2]-'0')
	h := make(http.Header, lines-1)
	vals := make([]string, lines-1)
	for i := 0; rest != "\n" && rest != "\r\n" && rest != ""; i++ {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		k, v, ok := strings.Cut(line, ":")
		if !ok || !validHeaderName(k) || !validHeaderValue(v) {
			return nil
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
	_, pragma := h["Pragma"]
	_, trailer := h["Trailer"]
	te, chunked := h["Transfer-Encoding"]
	cl, hasLength := h["Content-Length"]
	if pragma || trailer || len(cl) > 1 || (chunked && (hasLength || minor == 0 || len(te) != 1 || !asciiEqualFold(te[0], "chunked"))) {
		return nil
	}
	length := int64(-1)
	if hasLength {
		n, err := strconv.ParseUint(cl[0], 10, 63)
		if err != nil {
			return nil
		}
		length = int64(n)
	}
	resp := &http.Response{
		Status: st, StatusCode: code, Proto: status[:len("HTTP/1.1")], ProtoMajor: 1, ProtoMinor: minor,
		Header: h, Request: req, ContentLength: length,
	}
	resp.Close = closeAfter(h, minor)
	if chunked {
		delete(h, "Transfer-Encoding")
		resp.TransferEncoding = []string{"chunked"}
	}
	noBody := code < 200 || code == http.StatusNoContent || code == http.StatusNotModified
	switch {
	case req.Method == http.MethodHead: // the length of a GET
	case noBody:
		resp.ContentLength = 0
	case !chunked && !hasLength:
		resp.Close = true // read until the server closes
	}
	return resp
}

// closeAfter reports whether the connection closes after an answer with
// header h (HTTP/1.minor), dropping a Connection: close field of an
// HTTP/1.1 answer as net/http does.
func closeAfter(h http.Header, minor int) bool {
	conn := h["Connection"]
	hasClose := hasToken(conn, "close")
	if minor == 0 {
		return hasClose || !hasToken(conn, "keep-alive")
	}
	if hasClose {
		delete(h, "Connection")
	}
	return hasClose
}

// hasToken reports whether the comma-separated values hold token (ASCII
// case-insensitive).
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for tok := range strings.SplitSeq(v, ",") {
			if asciiEqualFold(strings.Trim(tok, " \t"), token) {
				return true
			}
		}
	}
	return false
}

// asciiEqualFold reports whether s and t are equal ignoring ASCII case.
func asciiEqualFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// chunkedBody reads a chunked body, then its trailer section into the
// answer's Trailer (as net/http does).
type chunkedBody struct {
	br   *bufio.Reader
	r    io.Reader
	resp *http.Response
}

func (c *chunkedBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		if terr := readTrailer(c.br, c.resp); terr != nil {
			return n, terr
		}
	}
	return n, err
}

var crlf = []byte("\r\n")

// readTrailer reads the trailer section of a chunked body, which must
// fit in br's buffer, into resp.Trailer.
func readTrailer(br *bufio.Reader, resp *http.Response) error {
	buf, err := br.Peek(2)
	if bytes.Equal(buf, crlf) {
		br.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return errors.New("http: unexpected EOF reading trailer")
	}
	if err != nil {
		return err
	}
	for n := 4; ; n++ {
		buf, err := br.Peek(n)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			break
		}
		if err != nil {
			return errors.New("http: suspiciously long trailer after chunked body")
		}
	}
	hdr, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		if err == io.EOF {
			return errors.New("http: unexpected EOF reading trailer")
		}
		return err
	}
	if resp.Trailer == nil {
		resp.Trailer = http.Header(hdr)
	} else {
		maps.Copy(resp.Trailer, http.Header(hdr))
	}
	return nil
}
