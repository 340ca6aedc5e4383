package transport

import (
	"fmt"
	"io"
	"net/http"

	"github.com/mcptape/mcptape/internal/httphead"
)

// The HTTP/1.1 wire format of the lean path (see leanTransport): writing
// a request, reading the head of an answer.

// requestError is a request the lean path refuses before sending it (a bad
// header, a body shorter than announced): never retried.
type requestError struct{ err error }

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// readBody reads the body of req (from body, which it closes) into c's
// scratch buffer: a body shorter than its ContentLength is refused before
// a byte is sent, as net/http refuses it.
func (c *leanConn) readBody(req *http.Request, body io.ReadCloser) ([]byte, error) {
	if body == nil || body == http.NoBody {
		return nil, nil
	}
	defer body.Close()
	n := int(req.ContentLength)
	if cap(c.body) < n {
		c.body = make([]byte, n)
	}
	b := c.body[:n]
	m, err := io.ReadFull(body, b)
	if m != n {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("http: ContentLength=%d with Body length %d", n, m)
		}
		return nil, &requestError{err}
	}
	return b, nil
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
