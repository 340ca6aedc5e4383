package transport

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcptape/mcptape/internal/httphead"
)

// Reading the head of an answer on the lean path (see leanTransport). A
// head in the common form (at most 100 lines, HTTP/1.0 or 1.1, a status
// of 100 or more, "Name: value" lines of valid bytes, at most one
// Content-Length and one Transfer-Encoding: chunked, no Pragma or Trailer
// field) is parsed here without net/http's allocations, with the line and
// field primitives of internal/httphead (shared with capture's readers);
// any other head is handed whole to http.ReadResponse, so that every head
// reads as net/http reads it.

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
// http.ReadResponse does; nil for any other head. Unlike capture's fast
// readers, it takes lines ending in a bare LF (readLine cut them so, and
// net/http takes them), HTTP/1.0, 1xx, 204 and 304 answers and control
// bytes in the reason (net/http takes them), and Content-Lengths of any
// size httphead.ParseDigits takes; it leaves Pragma to net/http.
func parseCommonHead(block string, lines int, req *http.Request) *http.Response {
	if lines > maxCommonLines {
		return nil // sized as net/http sizes it
	}
	status, rest, _ := strings.Cut(block, "\n")
	status = strings.TrimSuffix(status, "\r")
	minor, code, st, ok := httphead.ParseStatusLine(status)
	if !ok {
		return nil
	}
	h := make(http.Header, lines-1)
	vals := make([]string, lines-1) // a pool for httphead.AddValue
	for rest != "\n" && rest != "\r\n" && rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		k, v, ok := httphead.SplitHeaderLine(strings.TrimSuffix(line, "\r"))
		if !ok {
			return nil
		}
		httphead.AddValue(h, k, v, &vals)
	}
	_, pragma := h["Pragma"]
	_, trailer := h["Trailer"]
	te, chunked := h["Transfer-Encoding"]
	cl, hasLength := h["Content-Length"]
	if pragma || trailer || len(cl) > 1 || (chunked && (hasLength || minor == 0 || len(te) != 1 || !httphead.EqualFold(te[0], "chunked"))) {
		return nil
	}
	length := int64(-1)
	if hasLength {
		if length, ok = httphead.ParseDigits(cl[0]); !ok {
			return nil
		}
	}
	resp := &http.Response{
		Status: st, StatusCode: code, Proto: status[:len("HTTP/1.1")], ProtoMajor: 1, ProtoMinor: minor,
		Header: h, Request: req, ContentLength: length,
	}
	resp.Close = httphead.CloseAfter(h, minor)
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
		if terr := httphead.ReadTrailer(c.br, c.resp); terr != nil {
			return n, terr
		}
	}
	return n, err
}
