package transport

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/httphead"
)

// The HTTP/1.1 wire format of the lean path (see leanTransport): writing
// a request, reading the head of an answer.

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
// method or header field (net/http refuses the same; leanHost sends
// requests with an unusual Host or request line to net/http).
func checkRequest(req *http.Request) error {
	if method := requestMethod(req); !httphead.IsToken(method) {
		return fmt.Errorf("net/http: invalid method %q", method)
	}
	for k, vs := range req.Header {
		if !httphead.IsToken(k) {
			return fmt.Errorf("net/http: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httphead.ValidValue(v) {
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

// newChunkedReader reads the chunks of a chunked body from br.
func newChunkedReader(br *bufio.Reader) io.Reader { return httputil.NewChunkedReader(br) }
