package http1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// bufConn is a net.Conn whose writes go to a buffer.
type bufConn struct {
	net.Conn
	buf bytes.Buffer
}

func (c *bufConn) Write(p []byte) (int, error) { return c.buf.Write(p) }

// written returns what WriteRequest writes for r.
func written(t *testing.T, r *Request) string {
	t.Helper()
	nc := &bufConn{}
	c := &Conn{NC: nc}
	if err := c.WriteRequest(r); err != nil {
		t.Fatal(err)
	}
	if c.Written() != int64(nc.buf.Len()) {
		t.Errorf("Written %d, wrote %d", c.Written(), nc.buf.Len())
	}
	return nc.buf.String()
}

// TestWriteRequestAsNetHTTP: in Client mode, WriteRequest writes the
// bytes net/http's client writes for the same request.
func TestWriteRequestAsNetHTTP(t *testing.T) {
	big := strings.Repeat("x", maxInlineBody+1)
	tests := []struct {
		name, method, body string
		h                  http.Header
	}{
		{"post", "POST", `{"a":1}`, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"X-Multi": {"1", "2"}, "Mcp-Session-Id": {"abc"}, "User-Agent": {"probe/1"}}},
		{"post without a body", "POST", "", http.Header{"Accept": {" a "}}},
		{"get", "GET", "", http.Header{"Last-Event-Id": {"7"}, "Z": {"last"}}},
		{"delete", "DELETE", "", nil},
		{"no user agent", "GET", "", http.Header{"User-Agent": {""}}},
		{"framing fields ignored", "PUT", "ab", http.Header{"Content-Length": {"99"}, "Transfer-Encoding": {"chunked"}, "Trailer": {"X"}}},
		{"large body", "POST", big, http.Header{"Content-Type": {"text/plain"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, err := http.NewRequest(tt.method, "http://h.example:8080/mcp?x=1&y=%20", body)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.h {
				req.Header[k] = v
			}
			var want bytes.Buffer
			if err := req.Write(&want); err != nil {
				t.Fatal(err)
			}
			got := written(t, &Request{Method: tt.method, Target: req.URL.RequestURI(), Host: req.Host,
				Header: req.Header, Mode: Client, Body: []byte(tt.body)})
			if got != want.String() {
				t.Errorf("ours\n%q\nnet/http\n%q", got, want.String())
			}
		})
	}
}

// TestWriteRequestForwarded: in Forwarded mode the hop-by-hop fields, and
// those the Connection field lists, are left out, "Te: trailers" is
// kept, the framing is the body's; the head reads back as sent.
func TestWriteRequestForwarded(t *testing.T) {
	h := http.Header{
		"Accept": {"application/json"}, "Connection": {"keep-alive, X-Hop"}, "X-Hop": {"1"},
		"Keep-Alive": {"timeout=5"}, "Proxy-Authorization": {"Basic x"}, "Te": {"trailers, deflate"},
		"Upgrade": {"h2c"}, "Transfer-Encoding": {"chunked"}, "Content-Length": {"7"}, "User-Agent": {"client/1"},
		"Mcp-Session-Id": {"S"},
	}
	raw := written(t, &Request{Method: "POST", Target: "/mcp?a=1", Host: "up:1", Header: h, Mode: Forwarded, Body: []byte("{}")})
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	body, _ := io.ReadAll(req.Body)
	want := http.Header{"Accept": {"application/json"}, "Te": {"trailers"}, "User-Agent": {"client/1"}, "Mcp-Session-Id": {"S"},
		"Content-Length": {"2"}}
	if req.Method != "POST" || req.RequestURI != "/mcp?a=1" || req.Host != "up:1" || req.ContentLength != 2 ||
		string(body) != "{}" || !reflect.DeepEqual(req.Header, want) {
		t.Errorf("forwarded as %q", raw)
	}
	// no Te at all without "trailers"; an empty body of a GET has no length
	raw = written(t, &Request{Method: "GET", Target: "/", Host: "up", Header: http.Header{"Te": {"gzip"}}, Mode: Forwarded})
	if raw != "GET / HTTP/1.1\r\nHost: up\r\n\r\n" {
		t.Errorf("forwarded as %q", raw)
	}
}

// TestRetryable: net/http's rules for sending a request again after its
// connection failed.
func TestRetryable(t *testing.T) {
	eof := &NoResponseError{io.EOF}
	reset := &NoResponseError{syscall.ECONNRESET}
	tests := []struct {
		name                       string
		err                        error
		nothingWritten, replayable bool
		want                       bool
	}{
		{"nothing written", syscall.EPIPE, true, false, true},
		{"closed before an answer, replayable", eof, false, true, true},
		{"reset before an answer, replayable", reset, false, true, true},
		{"closed before an answer, not replayable", eof, false, false, false},
		{"cut inside the head", io.ErrUnexpectedEOF, false, true, false},
		{"timed out before an answer", &NoResponseError{errors.New("i/o timeout")}, false, true, false},
		{"write failed midway", syscall.EPIPE, false, true, false},
	}
	for _, tt := range tests {
		if got := Retryable(tt.err, tt.nothingWritten, tt.replayable); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if !Replayable("GET", nil) || Replayable("POST", nil) || !Replayable("POST", http.Header{"Idempotency-Key": {"k"}}) {
		t.Error("Replayable")
	}
}
