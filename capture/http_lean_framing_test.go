package capture

// Tests of the response framing on the lean path's way back to the client:
// a response whose framing says its body is complete ends at once, and the
// head the client gets is framed as net/http's server would frame it.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/http1/http1test"
)

// TestHTTPLeanEmptyStreamEnds: an upstream answer with an event-stream
// Content-Type and "Content-Length: 0" (the Go SDK's answer when a stream
// is closed before its first event) is complete: the next request on the
// client's keep-alive connection is forwarded and answered, both
// exchanges are recorded with their "response" event, and their "end"
// says the server ended them. For POST, GET and DELETE, with 200, 202 and
// 404, on both paths.
func TestHTTPLeanEmptyStreamEnds(t *testing.T) {
	for _, path := range bothPaths {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			for _, code := range []int{200, 202, 404} {
				t.Run(fmt.Sprintf("%s/%s/%d", path.name, method, code), func(t *testing.T) {
					up := startRawUpstream(t, func(_ net.Conn, r *http.Request) string {
						if r.URL.Path == "/first" {
							return fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n\r\n",
								code, http.StatusText(code))
						}
						return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"
					})
					rig := startProxy(t, up.url(), path.opts...)
					c := dialRig(t, rig)
					br := bufio.NewReader(c)
					body := ""
					if method == http.MethodPost {
						body = "{}"
					}
					req := func(p string) string {
						return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", method, p, len(body), body)
					}
					resp, got := rawExchange(t, c, br, req("/first"), method)
					if resp.StatusCode != code || got != "" || resp.ContentLength != 0 {
						t.Fatalf("first response: %d, length %d, %q; want %d, empty", resp.StatusCode, resp.ContentLength, got, code)
					}
					resp, got = rawExchange(t, c, br, req("/second"), method)
					if resp.StatusCode != 200 || got != `{"ok":true}` {
						t.Fatalf("second response: %d %q", resp.StatusCode, got)
					}
					recs := waitEnded(t, rig, 2)
					if n := len(httpEvents(t, recs, "response")); n != 2 {
						t.Errorf("%d response events, want 2", n)
					}
					for x := uint64(1); x <= 2; x++ {
						end, ok := endEventOf(t, recs, x)
						if !ok {
							t.Fatalf("no end event of exchange %d", x)
						}
						if end.ClosedBy != ClosedByServer || end.Error != "" {
							t.Errorf("exchange %d ended by %q (%q), want %q", x, end.ClosedBy, end.Error, ClosedByServer)
						}
					}
				})
			}
		}
	}
}

// acceptCounter counts the connections its listener accepted.
type acceptCounter struct {
	net.Listener
	n atomic.Int64
}

func (l *acceptCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestHTTPLeanBodylessHeaders: a response that may have no body (204,
// 304) reaches the client without the Content-Length (nor, for 304, the
// Content-Type) the upstream put in it, as net/http's server sends it;
// body bytes the upstream sent after it never reach the client, and the
// upstream connection that carried them is not used again (net/http's
// Transport drops it too), while one that carried none is.
func TestHTTPLeanBodylessHeaders(t *testing.T) {
	tests := []struct {
		name, head string
		stray      string // bytes sent after the head
		dropped    []string
	}{
		{"204 with a length and a body", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\nX-A: 1\r\n", "hello", []string{"Content-Length"}},
		{"204 with a length", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nX-A: 1\r\n", "", []string{"Content-Length"}},
		{"304 with a length and a body", "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\nContent-Type: text/plain\r\nX-A: 1\r\n", "hello",
			[]string{"Content-Length", "Content-Type"}},
		{"304 with a length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\nContent-Type: text/plain\r\nX-A: 1\r\n", "",
			[]string{"Content-Length", "Content-Type"}},
	}
	for _, path := range bothPaths {
		for _, tt := range tests {
			t.Run(path.name+"/"+tt.name, func(t *testing.T) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				counted := &acceptCounter{Listener: ln}
				up := startRawUpstreamOn(t, counted, func(_ net.Conn, r *http.Request) string {
					if r.URL.Path == "/first" {
						return tt.head + "\r\n" + tt.stray
					}
					return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood"
				})
				rig := startProxy(t, up.url(), path.opts...)
				c := dialRig(t, rig)
				br := bufio.NewReader(c)
				resp, body := rawExchange(t, c, br, "POST /first HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", "POST")
				for _, name := range tt.dropped {
					if v := resp.Header[name]; v != nil {
						t.Errorf("%s: %s %q reached the client", resp.Status, name, v)
					}
				}
				if resp.Header.Get("X-A") != "1" || body != "" {
					t.Errorf("first response: %v %q", resp.Header, body)
				}
				if tt.stray != "" && path.name == "net-http" {
					// net/http's Transport puts the connection back in its
					// pool before its read goroutine finds the stray bytes
					// and closes it: a request quick enough gets them
					// (a 502 here, once in ~100 runs under -race). The
					// test waits for the close; the lean path refuses the
					// connection when it picks it.
					waitFor(t, func() bool { return up.ended.Load() == 1 })
				}
				resp, body = rawExchange(t, c, br, "GET /second HTTP/1.1\r\nHost: h\r\n\r\n", "GET")
				if resp.StatusCode != 200 || body != "good" {
					t.Errorf("second response: %d %q, want 200 \"good\"", resp.StatusCode, body)
				}
				want := int64(1)
				if tt.stray != "" {
					want = 2
				}
				if n := counted.n.Load(); n != want {
					t.Errorf("%d upstream connections, want %d", n, want)
				}
			})
		}
	}
}

// TestHTTPLeanAnswersAsNetHTTP: every answer of the HTTP/1.1 differential
// corpus (http1test.Answers), given by the upstream, reaches the client
// of the lean path as it reaches the client of the net/http path: the
// same status and body, or a broken response on both. (A 502's words on
// the error, and whether a response that breaks in its body had its head
// sent first, differ.)
func TestHTTPLeanAnswersAsNetHTTP(t *testing.T) {
	type outcome struct {
		Status int
		Body   string
		Failed bool
	}
	for _, a := range http1test.Answers {
		if a.Method == http.MethodConnect {
			continue // the proxies hand CONNECT to net/http
		}
		t.Run(a.Name, func(t *testing.T) {
			got := map[string]outcome{}
			for _, path := range bothPaths {
				up := startRawUpstream(t, func(c net.Conn, r *http.Request) string {
					io.WriteString(c, a.Raw)
					c.Close() // ends a body that runs until the close
					return ""
				})
				rig := startProxy(t, up.url(), path.opts...)
				c := dialRig(t, rig)
				c.SetDeadline(time.Now().Add(10 * time.Second))
				body := ""
				if a.Method == http.MethodPost {
					body = "{}"
				}
				fmt.Fprintf(c, "%s /first HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", a.Method, len(body), body)
				resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: a.Method})
				o := outcome{Failed: true} // a broken response, at its head or in its body
				if err == nil {
					if b, err := io.ReadAll(resp.Body); err == nil {
						o = outcome{Status: resp.StatusCode, Body: string(b)}
					}
					if resp.StatusCode == http.StatusBadGateway {
						o.Body = "" // the proxy's words on the upstream's error
					}
				}
				got[path.name] = o
			}
			if got["lean"] != got["net-http"] {
				t.Errorf("lean %+v, net/http %+v", got["lean"], got["net-http"])
			}
		})
	}
}
