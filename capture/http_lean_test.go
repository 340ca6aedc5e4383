package capture

// Tests of the lean path: hand-over to net/http, pinned upstream
// connections, stale upstream connections, the watch of the client,
// interim responses.

import (
	"bufio"
	"context"
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

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// rawExchange writes raw on c and reads the response (after any 100
// Continue) with br, leaving the connection open.
func rawExchange(t *testing.T, c net.Conn, br *bufio.Reader, raw, method string) (*http.Response, string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	for err == nil && resp.StatusCode == http.StatusContinue {
		resp, err = http.ReadResponse(br, &http.Request{Method: method})
	}
	if err != nil {
		t.Fatalf("response to %q: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body of the response to %q: %v", raw, err)
	}
	return resp, string(body)
}

// TestHTTPLeanHandOver: requests the lean path does not serve go, with
// their connection, to net/http, which answers them as before; the
// connection keeps working.
func TestHTTPLeanHandOver(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Proto, body)
	}))
	rig := startProxy(t, up.URL)
	tests := []struct {
		name, raw  string
		status     int
		body       string
		keepsGoing bool
	}{
		{"lean", "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", 200, "POST HTTP/1.1 {}", true},
		{"chunked body", "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 200, "POST HTTP/1.1 {}", true},
		{"expect", "POST /mcp HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}", 200, "POST HTTP/1.1 {}", true},
		{"http/1.0", "GET /mcp HTTP/1.0\r\nHost: h\r\n\r\n", 200, "GET HTTP/1.1 ", false},
		{"malformed", "GET /mcp HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\n", 400, "", false},
		{"body too large for lean", fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", maxLeanBody+1, strings.Repeat("a", maxLeanBody+1)), 200, "", true},
	}
	t.Cleanup(func() {
		rig.stop()
		checkNoProxyGoroutines(t)
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRig(t, rig)
			br := bufio.NewReader(c)
			method, _, _ := strings.Cut(tt.raw, " ")
			resp, body := rawExchange(t, c, br, tt.raw, method)
			if resp.StatusCode != tt.status || (tt.body != "" && body != tt.body) {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, body, tt.status, tt.body)
			}
			if !tt.keepsGoing {
				return
			}
			resp, body = rawExchange(t, c, br, "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nnext", "POST")
			if resp.StatusCode != 200 || body != "POST HTTP/1.1 next" {
				t.Errorf("next request on the connection: %d %q", resp.StatusCode, body)
			}
		})
	}
}

// TestHTTPLeanPinsConnections: each client connection has an upstream
// connection of its own, kept for its requests.
func TestHTTPLeanPinsConnections(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.RemoteAddr)
	}))
	rig := startProxy(t, up.URL)
	seen := map[string]string{} // upstream connection -> client
	clients := map[string]*http.Client{"a": freshClient(t), "b": freshClient(t)}
	for i := range 6 {
		name := []string{"a", "b"}[i%2]
		from := peertest.ReadAnswer(t, mustDo(t, clients[name], mustRequest(t, "GET", rig.url+"/mcp")))
		if prev, ok := seen[from]; ok && prev != name {
			t.Fatalf("upstream connection %s carried clients %s and %s", from, prev, name)
		}
		seen[from] = name
	}
	if len(seen) != 2 {
		t.Errorf("%d upstream connections for 2 client connections: %v", len(seen), seen)
	}
}

func mustRequest(t testing.TB, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestHTTPLeanStaleUpstream: an upstream that closes idle keep-alive
// connections (as Node's servers do after 5 s) does not make the next
// POST fail: the proxy notices the close before it sends.
func TestHTTPLeanStaleUpstream(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]bool{}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		io.ReadAll(r.Body)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	up.Config.IdleTimeout = 20 * time.Millisecond
	var closed atomic.Int64
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	rig := startProxy(t, up.URL)
	c := freshClient(t)
	for i := range 3 {
		resp := peertest.PostJSON(t, c, rig.url+"/mcp", "s", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if body := peertest.ReadAnswer(t, resp); resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %d after the upstream closed the idle connection: %d %q", i, resp.StatusCode, body)
		}
		// The next POST goes once the upstream has closed the idle
		// connection: a fixed sleep for it let a loaded machine's late
		// idle timer keep the connection for the next POST.
		waitFor(t, func() bool { return closed.Load() == int64(i+1) })
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 3 {
		t.Errorf("%d upstream connections, want 3 (one per idle period)", len(conns))
	}
}

// TestHTTPLeanRetry: a replayable request that finds its upstream
// connection closed (here by an upstream that closes after each answer
// without saying so) is sent again on a new one; other requests get a 502.
func TestHTTPLeanRetry(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		buf.Flush()
	}))
	rig := startProxy(t, up.URL)
	c := freshClient(t)
	for i := range 3 {
		resp := mustDo(t, c, mustRequest(t, "GET", rig.url+"/mcp"))
		if body := peertest.ReadAnswer(t, resp); resp.StatusCode != http.StatusOK || body != "ok" {
			t.Fatalf("GET %d: %d %q", i, resp.StatusCode, body)
		}
	}
	resp := peertest.PostJSON(t, c, rig.url+"/mcp", "s", "", `{}`)
	if body := peertest.ReadAnswer(t, resp); resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusOK {
		t.Errorf("POST on a closed connection: %d %q", resp.StatusCode, body)
	}
}

// TestHTTPLeanClientGoneWhileWaiting: a client that goes away while the
// upstream has not answered yet (a plain JSON exchange, no stream) cancels
// the upstream request.
func TestHTTPLeanClientGoneWhileWaiting(t *testing.T) {
	cancelled := make(chan time.Time, 1)
	arrived := make(chan struct{})
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		close(arrived)
		select {
		case <-r.Context().Done():
			cancelled <- time.Now()
		case <-time.After(10 * time.Second):
		}
	}))
	rig := startProxy(t, up.URL)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", rig.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call"}`))
	req.Header.Set("Mcp-Session-Id", "w")
	errc := make(chan error, 1)
	go func() {
		_, err := freshClient(t).Do(req)
		errc <- err
	}()
	// The request must be upstream before the client goes: a fixed sleep
	// for it failed when a loaded machine was slower than that.
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the upstream")
	}
	time.Sleep(3 * watchDelay) // the watch loop watches the client by now
	gone := time.Now()
	cancel()
	<-errc
	expectUpstreamCancel(t, cancelled, gone)
	recs := waitEnded(t, rig, 1)
	if end, _ := endEventOf(t, recs, 1); end.ClosedBy != ClosedByClient {
		t.Errorf("end event %+v: want closed by the client", end)
	}
	rig.stop()
	up.Close()
	checkNoProxyGoroutines(t)
}

// TestHTTPLeanInterim: informational responses are passed on before the
// final one.
func TestHTTPLeanInterim(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		io.WriteString(w, "final")
	}))
	rig := startProxy(t, up.URL)
	c := dialRig(t, rig)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n")
	br := bufio.NewReader(c)
	interim, err := http.ReadResponse(br, nil)
	if err != nil || interim.StatusCode != http.StatusEarlyHints || interim.Header.Get("Link") == "" {
		t.Fatalf("interim response %+v, %v", interim, err)
	}
	resp, body := rawExchange(t, c, br, "", "GET")
	if resp.StatusCode != http.StatusOK || body != "final" {
		t.Errorf("final response %d %q", resp.StatusCode, body)
	}
}

// TestHTTPHeldEvents: the events a GET stream sends before the one that
// settles its session are recorded in that session, and a stream that
// never settles it is grouped by connection after maxHeldEvents events.
func TestHTTPHeldEvents(t *testing.T) {
	for _, comments := range []int{3, maxHeldEvents + 6} {
		t.Run(fmt.Sprint(comments), func(t *testing.T) {
			up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for range comments {
					io.WriteString(w, ": keep-alive\n\n")
				}
				io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n\n")
			}))
			rig := startProxy(t, up.URL)
			peertest.ReadAnswer(t, mustDo(t, freshClient(t), mustRequest(t, "GET", rig.url+"/mcp")))
			recs := waitEnded(t, rig, 1)
			notes := 0
			for _, r := range recs {
				if r.Session == "" && r.Type != tape.TypeHeader {
					t.Errorf("record without a session: %+v", r)
				}
				if r.Event == EventSSE {
					notes++
				}
			}
			if notes != comments {
				t.Errorf("%d sse notes, want %d", notes, comments)
			}
		})
	}
}

// TestHTTPLeanHeldStream: bytes a legacy stream's endpoint rewriter holds
// beyond one copy buffer (a long comment came before the endpoint event)
// reach the client without waiting for more from the upstream.
func TestHTTPLeanHeldStream(t *testing.T) {
	long := strings.Repeat("x", 6000)
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, ": %s\n\nevent: endpoint\ndata: /message?sessionId=H1\n\n", long)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // and nothing more
	}))
	rig := startProxy(t, up.URL)
	resp := mustDo(t, freshClient(t), mustRequest(t, "GET", rig.url+"/sse"))
	defer resp.Body.Close()
	got := make(chan string, 1)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil || strings.HasPrefix(line, "data: ") {
				got <- line
				return
			}
		}
	}()
	select {
	case line := <-got:
		if line != "data: /message?sessionId=H1\n" {
			t.Fatalf("stream ended before the endpoint event: %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the endpoint event did not arrive")
	}
}

// FuzzHTTPLeanRequest: whatever a client sends, the proxy answers or
// closes the connection once the client has stopped sending; it never
// hangs or panics, and keeps serving others.
func FuzzHTTPLeanRequest(f *testing.F) {
	for _, seed := range []string{
		"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}",
		"GET /mcp?sessionId=1 HTTP/1.1\r\nHost: h\r\nConnection: X-A, close\r\nX-A: 1\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\n\r\nGET /mcp HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nshort",
		"POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
		"GET http://elsewhere/mcp HTTP/1.1\r\nHost: h\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
		"\r\n\r\n",
	} {
		f.Add(seed)
	}
	up := upstream(f, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\n")
	}))
	rig := startProxyTape(f, up.URL, discardTape{})
	f.Fuzz(func(t *testing.T, raw string) {
		c := dialRig(t, rig)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, raw)
		c.(*net.TCPConn).CloseWrite()
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("after %q: %v", raw, err)
		}
		resp, err := http.Get(rig.url + "/mcp")
		if err != nil {
			t.Fatalf("after %q the proxy no longer serves: %v", raw, err)
		}
		resp.Body.Close()
	})
}
