package capture

// Adversarial tests of the lean path, continued: clients and upstreams that
// die, close, stop reading or retry, and what reaches the upstream and the
// tape (helpers in http_lean_review_test.go).

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// TestHTTLeanReviewClientDies: a client that goes away at any step of an
// exchange leaves no goroutine and no upstream request behind.
func TestHTTPLeanReviewClientDies(t *testing.T) {
	upstreamEnded := make(chan string, 16)
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/slow":
			<-r.Context().Done()
		case "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			for {
				if _, err := io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"tick\"}\n\n"); err != nil {
					break
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Millisecond):
					continue
				}
				break
			}
		default:
			return
		}
		upstreamEnded <- r.URL.Path
	}))
	tests := []struct {
		name, raw string
		waitBytes bool   // wait for response bytes before leaving
		upstream  string // the upstream request that must end
	}{
		{"mid head", "GET /mcp HTTP/1.1\r\nHost: h\r\nX-A: ", false, ""},
		{"mid body", "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n{\"a", false, ""},
		{"waiting for the answer", "POST /slow HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", false, "/slow"},
		{"mid stream", "GET /stream HTTP/1.1\r\nHost: h\r\nAccept: text/event-stream\r\n\r\n", true, "/stream"},
		{"post stream", "POST /stream HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", true, "/stream"},
	}
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			rig := startProxy(t, up.URL, path.opts...)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					c, err := net.Dial("tcp", rig.addr)
					if err != nil {
						t.Fatal(err)
					}
					c.SetDeadline(time.Now().Add(10 * time.Second))
					io.WriteString(c, tt.raw)
					if tt.waitBytes {
						if _, err := c.Read(make([]byte, 1)); err != nil {
							t.Fatal(err)
						}
					} else {
						time.Sleep(50 * time.Millisecond) // the proxy is at the step
					}
					c.Close()
					if tt.upstream != "" {
						select {
						case got := <-upstreamEnded:
							if got != tt.upstream {
								t.Errorf("upstream request %s ended, want %s", got, tt.upstream)
							}
						case <-time.After(5 * time.Second):
							t.Fatalf("the upstream request %s goes on after its client left", tt.upstream)
						}
					}
					waitFor(t, func() bool { return exchangeGoroutines() == 0 })
				})
			}
			rig.stop()
			checkNoProxyGoroutines(t)
		})
	}
}

// TestHTTPLeanReviewUpstreamDies: an upstream that breaks off a body
// (after a Content-Length or chunks) makes the proxy break off the
// client's body too: the client never sees a short body as complete.
// The client's connection is closed, and a new one works.
func TestHTTPLeanReviewUpstreamDies(t *testing.T) {
	tests := []struct{ name, answer string }{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"},
		{"event stream", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ndata: \r\n"},
		{"head only", "HTTP/1.1 200 OK\r\nContent-Len"},
	}
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					up := startRawUpstream(t, func(c net.Conn, r *http.Request) string {
						if r.URL.Path == "/ok" {
							return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
						}
						io.WriteString(c, tt.answer)
						c.Close()
						return ""
					})
					rig := startProxy(t, up.url(), path.opts...)
					c := dialRig(t, rig)
					c.SetDeadline(time.Now().Add(10 * time.Second))
					io.WriteString(c, "GET /break HTTP/1.1\r\nHost: h\r\n\r\n")
					br := bufio.NewReader(c)
					resp, err := http.ReadResponse(br, nil)
					if err == nil {
						var body []byte
						body, err = io.ReadAll(resp.Body)
						if err == nil && resp.StatusCode == 200 {
							t.Fatalf("the client got a complete body %q from a broken one", body)
						}
					}
					if err != nil {
						if _, err := br.ReadByte(); err == nil {
							t.Errorf("the connection carries on after a broken body")
						}
					}
					c2 := dialRig(t, rig)
					if resp, body := rawExchange(t, c2, bufio.NewReader(c2), "GET /ok HTTP/1.1\r\nHost: h\r\n\r\n", "GET"); body != "ok" {
						t.Errorf("next connection: %d %q", resp.StatusCode, body)
					}
					rig.stop()
					checkNoProxyGoroutines(t)
				})
			}
		})
	}
}

// TestHTTPLeanReviewConnectionClose: "Connection: close" from the client
// ends its connection after the response (which says so); from the
// upstream, it ends only the upstream connection.
func TestHTTPLeanReviewConnectionClose(t *testing.T) {
	up := startRawUpstream(t, func(c net.Conn, r *http.Request) string {
		return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"
	})
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			rig := startProxy(t, up.url(), path.opts...)
			c := dialRig(t, rig)
			br := bufio.NewReader(c)
			for i := range 2 { // the upstream's close ends only its connection
				if resp, body := rawExchange(t, c, br, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n", "GET"); body != "ok" || resp.Close {
					t.Fatalf("request %d: %d %q close=%v", i, resp.StatusCode, body, resp.Close)
				}
			}
			resp, body := rawExchange(t, c, br, "GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", "GET")
			if body != "ok" || !resp.Close {
				t.Errorf("client's close: %d %q, close=%v", resp.StatusCode, body, resp.Close)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("after the client's close the connection stays open: %v", err)
			}
		})
	}
}

// TestHTTPLeanReviewBackPressure: a client that stops reading a fast
// event stream stops the proxy reading it from the upstream (bounded by
// socket buffers): nothing piles up in the proxy.
func TestHTTPLeanReviewBackPressure(t *testing.T) {
	var written atomic.Int64
	event := "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"p\":\"" + strings.Repeat("x", 64<<10) + "\"}}\n\n"
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for written.Load() < 256<<20 {
			n, err := io.WriteString(w, event)
			written.Add(int64(n))
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			written.Store(0)
			rig := startProxyTape(t, up.URL, discardTape{}, path.opts...)
			c := dialRig(t, rig)
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
			io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: h\r\nAccept: text/event-stream\r\n\r\n")
			c.Read(make([]byte, 1024)) // the head, then the client stops reading
			// The upstream must come to a stop (no growth for 200 ms) within
			// socket buffers' reach; it stops at 256 MiB otherwise.
			var last int64
			still := 0
			for deadline := time.Now().Add(10 * time.Second); still < 10 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				if n := written.Load(); n == last && n > 0 {
					still++
				} else {
					last, still = n, 0
				}
			}
			t.Logf("the upstream wrote %d KiB before it blocked", last>>10)
			if still < 10 || last > 64<<20 {
				t.Errorf("the upstream wrote %d MiB (still growing: %v) to a client that reads nothing", last>>20, still < 10)
			}
		})
	}
}

// TestHTTPLeanReviewRetry: a request that meets a reused upstream
// connection closed under it is sent again only when it is replayable
// and no byte of a response came.
func TestHTTPLeanReviewRetry(t *testing.T) {
	tests := []struct {
		name, raw, method string
		breakWith         string // what the upstream sends before closing, on the reused connection
		attempts          int64
		status            int
	}{
		{"get, nothing came", "GET /b HTTP/1.1\r\nHost: h\r\n\r\n", "GET", "", 2, 200},
		{"post, nothing came", "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", "POST", "", 1, 502},
		// as through ReverseProxy, whose request body cannot be read twice
		{"post with a body and an idempotency key", "POST /b HTTP/1.1\r\nHost: h\r\nIdempotency-Key: k\r\nContent-Length: 2\r\n\r\n{}", "POST", "", 1, 502},
		{"empty post with an idempotency key", "POST /b HTTP/1.1\r\nHost: h\r\nIdempotency-Key: k\r\nContent-Length: 0\r\n\r\n", "POST", "", 2, 200},
		{"get, part of a head came", "GET /b HTTP/1.1\r\nHost: h\r\n\r\n", "GET", "HTTP/1.1 200 OK\r\n", 1, 502},
	}
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					var attempts atomic.Int64
					up := startRawUpstream(t, func(c net.Conn, r *http.Request) string {
						if r.URL.Path == "/b" && attempts.Add(1) == 1 {
							io.WriteString(c, tt.breakWith)
							c.Close()
							return ""
						}
						return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
					})
					rig := startProxy(t, up.url(), path.opts...)
					c := dialRig(t, rig)
					br := bufio.NewReader(c)
					rawExchange(t, c, br, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n", "GET") // the upstream connection is reused next
					resp, _ := rawExchange(t, c, br, tt.raw, tt.method)
					if resp.StatusCode != tt.status || attempts.Load() != tt.attempts {
						t.Errorf("status %d after %d attempts, want %d after %d", resp.StatusCode, attempts.Load(), tt.status, tt.attempts)
					}
				})
			}
		})
	}
}

// TestHTTPLeanReviewPipelinedHandOver: requests pipelined in one write,
// the middle one for net/http (a chunked body), are all answered, in
// order, with their own bodies.
func TestHTTPLeanReviewPipelinedHandOver(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.URL.Path, body)
	}))
	raw := "POST /1 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}" +
		"POST /2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
		"GET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
	want := []string{"/1 {}", "/2 abc", "/3 "}
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			rig := startProxy(t, up.URL, path.opts...)
			c := dialRig(t, rig)
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, raw)
			br := bufio.NewReader(c)
			for i, w := range want {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("response %d: %v", i+1, err)
				}
				body, _ := io.ReadAll(resp.Body)
				if string(body) != w {
					t.Errorf("response %d: %q, want %q", i+1, body, w)
				}
			}
		})
	}
}

// TestHTTPLeanReviewHeaders: what reaches the upstream (Host, hop-by-hop
// headers both ways, Origin, forwarding headers) is the same on both
// paths, with and without WithPreserveHost.
func TestHTTPLeanReviewHeaders(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Resp-Hop, keep-alive")
		w.Header().Set("X-Resp-Hop", "1")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Proxy-Authenticate", "Basic")
		w.Header().Set("X-Kept", "1")
		h := r.Header.Clone()
		h.Del("Accept-Encoding") // the Transport adds it on the net/http path when absent
		fmt.Fprintf(w, "host=%s cl=%d te=%v\n", r.Host, r.ContentLength, r.TransferEncoding)
		h.Write(w)
	}))
	heads := []string{
		"Host: {proxy}\r\nOrigin: http://evil.example\r\nX-Forwarded-For: 10.0.0.1\r\nForwarded: for=1.2.3.4\r\n",
		"Host: other.example\r\n",
		"Host: localhost:{port}\r\n",
		"Host: {proxy}\r\nConnection: x-a, X-B ,keep-alive\r\nX-A: 1\r\nX-B: 2\r\nX-C: 3\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nTe: gzip, trailers\r\n",
		"Host: {proxy}\r\nTe: gzip\r\nAccept-Encoding: gzip\r\n",
	}
	results := map[string][]string{}
	for _, preserve := range []bool{false, true} {
		for _, path := range bothPaths {
			rig := startProxy(t, up.URL, append([]HTTPOption{WithPreserveHost(preserve)}, path.opts...)...)
			_, port, _ := net.SplitHostPort(rig.addr)
			c, err := net.Dial("tcp", rig.addr)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			for _, h := range heads {
				h = strings.NewReplacer("{proxy}", rig.addr, "{port}", port).Replace(h)
				raw := "POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 2\r\n\r\n{}"
				resp, body := rawExchange(t, c, br, raw, "POST")
				resp.Header.Del("Date")
				got := fmt.Sprintf("%d %v\n%s", resp.StatusCode, resp.Header, strings.ReplaceAll(body, rig.addr, "{proxy}"))
				got = strings.ReplaceAll(got, port, "{port}")
				results[path.name] = append(results[path.name], got)
			}
			c.Close()
			rig.stop()
		}
	}
	if len(results["lean"]) != 2*len(heads) || !strings.Contains(results["lean"][0], "X-Kept") {
		t.Fatalf("the test did not run: %q", results["lean"])
	}
	for i := range results["lean"] {
		if l, n := results["lean"][i], results["net-http"][i]; l != n {
			t.Errorf("request %d (%q):\nlean:\n%s\nnet/http:\n%s", i%len(heads), heads[i%len(heads)], l, n)
		}
	}
}

// TestHTTPLeanReviewMalformedRecorded: a malformed request gets a 4xx
// saying what is wrong, and the tape notes it (an "error" event naming the
// client and the fault, never the bytes, which may hold secrets), although
// it never reaches the upstream; on the net/http path too, where the note
// gives net/http's answer. A request that is fine notes nothing, nor does
// an upstream's own 400.
func TestHTTPLeanReviewMalformedRecorded(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refused" { // the upstream's own 400, as net/http words its refusals
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, "400 Bad Request")
		}
	}))
	tests := []struct {
		name, raw string
		status    int
		says      string // in the answer (net/http's words)
		note      string // in the tape (lean path; net/http's path notes says)
	}{
		{"space in a header name", "POST /mcp HTTP/1.1\r\nHost: h\r\nAuthorization : Bearer SECRET\r\nContent-Length: 2\r\n\r\n{}", 400, "invalid header name", "invalid header name"},
		{"bad request line", "GET /mcp?token=SECRET HTTP/1.1 x\r\nHost: h\r\n\r\n", 400, "Bad Request", "malformed HTTP version"},
		{"bad host", "GET /mcp HTTP/1.1\r\nHost: SECRET/x\r\n\r\n", 400, "alformed Host header", "malformed Host header"},
		{"head too large", "GET /mcp HTTP/1.1\r\nHost: h\r\nX-Secret: SECRET" + strings.Repeat("a", http.DefaultMaxHeaderBytes+64<<10) + "\r\n\r\n", 431, "Request Header Fields Too Large", "request head over"},
		{"fine", "GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n", 200, "", ""},
		{"upstream's 400", "GET /refused HTTP/1.1\r\nHost: h\r\n\r\n", 400, "400 Bad Request", ""},
	}
	for _, path := range bothPaths {
		rig := startProxy(t, up.URL, path.opts...)
		for _, tt := range tests {
			t.Run(path.name+"/"+tt.name, func(t *testing.T) {
				if path.name != "lean" && tt.note != "" {
					tt.note = tt.says
				}
				checkMalformedNoted(t, rig, tt.raw, tt.status, tt.says, tt.note)
			})
		}
	}
}

// checkMalformedNoted sends raw through rig and checks the answer's status
// and words, and the tape's note (none when note is "").
func checkMalformedNoted(t *testing.T, rig *proxyRig, raw string, status int, says, note string) {
	t.Helper()
	c := dialRig(t, rig)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, raw)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || !strings.Contains(string(body), says) {
		t.Errorf("answer %d %q, want %d saying %q", resp.StatusCode, body, status, says)
	}
	local := c.LocalAddr().String()
	noted := func() string {
		for _, r := range rig.tape.records() {
			if r.Type == tape.TypeEvent && r.Event == tape.EventError && strings.Contains(string(r.Data), local) {
				return string(r.Data)
			}
		}
		return ""
	}
	if note == "" {
		time.Sleep(50 * time.Millisecond)
		if n := noted(); n != "" {
			t.Errorf("a fine request noted as malformed: %s", n)
		}
		return
	}
	waitFor(t, func() bool { return noted() != "" })
	if n := noted(); strings.Contains(n, "SECRET") || !strings.Contains(n, note) {
		t.Errorf("tape note %s: want %q, without the request's bytes", n, note)
	}
}

// TestHTTPLeanReviewDeclaredBodyMemory: a client that announces a large
// body and sends none of it costs the proxy little memory: a few bytes
// of head must not reserve a megabyte each.
func TestHTTPLeanReviewDeclaredBodyMemory(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	const conns = 40
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			rig := startProxyTape(t, up.URL, discardTape{}, path.opts...)
			before := liveBytes()
			var cs []net.Conn
			defer func() {
				for _, c := range cs {
					c.Close()
				}
			}()
			for range conns {
				c, err := net.Dial("tcp", rig.addr)
				if err != nil {
					t.Fatal(err)
				}
				cs = append(cs, c)
				fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n{", maxLeanBody)
			}
			time.Sleep(200 * time.Millisecond) // every head is read
			if grew := liveBytes() - before; grew > conns*256<<10 {
				t.Errorf("%d connections that announced %d-byte bodies and sent 1 byte hold %d KiB", conns, maxLeanBody, grew>>10)
			}
		})
	}
}
