package capture

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The request framing of the proxy, held to net/http's. FuzzHTTPFraming
// sends one byte stream (several requests, valid or not) to a plain
// net/http server, the oracle, and through the proxy (each path) to an
// upstream of the same kind; the requests the upstream sees must be the
// ones the oracle sees: the same (method, target, body) in the same
// order, and nothing after a framing error.

// framingEnd ends every stream: a last request that asks for the
// connection's close, so that a stream whose requests all end is done
// when the server closes (unless a body swallowed it).
const framingEnd = "GET /end HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"

// discardLog silences the servers' complaints about the fuzzed bytes.
var discardLog = log.New(io.Discard, "", 0)

// framingLog is what a server saw: for each request, its method, target
// and body, or "broken" and its method and target when the body could not
// be read whole.
type framingLog struct {
	mu      sync.Mutex
	seen    []string
	running int // handlers running
	conns   map[net.Conn]http.ConnState
}

func newFramingLog() *framingLog { return &framingLog{conns: make(map[net.Conn]http.ConnState)} }

func (l *framingLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.running++
	l.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	path := r.URL.EscapedPath()
	if path == "" {
		// An absolute target with no path ("a:"): the proxy sends it
		// on as "/", as RFC 9112 (3.2.2) has it.
		path = "/"
	}
	target := path + "?" + r.URL.RawQuery
	entry := fmt.Sprintf("%s %s %q", r.Method, target, body)
	if err != nil {
		entry = "broken " + r.Method + " " + target
	}
	l.mu.Lock()
	l.seen = append(l.seen, entry)
	l.running--
	l.mu.Unlock()
	if err == nil {
		io.WriteString(w, "ok")
	}
}

// connState follows the server's connections.
func (l *framingLog) connState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s == http.StateClosed || s == http.StateHijacked {
		delete(l.conns, c)
		return
	}
	l.conns[c] = s
}

// reset forgets what was seen.
func (l *framingLog) reset() {
	l.mu.Lock()
	l.seen = nil
	l.mu.Unlock()
}

// snapshot returns what was seen, and the number of requests read whole.
func (l *framingLog) snapshot() ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	whole := 0
	for _, s := range l.seen {
		if !strings.HasPrefix(s, "broken ") {
			whole++
		}
	}
	return append([]string(nil), l.seen...), whole
}

// idle reports whether no handler runs.
func (l *framingLog) idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running == 0
}

// quiet reports whether no handler runs and no connection is reading a
// request.
func (l *framingLog) quiet() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.conns {
		if s == http.StateNew || s == http.StateActive {
			return false
		}
	}
	return l.running == 0
}

// oracleConn is a connection of the oracle server. Its reads end (io.EOF)
// after the stream's bytes, as if the client had half-closed the
// connection then: whatever the server needs beyond, it will not get. The
// client keeps the connection, so that the answers still go out (net/http
// reads no further request after a failed write). It notes when the
// server is done with it.
type oracleConn struct {
	net.Conn
	stream io.LimitedReader // the connection, up to the stream's end
	done   chan struct{}
	once   sync.Once
}

func (c *oracleConn) Read(p []byte) (int, error) { return c.stream.Read(p) }

func (c *oracleConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}

// CloseWrite: net/http's server half-closes a connection it is done with
// (then waits half a second before closing).
func (c *oracleConn) CloseWrite() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.(*net.TCPConn).CloseWrite()
}

// oracleListener hands out oracleConns, and each one to the test too.
type oracleListener struct {
	net.Listener
	conns  chan *oracleConn
	length atomic.Int64 // of the stream the next connection carries
}

func (l *oracleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	oc := &oracleConn{Conn: c, stream: io.LimitedReader{R: c, N: l.length.Load()}, done: make(chan struct{})}
	l.conns <- oc
	return oc, nil
}

// framingRig is the oracle and the proxies of FuzzHTTPFraming.
type framingRig struct {
	oracle     *framingLog
	oracleAddr string
	oracleLn   *oracleListener
	upLog      *framingLog
	proxies    map[string]*proxyRig
}

func newFramingRig(f *testing.F) *framingRig {
	r := &framingRig{oracle: newFramingLog(), upLog: newFramingLog(), proxies: map[string]*proxyRig{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	r.oracleLn = &oracleListener{Listener: ln, conns: make(chan *oracleConn, 1)}
	r.oracleAddr = ln.Addr().String()
	osrv := &http.Server{Handler: r.oracle, ConnState: r.oracle.connState, ErrorLog: discardLog}
	go osrv.Serve(r.oracleLn)
	f.Cleanup(func() { osrv.Close() })

	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	usrv := &http.Server{Handler: r.upLog, ConnState: r.upLog.connState, ErrorLog: discardLog}
	go usrv.Serve(uln)
	f.Cleanup(func() { usrv.Close() })
	for _, path := range bothPaths {
		r.proxies[path.name] = startProxyTape(f, "http://"+uln.Addr().String(), discardTape{}, path.opts...)
	}
	return r
}

// waitUntil polls cond until it holds, or fails the test after a while.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

// runOracle sends raw to the oracle and returns what it saw, once the
// server is done with the connection.
func (r *framingRig) runOracle(t *testing.T, raw string) []string {
	r.oracle.reset()
	r.oracleLn.length.Store(int64(len(raw)))
	c, err := net.Dial("tcp", r.oracleAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sc *oracleConn
	select {
	case sc = <-r.oracleLn.conns:
	case <-time.After(10 * time.Second):
		t.Fatal("the oracle did not accept the connection")
	}
	go io.Copy(io.Discard, c)
	go io.WriteString(c, raw)
	select {
	case <-sc.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the oracle kept the connection after the stream's end")
	}
	// (Its handlers are done: the server closes, or half-closes, a
	// connection after its last handler returned.)
	waitUntil(t, "the oracle settles", r.oracle.idle)
	seen, _ := r.oracle.snapshot()
	return seen
}

// runProxy sends raw through the proxy and returns what the upstream saw.
// The client stays until the proxy closes the connection, or until the
// upstream has seen as many whole requests as the oracle (and then a
// little longer, for requests that should not come).
func (r *framingRig) runProxy(t *testing.T, rig *proxyRig, raw string, whole int) []string {
	r.upLog.reset()
	c, err := net.Dial("tcp", rig.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c)
		close(eof)
	}()
	go io.WriteString(c, raw)
	// (Short of the whole requests for long, the comparison says what
	// is missing.)
	var since time.Time
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		select {
		case <-eof:
			deadline = time.Time{}
			continue
		default:
		}
		if _, n := r.upLog.snapshot(); n < whole {
			continue
		}
		if since.IsZero() {
			since = time.Now()
		}
		if time.Since(since) > 20*time.Millisecond {
			break
		}
	}
	c.Close()
	p := rig.proxy
	waitUntil(t, "the proxy settles", func() bool {
		return p.st.ended.Load() == p.st.exchanges.Load() && r.upLog.quiet()
	})
	seen, _ := r.upLog.snapshot()
	return seen
}

// compareFraming checks what the upstream saw (up) against the oracle:
// the same whole requests in the same order; a broken one (its body cut
// by the proxy) only last, and only where the oracle's last was broken
// too, the same request.
func compareFraming(oracle, up []string) string {
	var ow, uw []string
	lastBroken := ""
	for _, s := range oracle {
		if strings.HasPrefix(s, "broken ") {
			lastBroken = s
			continue
		}
		ow = append(ow, s)
	}
	for _, s := range up {
		if !strings.HasPrefix(s, "broken ") {
			uw = append(uw, s)
		}
	}
	if strings.Join(ow, "\n") != strings.Join(uw, "\n") {
		return "whole requests differ"
	}
	for i, s := range up {
		if strings.HasPrefix(s, "broken ") && (i != len(up)-1 || s != lastBroken) {
			return fmt.Sprintf("the upstream saw %s (entry %d of %d), not the oracle's last", s, i+1, len(up))
		}
	}
	return ""
}

// FuzzHTTPFraming: see above.
func FuzzHTTPFraming(f *testing.F) {
	const h = "Host: h\r\n"
	for _, seed := range []string{
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 2\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 2\r\n\r\n{}POST /b?x=1 HTTP/1.1\r\n" + h + "Content-Length: 3\r\n\r\nabcGET /c HTTP/1.1\r\n" + h + "\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\n2;ext=1\r\n{}\r\n0\r\nX-Trailer: 1\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\nZZ\r\nGET /smuggled HTTP/1.1\r\n" + h + "\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n" + h + "\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nbad trailer\r\n\r\nGET /smuggled HTTP/1.1\r\n" + h + "\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 2, 2\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: -1\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\nabc",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 10\r\n\r\nshort",
		"POST /mcp HTTP/1.1\r\n" + h + "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
		"POST /mcp HTTP/1.0\r\n" + h + "Content-Length: 2\r\n\r\n{}GET /after HTTP/1.1\r\n" + h + "\r\n",
		"GET /mcp HTTP/1.0\r\n" + h + "Connection: keep-alive\r\n\r\nGET /after HTTP/1.0\r\n\r\n",
		"POST /mcp HTTP/1.1\nHost: h\nContent-Length: 2\n\n{}GET /lf HTTP/1.1\nHost: h\n\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 2\r\n\r\n{}\r\n\r\nGET /crlf HTTP/1.1\r\n" + h + "\r\n",
		"GET /mcp HTTP/1.1\r\n" + h + "Connection: close\r\n\r\nGET /after HTTP/1.1\r\n" + h + "\r\n",
		"GET /a%20b/%2F?q=%zz HTTP/1.1\r\n" + h + "\r\n",
		"GET http://other/abs?x HTTP/1.1\r\n" + h + "\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n",
		"GET /mcp HTTP/1.1\r\n" + h + "X-A: 1\r\n 2\r\n\r\n",
		"GET /mcp HTTP/1.1\r\n\r\n",
		"DELETE /mcp HTTP/1.1\r\n" + h + "Content-Length: 1\r\n\r\nx",
		"CONNECT h:80 HTTP/1.1\r\n" + h + "\r\n",
		"OPTIONS * HTTP/1.1\r\n" + h + "\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"GET /ws HTTP/1.1\r\n" + h + "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
		"GET /mcp HTTP/1.1\r\n" + h + "Content-Length: 3\r\n\r\nabc",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: +2\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 02\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: Chunked\r\n\r\n0\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\n1\na\n0\n\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n1\r\na\r\n0\r\nX-T: 1\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\n0000000001\r\na\r\n0\r\n\r\n",
		"GET /mcp HTTP/1.1\r\n" + h + "Expect: 100-continue\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Expect: something\r\nContent-Length: 2\r\n\r\n{}",
		"get /mcp HTTP/1.1\r\n" + h + "\r\n",
		"GET /mcp HTTP/1.2\r\n" + h + "\r\n",
		"GET /mcp HTTP/2.0\r\n" + h + "\r\n",
		"GET /mcp\r\n\r\n",
		"\r\n\r\nGET /lead HTTP/1.1\r\n" + h + "\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nX-A:\x00\r\n\r\n",
		"GET /mcp#frag HTTP/1.1\r\n" + h + "\r\n",
		"GET /m%00cp HTTP/1.1\r\n" + h + "\r\n",
		"GET ../mcp HTTP/1.1\r\n" + h + "\r\n",
		"HEAD /mcp HTTP/1.1\r\n" + h + "Content-Length: 2\r\n\r\n{}",
	} {
		f.Add(seed)
	}
	r := newFramingRig(f)
	f.Fuzz(func(t *testing.T, raw string) {
		if len(raw) > 64<<10 {
			return
		}
		raw += framingEnd
		want := r.runOracle(t, raw)
		whole := 0
		for _, s := range want {
			if !strings.HasPrefix(s, "broken ") {
				whole++
			}
		}
		for _, path := range bothPaths {
			got := r.runProxy(t, r.proxies[path.name], raw, whole)
			if d := compareFraming(want, got); d != "" {
				t.Errorf("%s: %s, for %q\nnet/http saw:\n\t%s\nthe upstream saw:\n\t%s", path.name, d, raw,
					strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
			}
		}
	})
}
