package capture

// Adversarial tests of the lean path (http_lean.go): each runs the same
// traffic through the lean path and through net/http (withNetHTTPOnly) and
// asks for the same, safe, outcome: no response desync, malformed heads
// refused before reaching the upstream, the same tape.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// bothPaths are the two ways Serve forwards: each review test runs on both.
var bothPaths = []struct {
	name string
	opts []HTTPOption
}{{"lean", nil}, {"net-http", []HTTPOption{withNetHTTPOnly()}}}

// rawUpstream is a hand-written HTTP/1.1 upstream: answer gives the raw
// bytes sent back for each request it reads, and may write more itself.
type rawUpstream struct {
	ln       net.Listener
	requests atomic.Int64
	ended    atomic.Int64 // connections whose requests ended (closed, or bytes that are none)
	wg       sync.WaitGroup
}

func startRawUpstream(t *testing.T, answer func(c net.Conn, r *http.Request) string) *rawUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startRawUpstreamOn(t, ln, answer)
}

// startRawUpstreamOn is startRawUpstream on ln (a TLS listener, say).
func startRawUpstreamOn(t *testing.T, ln net.Listener, answer func(c net.Conn, r *http.Request) string) *rawUpstream {
	return serveRaw(t, ln, func(c net.Conn, r *http.Request, _ []byte) string { return answer(c, r) })
}

// serveRaw serves ln by hand until the test ends: answer gets each request
// with its body read and gives the raw bytes sent back.
func serveRaw(tb testing.TB, ln net.Listener, answer func(c net.Conn, r *http.Request, body []byte) string) *rawUpstream {
	u := &rawUpstream{ln: ln}
	var mu sync.Mutex
	var conns []net.Conn
	u.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			u.wg.Go(func() {
				defer u.ended.Add(1)
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, err := io.ReadAll(r.Body)
					if err != nil {
						return
					}
					u.requests.Add(1)
					if _, err := io.WriteString(c, answer(c, r, body)); err != nil {
						return
					}
				}
			})
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		u.wg.Wait()
	})
	return u
}

func (u *rawUpstream) url() string { return "http://" + u.ln.Addr().String() }

// smuggled is a whole response hidden after another one.
const smuggled = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled"

// TestHTTPLeanReviewResponseDesync: bytes an upstream sends beyond the
// end of a response (a body longer than its Content-Length, a body after
// HEAD, 204 or 304, bytes on an idle connection) must never be taken for
// the response to the client's next request.
func TestHTTPLeanReviewResponseDesync(t *testing.T) {
	tests := []struct {
		name, method string
		first        string // raw answer to the first request
		late         bool   // the smuggled response comes on the idle connection
	}{
		{"body longer than content-length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + smuggled, false},
		{"head with a body", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + smuggled, false},
		{"204 with a body", "GET", "HTTP/1.1 204 No Content\r\n\r\nok" + smuggled, false},
		{"304 with a body", "GET", "HTTP/1.1 304 Not Modified\r\n\r\nok" + smuggled, false},
		{"unsolicited response on the idle connection", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true},
	}
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					wrote := make(chan struct{}) // closed once the late bytes are sent
					up := startRawUpstream(t, func(c net.Conn, r *http.Request) string {
						if r.URL.Path != "/first" {
							return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood"
						}
						if tt.late {
							go func() {
								defer close(wrote)
								time.Sleep(20 * time.Millisecond)
								io.WriteString(c, smuggled)
							}()
						}
						return tt.first
					})
					rig := startProxy(t, up.url(), path.opts...)
					c := dialRig(t, rig)
					br := bufio.NewReader(c)
					rawExchange(t, c, br, tt.method+" /first HTTP/1.1\r\nHost: h\r\n\r\n", tt.method)
					if tt.late {
						// The second request goes after the late bytes (a
						// fixed sleep was shorter than a loaded machine's
						// delay of their writer: they then came as the
						// answer to the second request)...
						select {
						case <-wrote:
						case <-time.After(10 * time.Second):
							t.Fatal("the late bytes were not sent")
						}
					}
					if path.name == "net-http" {
						// ... and once net/http's Transport has dropped
						// the connection: it notices bytes on an idle
						// connection from the connection's read
						// goroutine, not when it picks the connection
						// (see TestHTTPLeanBodylessHeaders).
						waitFor(t, func() bool { return up.ended.Load() == 1 })
					}
					resp, body := rawExchange(t, c, br, "GET /second HTTP/1.1\r\nHost: h\r\n\r\n", "GET")
					if resp.StatusCode != 200 || body != "good" {
						t.Errorf("second response: %d %q, want 200 \"good\"", resp.StatusCode, body)
					}
				})
			}
		})
	}
}

// TestHTTPLeanReviewMalformedHead: requests net/http's server refuses
// (no Host, a malformed Host, a head beyond its size limit, invalid
// framing) get the same status from the lean path, and never reach the
// upstream; the requests it accepts reach it on both paths.
func TestHTTPLeanReviewMalformedHead(t *testing.T) {
	big := strings.Repeat("a", http.DefaultMaxHeaderBytes+64<<10)
	tests := []struct {
		name, raw string
		status    int
		reaches   bool
	}{
		{"plain", "GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n", 200, true},
		{"bare LF line ends", "GET /mcp HTTP/1.1\nHost: h\n\n", 200, true},
		{"obs-fold", "GET /mcp HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n  2\r\n\r\n", 200, true},
		{"no host", "GET /mcp HTTP/1.1\r\nX-A: 1\r\n\r\n", 400, false},
		{"two hosts", "GET /mcp HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n", 400, false},
		{"host with a space", "GET /mcp HTTP/1.1\r\nHost: h i\r\n\r\n", 400, false},
		{"host with a slash", "GET /mcp HTTP/1.1\r\nHost: h/i\r\n\r\n", 400, false},
		{"space in a header name", "GET /mcp HTTP/1.1\r\nHost: h\r\nX A: 1\r\n\r\n", 400, false},
		{"space before the colon", "GET /mcp HTTP/1.1\r\nHost: h\r\nContent-Length : 2\r\n\r\n{}", 400, false},
		{"bare CR in a value", "GET /mcp HTTP/1.1\r\nHost: h\r\nX-A: 1\r2\r\n\r\n", 400, false},
		{"NUL in a value", "GET /mcp HTTP/1.1\r\nHost: h\r\nX-A: 1\x002\r\n\r\n", 400, false},
		{"two different content-lengths", "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x", 400, false},
		{"signed content-length", "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: +2\r\n\r\n{}", 400, false},
		{"unknown transfer-encoding", "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n{}", 501, false},
		{"oversized head", "GET /mcp HTTP/1.1\r\nHost: h\r\nX-Big: " + big + "\r\n\r\n", 431, false},
	}
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			up := startRawUpstream(t, func(net.Conn, *http.Request) string {
				return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
			})
			rig := startProxy(t, up.url(), path.opts...)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					before := up.requests.Load()
					c := dialRig(t, rig)
					c.SetDeadline(time.Now().Add(10 * time.Second))
					go io.WriteString(c, tt.raw) // a refused head is not read to its end
					resp, err := http.ReadResponse(bufio.NewReader(c), nil)
					if err != nil {
						t.Fatalf("no response: %v", err)
					}
					resp.Body.Close()
					reached := up.requests.Load() > before
					if resp.StatusCode != tt.status || reached != tt.reaches {
						t.Errorf("status %d, upstream reached %v; want %d, %v", resp.StatusCode, reached, tt.status, tt.reaches)
					}
				})
			}
		})
	}
}

// TestHTTPLeanReviewSameTape: the same traffic (JSON answers, an SSE
// answer to a POST, a GET stream, a DELETE, a pipelined pair) leaves the
// same messages in the tape on both paths.
func TestHTTPLeanReviewSameTape(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Mcp-Session-Id", "s1")
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/a\"}\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/b\"}\n\n")
		case strings.Contains(string(body), `"stream"`):
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
		case strings.Contains(string(body), `"id"`):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	post := func(body string) string {
		return fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	traffic := []struct{ raw, method string }{
		{post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`), "POST"},
		{post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "POST"},
		{post(`{"jsonrpc":"2.0","id":2,"method":"stream"}`), "POST"},
		{"GET /mcp HTTP/1.1\r\nHost: h\r\nAccept: text/event-stream\r\nMcp-Session-Id: s1\r\n\r\n", "GET"},
		{"DELETE /mcp HTTP/1.1\r\nHost: h\r\nMcp-Session-Id: s1\r\n\r\n", "DELETE"},
	}
	tapes := map[string][]string{}
	for _, path := range bothPaths {
		up := upstream(t, handler)
		rig := startProxy(t, up.URL, path.opts...)
		c, err := net.Dial("tcp", rig.addr)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for _, x := range traffic {
			rawExchange(t, c, br, x.raw, x.method)
		}
		// a pipelined pair: both requests in one write
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, post(`{"jsonrpc":"2.0","id":1,"method":"a"}`)+post(`{"jsonrpc":"2.0","method":"b"}`))
		for range 2 {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: pipelined: %v", path.name, err)
			}
			io.Copy(io.Discard, resp.Body)
		}
		c.Close()
		recs := waitEnded(t, rig, len(traffic)+2)
		rig.stop()
		for _, r := range recs {
			if r.Type == tape.TypeMessage {
				tapes[path.name] = append(tapes[path.name], fmt.Sprintf("%s %s %s ev=%s %s", r.Session, r.Dir, r.Stream, r.EventID, r.Frame))
			}
		}
	}
	lean, nh := strings.Join(tapes["lean"], "\n"), strings.Join(tapes["net-http"], "\n")
	if lean != nh || len(tapes["lean"]) < 10 {
		t.Errorf("messages recorded differ\nlean:\n%s\nnet/http:\n%s", lean, nh)
	}
}

// deadlineListener records the read deadlines set on the connections it
// accepts.
type deadlineListener struct {
	net.Listener
	conns chan *deadlineConn
}

func (l *deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	dc := &deadlineConn{Conn: c}
	select {
	case l.conns <- dc:
	default:
	}
	return dc, nil
}

type deadlineConn struct {
	net.Conn
	mu   sync.Mutex
	read time.Time
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.read = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.read = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *deadlineConn) readDeadline() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read
}

// TestHTTPLeanReviewHeadTimeout: a client that starts a request head and
// trickles the rest (slowloris) has the head timeout net/http gives it,
// not the much longer wait for an idle connection's next request.
func TestHTTPLeanReviewHeadTimeout(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			p, err := NewHTTPProxy(up.URL, &memTape{}, append([]HTTPOption{WithShutdownGrace(100 * time.Millisecond)}, path.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			dl := &deadlineListener{Listener: ln, conns: make(chan *deadlineConn, 1)}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Serve(ctx, dl) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Serve: %v", err)
				}
			}()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: h\r\n") // and nothing more
			dc := <-dl.conns
			// The deadline is set once the proxy has read the start of the
			// head, which a loaded machine may do later than any fixed
			// sleep: the test waits for it, up to a bound.
			headDeadline := func() (time.Time, bool) {
				d := dc.readDeadline()
				return d, !d.IsZero() && !d.After(time.Now().Add(leanHeaderTimeout))
			}
			d, ok := headDeadline()
			for end := time.Now().Add(10 * time.Second); !ok && time.Now().Before(end); d, ok = headDeadline() {
				time.Sleep(5 * time.Millisecond)
			}
			if !ok {
				t.Errorf("read deadline for the rest of the head: %v from now, want at most %v", time.Until(d).Round(time.Second), leanHeaderTimeout)
			}
		})
	}
}

// TestHTTPLeanReviewOversizedResponseHead: an upstream response head
// beyond net/http's limit for one (10 MiB) is refused with 502 rather
// than held in memory whole.
func TestHTTPLeanReviewOversizedResponseHead(t *testing.T) {
	big := strings.Repeat("a", 10<<20+1)
	up := startRawUpstream(t, func(net.Conn, *http.Request) string {
		return "HTTP/1.1 200 OK\r\nX-Big: " + big + "\r\nContent-Length: 2\r\n\r\nok"
	})
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			rig := startProxy(t, up.url(), path.opts...)
			c := dialRig(t, rig)
			resp, _ := rawExchange(t, c, bufio.NewReader(c), "GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n", "GET")
			if resp.StatusCode != http.StatusBadGateway {
				t.Errorf("status %d, want 502", resp.StatusCode)
			}
		})
	}
}

// exchangeGoroutines counts the goroutines serving client connections or
// exchanges (not the proxy's accept and watch loops).
func exchangeGoroutines() int {
	n := 0
	for _, g := range proxyGoroutines() {
		if strings.Contains(g, "capture.(*leanConn)") || strings.Contains(g, "capture.(*exchange)") ||
			strings.Contains(g, "httputil.(*ReverseProxy)") || strings.Contains(g, "capture.(*HTTPProxy).ServeHTTP") {
			n++
		}
	}
	return n
}

// TestHTTPLeanReviewResponseDesyncTLS: the same over a TLS upstream,
// where the bytes past a response may wait decrypted inside the TLS
// connection rather than on the socket.
func TestHTTPLeanReviewResponseDesyncTLS(t *testing.T) {
	certSrv := httptest.NewTLSServer(http.NotFoundHandler())
	certs := certSrv.TLS.Certificates
	certSrv.Close()
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			wrote := make(chan struct{}) // closed once the smuggled bytes are sent
			up := startRawUpstreamOn(t, tls.NewListener(ln, &tls.Config{Certificates: certs}), func(c net.Conn, r *http.Request) string {
				if r.URL.Path != "/first" {
					return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood"
				}
				// The smuggled response in a TLS record of its own, which
				// the proxy's TLS connection may read from the socket along
				// with the response's: it then waits there, encrypted.
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				io.WriteString(c, smuggled)
				close(wrote)
				return ""
			})
			rig := startProxy(t, "https://"+ln.Addr().String(), append([]HTTPOption{WithInsecureTLS(true)}, path.opts...)...)
			c := dialRig(t, rig)
			br := bufio.NewReader(c)
			rawExchange(t, c, br, "GET /first HTTP/1.1\r\nHost: h\r\n\r\n", "GET")
			// The second request goes after the smuggled bytes (a fixed
			// 60 ms sleep was shorter than a loaded machine's delay of
			// their writer: they then came as the answer to the second).
			select {
			case <-wrote:
			case <-time.After(10 * time.Second):
				t.Fatal("the smuggled bytes were not sent")
			}
			if path.name == "net-http" {
				// net/http drops the connection from its read goroutine
				// (see TestHTTPLeanBodylessHeaders)
				waitFor(t, func() bool { return up.ended.Load() == 1 })
			}
			resp, body := rawExchange(t, c, br, "GET /second HTTP/1.1\r\nHost: h\r\n\r\n", "GET")
			if resp.StatusCode != 200 || body != "good" {
				t.Errorf("second response: %d %q, want 200 \"good\"", resp.StatusCode, body)
			}
		})
	}
}

// FuzzHTTPLeanVsNetHTTP: any bytes a client sends get the same answers
// (status codes, in order) from the lean path as from net/http, and the
// upstream sees the same requests (method, target, Host, headers, body).
func FuzzHTTPLeanVsNetHTTP(f *testing.F) {
	for _, seed := range []string{
		"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nConnection: x-a, close\r\nX-A: 1\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
		"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length : 2\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
		"GET /mcp HTTP/1.1\nHost: h\nX-A: 1\n  2\n\n",
		"GET /mcp HTTP/1.1\r\nHost: h i\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nX-A: 1\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nHost:\r\n\r\n",
		"HEAD /mcp HTTP/1.1\r\nHost: h\r\nTe: trailers, gzip\r\nKeep-Alive: 1\r\n\r\n",
	} {
		f.Add(seed)
	}
	seen := make(chan string, 64)
	up := startRawUpstreamF(f, func(c net.Conn, r *http.Request, body []byte) string {
		h := r.Header.Clone()
		for _, k := range []string{"Accept-Encoding", "User-Agent"} {
			h.Del(k) // set by net/http's Transport when absent
		}
		var b strings.Builder
		h.Write(&b)
		seen <- fmt.Sprintf("%s %s host=%q %q body=%q", r.Method, r.RequestURI, r.Host, b.String(), body)
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	})
	rigs := map[string]*proxyRig{}
	for _, path := range bothPaths {
		rigs[path.name] = startProxyTape(f, up, discardTape{}, path.opts...)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := map[string]string{}
		for name, rig := range rigs {
			c, err := net.Dial("tcp", rig.addr)
			if err != nil {
				t.Fatal(err)
			}
			// No half-close (net/http takes it for a client gone): a last
			// request asks the proxy to close.
			c.SetDeadline(time.Now().Add(2 * time.Second))
			go io.WriteString(c, raw+"GET /end HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
			var out []string
			br := bufio.NewReader(c)
			for {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					break
				}
				out = append(out, resp.Status)
				if io.Copy(io.Discard, resp.Body); resp.Close {
					break
				}
			}
			c.Close()
			time.Sleep(5 * time.Millisecond)
		drain:
			for {
				select {
				case s := <-seen:
					out = append(out, "upstream: "+s)
				default:
					break drain
				}
			}
			got[name] = strings.Join(out, "\n")
		}
		if got["lean"] != got["net-http"] {
			t.Errorf("for %q\nlean:\n%s\nnet/http:\n%s", raw, got["lean"], got["net-http"])
		}
	})
}

// startRawUpstreamF is a raw upstream for a fuzz test: answer gets each
// request with its body read.
func startRawUpstreamF(f *testing.F, answer func(c net.Conn, r *http.Request, body []byte) string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	return serveRaw(f, ln, answer).url()
}
