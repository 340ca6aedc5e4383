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

// closed reports whether no handler runs and every connection is closed
// (or, of the upstream's, half-closed: see upstreamListener).
func (l *framingLog) closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns) == 0 && l.running == 0
}

// accepted reports whether the server has a connection from addr.
func (l *framingLog) accepted(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		if c.RemoteAddr().String() == addr {
			return true
		}
	}
	return false
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
	upAddr     string
	proxies    map[string]*proxyRig
}

// newFramingRig starts the oracle, the upstream and a proxy of each path.
// The proxies and the upstream take each connection acceptDelay late (as
// on a loaded machine; zero: at once).
func newFramingRig(t testing.TB, acceptDelay time.Duration) *framingRig {
	r := &framingRig{oracle: newFramingLog(), upLog: newFramingLog(), proxies: map[string]*proxyRig{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.oracleLn = &oracleListener{Listener: ln, conns: make(chan *oracleConn, 1)}
	r.oracleAddr = ln.Addr().String()
	osrv := &http.Server{Handler: r.oracle, ConnState: r.oracle.connState, ErrorLog: discardLog}
	go osrv.Serve(r.oracleLn)
	t.Cleanup(func() { osrv.Close() })

	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.upAddr = uln.Addr().String()
	usrv := &http.Server{Handler: r.upLog, ConnState: r.upLog.connState, ErrorLog: discardLog}
	go usrv.Serve(upstreamListener{lateListener{uln, acceptDelay}, r.upLog})
	t.Cleanup(func() { usrv.Close() })
	for _, path := range bothPaths {
		pln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r.proxies[path.name] = startProxyOn(t, lateListener{pln, acceptDelay}, "http://"+r.upAddr, discardTape{}, path.opts...)
	}
	return r
}

// upstreamListener hands out the connections of the upstream, each one
// forgotten by log as soon as the server is done with it: when it closes
// it, or half-closes it (the server then waits half a second before
// closing; see oracleConn).
type upstreamListener struct {
	net.Listener
	log *framingLog
}

func (l upstreamListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &halfClosingConn{Conn: c, log: l.log}, nil
}

// halfClosingConn is a connection of upstreamListener.
type halfClosingConn struct {
	net.Conn
	log *framingLog
}

func (c *halfClosingConn) CloseWrite() error {
	c.log.connState(c, http.StateClosed)
	return c.Conn.(*net.TCPConn).CloseWrite()
}

// lateListener hands out each connection it accepts delay late (the
// connection itself, unwrapped).
type lateListener struct {
	net.Listener
	delay time.Duration
}

func (l lateListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil && l.delay > 0 {
		time.Sleep(l.delay)
	}
	return c, err
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
// little longer, for requests that should not come); then it half-closes
// the connection, as the oracle's client does at the stream's end, and
// waits for the proxy to be done with it, and for the upstream to be done
// with every connection the proxy opened: what the upstream sees of this
// stream, it has seen by then, not during the next one.
func (r *framingRig) runProxy(t *testing.T, rig *proxyRig, raw string, whole int) []string {
	r.upLog.reset()
	d, err := net.Dial("tcp", rig.addr)
	if err != nil {
		t.Fatal(err)
	}
	c := d.(*net.TCPConn)
	defer c.Close()
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c)
		close(eof)
	}()
	written := make(chan struct{})
	go func() {
		io.WriteString(c, raw)
		close(written)
	}()
	// (Short of the whole requests for long, the comparison says what
	// is missing.)
	var since time.Time
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
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
	select {
	case <-written:
	case <-eof: // (the write fails, or has failed)
	case <-time.After(10 * time.Second):
		t.Fatalf("the proxy did not take the stream's bytes")
	}
	c.CloseWrite()
	select {
	case <-eof:
	case <-time.After(10 * time.Second):
		t.Fatalf("the proxy kept the connection after the stream's end")
	}
	r.settleUpstream(t, rig.proxy)
	seen, _ := r.upLog.snapshot()
	return seen
}

// settleUpstream waits until the upstream has served, and closed, every
// connection p opened to it: p's exchanges are over (its client
// connection is closed), but the upstream may not have accepted all of
// p's connections yet, nor read what is on them.
func (r *framingRig) settleUpstream(t *testing.T, p *HTTPProxy) {
	// A connection of the test's, opened after every one of p's: the
	// listener's queue hands them to the server in order, so once the
	// server has ours, it has taken all of p's.
	m, err := net.Dial("tcp", r.upAddr)
	if err != nil {
		t.Fatal(err)
	}
	mark := m.LocalAddr().String()
	waitUntil(t, "the upstream accepts a connection", func() bool { return r.upLog.accepted(mark) })
	m.Close()
	waitUntil(t, "the upstream settles", func() bool {
		p.idle.CloseIdleConnections() // (those of net/http's path; the lean path's closed with the client's)
		return p.st.ended.Load() == p.st.exchanges.Load() && r.upLog.closed()
	})
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
	r := newFramingRig(f, 0)
	f.Fuzz(func(t *testing.T, raw string) {
		if len(raw) > 64<<10 {
			return
		}
		r.check(t, raw)
	})
}

// check sends raw, and the end of every stream, to the oracle and through
// each proxy, and compares what the upstream saw with what the oracle saw.
func (r *framingRig) check(t *testing.T, raw string) {
	t.Helper()
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
}

// TestFramingRigLateAccepts: the rig of FuzzHTTPFraming compares each
// stream with what the upstream saw of it, however late the proxies and
// the upstream take their connections (as on a loaded machine, where it
// failed once): a request cut in its body, forwarded in part, reaches the
// upstream during the stream that follows, unless the rig waits for it.
func TestFramingRigLateAccepts(t *testing.T) {
	const h = "Host: h\r\n"
	r := newFramingRig(t, 30*time.Millisecond)
	for _, raw := range []string{
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
		"POST /mcp HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nbad trailer\r\n\r\nGET /smuggled HTTP/1.1\r\n" + h + "\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + "Content-Length: 2\r\n\r\n{}",
	} {
		r.check(t, raw)
	}
}
