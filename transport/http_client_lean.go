package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/http1"
	"github.com/mcptape/mcptape/internal/rawio"
)

// leanTransport is the http.RoundTripper of the clients NewHTTPClient
// makes. Plain HTTP/1.1 requests to hosts reached without a proxy take
// the lean path: a pool of keep-alive connections per host, each used
// synchronously by the goroutine whose request it carries. Each is an
// internal/http1 connection (the HTTP/1.1 client the recording proxy
// uses too): the request is written in one write (its body read first),
// the response read with its bufio.Reader by the caller (the body by
// whoever reads it), with no goroutine per request or per connection: net/http's
// Transport hands every request to a write goroutine and every response
// from a read goroutine, which costs a load generator more CPU than the
// exchange itself. Everything else (https, proxies, Expect: 100-continue,
// bodies of unknown length or over leanMaxBody, Connection headers, a
// Host or request line net/http would rewrite or refuse) goes to a
// net/http Transport with the same settings. Answers read as net/http
// reads them (http1.Conn.ReadResponse); a connection is reused only when nothing
// is left in its read buffer after an answer and a non-blocking peek
// finds it quiet when it is taken from the pool.
//
// Cancellation: the end of a request sets a past deadline on its
// connection, which ends a blocked write or read; such a connection is
// not reused. For a request of RoundTrip, a context.AfterFunc of its
// context does it while the context can end. A request of an HTTPConn
// exchange has the exchange's end instead (http_exchange.go): the
// exchange's abort hook reaches the connection bound to it, and its
// deadline is the connection's I/O deadline, so that a request costs no
// context, timer or registration of its own.
type leanTransport struct {
	fallback *http.Transport
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	proxy    func(*http.Request) (*url.URL, error)
	maxIdle  int           // idle connections kept per host
	maxConns int           // open connections per host, 0: no limit
	idleTime time.Duration // an idle connection older than this is not reused

	hosts sync.Map // host:port of the URL → *leanHost

	mu sync.Mutex // guards the pools of the hosts
}

// leanHost is the pool of one host:port.
type leanHost struct {
	addr    string // host:port to dial
	direct  bool   // no proxy: the lean path applies
	idle    []*leanConn
	open    int              // connections open or being dialled
	waiters []chan *leanConn // requests waiting for a connection (nil: dial one)
}

// leanConn is one keep-alive connection of the lean path.
type leanConn struct {
	*http1.Conn
	host   *leanHost
	idleAt time.Time
	reused bool      // carried a request before
	body   []byte    // scratch: the request body
	dl     time.Time // the I/O deadline set (setDeadline)
}

// leanMaxBody is the largest request body the lean path sends: it writes
// the whole request before reading the answer, so a server that answers
// early (413...) and stops reading must not be able to block the write;
// larger bodies go through net/http, which reads while it writes.
const leanMaxBody = 64 << 10

// maxKeptBody is the largest request body buffer a connection keeps for
// its next request.
const maxKeptBody = 16 << 10

// aLongTimeAgo is the deadline that ends blocked I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

func newLeanTransport(fallback *http.Transport, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *leanTransport {
	return &leanTransport{
		fallback: fallback, dial: dial, proxy: fallback.Proxy,
		maxIdle: fallback.MaxIdleConnsPerHost, maxConns: fallback.MaxConnsPerHost,
		idleTime: fallback.IdleConnTimeout,
	}
}

// RoundTrip sends req over the lean path when it applies, else over the
// net/http Transport.
func (t *leanTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, _, err := t.roundTrip(req, nil, nil)
	return resp, err
}

// roundTrip is RoundTrip. The end of ex, when not nil, is the request's
// instead of the request's context (see bind in http_exchange.go). lean
// reports that the lean path took req (not net/http, which may still hold
// it after the answer). host, when not nil, is the pool of req's URL
// (leanHost), given by a caller that knows the rest of req fit for the
// lean path and its method and header valid (checkRequest): an
// HTTPConn's POST (see HTTPConn.setPostURL), which then costs neither
// look-up nor check but of its body's framing.
func (t *leanTransport) roundTrip(req *http.Request, ex *Exchange, host *leanHost) (resp *http.Response, lean bool, err error) {
	h := host
	if h == nil {
		h = t.leanHost(req)
	} else if !leanFraming(req) {
		h = nil
	}
	if h == nil {
		resp, err = t.fallback.RoundTrip(withExchange(req, ex))
		return resp, false, err
	}
	body := req.Body
	if host == nil {
		if err := checkRequest(req); err != nil {
			closeReqBody(body)
			return nil, true, err
		}
	}
	for attempt := 0; ; attempt++ {
		c, err := t.get(req, ex, h)
		if err != nil {
			closeReqBody(body)
			return nil, true, err
		}
		resp, retry, err := c.roundTrip(t, req, ex, body)
		if err == nil {
			return resp, true, nil
		}
		// A reused connection the server closed while the request was
		// on its way (see leanConn.roundTrip): send it again on a new
		// one, as net/http does, when the body can be sent again.
		if !retry || attempt > 0 || endErr(req, ex) != nil {
			return nil, true, err
		}
		if body != nil && body != http.NoBody {
			if req.GetBody == nil {
				return nil, true, err
			}
			if body, err = req.GetBody(); err != nil {
				return nil, true, err
			}
		}
	}
}

func closeReqBody(b io.ReadCloser) {
	if b != nil {
		b.Close()
	}
}

// CloseIdleConnections closes the idle connections of both paths.
func (t *leanTransport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*leanConn
	t.hosts.Range(func(_, v any) bool {
		h := v.(*leanHost)
		idle = append(idle, h.idle...)
		h.open -= len(h.idle)
		clear(h.idle)
		h.idle = h.idle[:0]
		return true
	})
	t.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
	t.fallback.CloseIdleConnections()
}

// leanHost returns the pool for req, or nil when req must go to net/http.
func (t *leanTransport) leanHost(req *http.Request) *leanHost {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" || !leanFraming(req) {
		return nil
	}
	// what net/http refuses or rewrites (control bytes in the request
	// line, a Host to punycode or with a zone) it also handles
	if !plainHost(requestHost(req)) || hasCTL(req.URL.RawQuery) || hasCTL(req.URL.Opaque) {
		return nil
	}
	if _, ok := req.Header["Expect"]; ok {
		return nil
	}
	if _, ok := req.Header["Connection"]; ok {
		return nil
	}
	key := req.URL.Host
	v, ok := t.hosts.Load(key)
	if !ok {
		h := &leanHost{addr: dialAddr(req.URL)}
		if t.proxy != nil {
			p, err := t.proxy(req)
			h.direct = err == nil && p == nil
		} else {
			h.direct = true
		}
		v, _ = t.hosts.LoadOrStore(key, h)
	}
	h := v.(*leanHost)
	if !h.direct {
		return nil
	}
	return h
}

// leanFraming reports whether the lean path can frame req: no
// Connection: close, no chunked body or trailer, a body of at most
// leanMaxBody bytes whose length is known.
func leanFraming(req *http.Request) bool {
	return !req.Close && len(req.TransferEncoding) == 0 && req.Trailer == nil && req.ContentLength <= leanMaxBody &&
		(req.Body != nil && req.Body != http.NoBody) == (req.ContentLength > 0)
}

// plainHost reports whether host is made of the bytes net/http takes in
// a Host header as they are (no zone, no non-ASCII name).
func plainHost(host string) bool {
	for i := 0; i < len(host); i++ {
		b := host[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			strings.IndexByte("!$&'()*+,-.:;=[]_~", b) >= 0) {
			return false
		}
	}
	return true
}

// hasCTL reports whether s holds an ASCII control byte.
func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// dialAddr returns host:port of an http URL (port 80 by default).
func dialAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// get returns an idle connection to h for req, dials a new one, or waits
// for one when h has maxConns open; dialling and waiting end with ex
// (when not nil) or else with req's context.
func (t *leanTransport) get(req *http.Request, ex *Exchange, h *leanHost) (*leanConn, error) {
	t.mu.Lock()
	if n := len(h.idle); n > 0 {
		c := h.idle[n-1]
		h.idle[n-1] = nil
		h.idle = h.idle[:n-1]
		t.mu.Unlock()
		idle := time.Since(c.idleAt)
		// every reuse looks at the socket (one non-blocking peek): bytes
		// the server sent while the connection was idle would be read as
		// the answer to the next request
		if (t.idleTime > 0 && idle > t.idleTime) || !c.alive() {
			c.Close()
			return t.dialConn(reqContext(req, ex), h) // in the closed one's place
		}
		return c, nil
	}
	ctx := reqContext(req, ex)
	if t.maxConns <= 0 || h.open < t.maxConns {
		h.open++
		t.mu.Unlock()
		return t.dialConn(ctx, h)
	}
	ch := make(chan *leanConn, 1)
	h.waiters = append(h.waiters, ch)
	t.mu.Unlock()
	select {
	case c := <-ch:
		if c == nil {
			return t.dialConn(ctx, h)
		}
		return c, nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	for i, w := range h.waiters {
		if w == ch {
			h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
			t.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	t.mu.Unlock()
	// handed a connection (or a dial slot) at the same time: pass it on
	if c := <-ch; c != nil {
		t.put(c)
	} else {
		t.drop(h)
	}
	return nil, ctx.Err()
}

// endErr returns the Err of req's context, or of ex when not nil.
func endErr(req *http.Request, ex *Exchange) error {
	if ex != nil {
		return ex.ctxErr()
	}
	return req.Context().Err()
}

// reqContext returns the context of req, or of ex when not nil.
func reqContext(req *http.Request, ex *Exchange) context.Context {
	if ex != nil {
		return ex.context()
	}
	return req.Context()
}

// dialConn dials a connection in a slot of h already counted in h.open.
func (t *leanTransport) dialConn(ctx context.Context, h *leanHost) (*leanConn, error) {
	nc, err := t.dial(ctx, "tcp", h.addr)
	if err != nil {
		t.drop(h)
		return nil, err
	}
	nc = rawio.Wrap(nc) // a dialer's own kind of connection stays as it is
	return &leanConn{Conn: http1.NewConn(nc, nc), host: h}, nil
}

// alive reports whether an idle connection is still open: nothing to
// read, no end of stream.
func (c *leanConn) alive() bool {
	return c.Quiet()
}

// put makes c, whose exchange is complete, available to the next request.
func (t *leanTransport) put(c *leanConn) {
	h := c.host
	c.reused = true
	t.mu.Lock()
	if ch := h.nextWaiter(); ch != nil {
		t.mu.Unlock()
		ch <- c
		return
	}
	if len(h.idle) >= t.maxIdle {
		h.open--
		t.mu.Unlock()
		c.Close()
		return
	}
	c.idleAt = time.Now()
	h.idle = append(h.idle, c)
	t.mu.Unlock()
}

// nextWaiter removes and returns the longest-waiting request for a
// connection of h, or nil when none waits; the transport's mu is held.
func (h *leanHost) nextWaiter() chan *leanConn {
	if len(h.waiters) == 0 {
		return nil
	}
	ch := h.waiters[0]
	h.waiters = h.waiters[1:]
	return ch
}

// discard closes c, which cannot be reused.
func (t *leanTransport) discard(c *leanConn) {
	c.Close()
	t.drop(c.host)
}

// drop frees a connection slot of h: a waiting request may dial.
func (t *leanTransport) drop(h *leanHost) {
	t.mu.Lock()
	if ch := h.nextWaiter(); ch != nil {
		t.mu.Unlock()
		ch <- nil
		return
	}
	h.open--
	t.mu.Unlock()
}

// abortIO ends c's blocked I/O at once (and any later): the abort hook
// of the exchange bound to c (Exchange.bind). c is not reused then.
func (c *leanConn) abortIO() {
	c.NC.SetDeadline(aLongTimeAgo)
}

// setDeadline makes t (zero: none) the deadline of c's I/O, or a later
// one by at most slack: it costs nothing when the deadline already set is
// t or that much later. Setting a deadline moves two runtime timers; a
// generator sending one request after another on c, each with the same
// timeout, would move them on every request, while with slack it moves
// them once per slack (the deadline set is t+slack).
func (c *leanConn) setDeadline(t time.Time, slack time.Duration) {
	if t.Equal(c.dl) {
		return
	}
	if !t.IsZero() && !c.dl.IsZero() && !c.dl.Before(t) && c.dl.Sub(t) <= slack {
		return
	}
	if !t.IsZero() {
		t = t.Add(slack)
	}
	c.dl = t
	c.NC.SetDeadline(t)
}

// deadlineSlack is how much later than an exchange's deadline its
// connection's I/O may end (setDeadline): 1/64 of the time the exchange
// has, at most maxDeadlineSlack. An exchange whose deadline passed fails
// with context.DeadlineExceeded all the same, that much late at most (its
// error is decided by the clock: Exchange.ctxErrLocked).
func deadlineSlack(sent, deadline time.Time) time.Duration {
	return min(max(deadline.Sub(sent)/64, 0), maxDeadlineSlack)
}

// maxDeadlineSlack bounds deadlineSlack.
const maxDeadlineSlack = 50 * time.Millisecond

// watch ends c's blocked I/O when ctx ends; stop reports whether that
// never happened (so that c may be reused).
func (c *leanConn) watch(ctx context.Context) (stop func() bool) {
	if ctx.Done() == nil {
		return nil
	}
	return context.AfterFunc(ctx, func() { c.NC.SetDeadline(aLongTimeAgo) })
}

// roundTrip writes req with body and reads the answer's head. retry
// reports a failure on a reused connection that the server may have
// closed while the request was on its way: nothing of the request was
// written, or, for a request that may be sent twice (GET...), no byte of
// an answer arrived (the rules of net/http, http1.Retryable).
func (c *leanConn) roundTrip(t *leanTransport, req *http.Request, ex *Exchange, body io.ReadCloser) (*http.Response, bool, error) {
	var stop func() bool
	if ex != nil {
		if err := ex.bind(c); err != nil {
			closeReqBody(body)
			t.discard(c) // rare: not worth keeping apart from reused ones
			return nil, false, err
		}
	} else {
		c.setDeadline(time.Time{}, 0)
		stop = c.watch(req.Context())
	}
	fail := func(err error, retry bool) (*http.Response, bool, error) {
		if ex != nil {
			ex.unbind()
		} else if stop != nil {
			stop()
		}
		t.discard(c)
		if err := endErr(req, ex); err != nil {
			return nil, false, err
		}
		return nil, retry && c.reused, err
	}
	b, err := c.readBody(req, body)
	if err != nil {
		return fail(err, false)
	}
	written := c.Written()
	werr := c.WriteRequest(&http1.Request{
		Method: requestMethod(req), Target: req.URL.RequestURI(), Host: requestHost(req),
		Header: req.Header, Mode: http1.Client, Body: b,
	})
	if werr == nil && ex != nil && ex.wrote != nil {
		ex.wrote()
	}
	if cap(c.body) > maxKeptBody {
		c.body = nil
	}
	// A write error (the server may have closed the connection after
	// answering) is reported only if no answer can be read.
	// An exchange that keeps no answer headers has its answer made in the
	// memory of the last such answer on c: that one's exchange is over,
	// as c is back from the pool.
	c.Reuse = ex != nil && ex.reuseHead
	resp, err := c.ReadResponse(req, nil)
	if err != nil {
		retry := http1.Retryable(err, werr != nil && c.Written() == written, http1.Replayable(req.Method, req.Header))
		if werr != nil {
			err = werr
		}
		return fail(err, retry)
	}
	lb := &leanBody{t: t, c: c, req: req, ex: ex, stop: stop}
	if resp.Body == http.NoBody {
		// c goes back to the pool before the caller reads resp: the next
		// answer on c must not be made in its memory
		c.KeepLast()
		// after 101 Switching Protocols the connection speaks something
		// else: it is not reused (the lean path does not upgrade)
		lb.finish(!resp.Close && resp.StatusCode != http.StatusSwitchingProtocols)
		return resp, false, nil
	}
	lb.r = resp.Body
	lb.reuse = !resp.Close
	resp.Body = lb
	return resp, false, nil
}

// leanBody is the body of an answer on the lean path: reading it to the
// end gives the connection back to the pool; closing it earlier closes
// the connection.
type leanBody struct {
	t     *leanTransport
	c     *leanConn
	r     io.Reader
	req   *http.Request
	ex    *Exchange   // bound to c, or nil
	stop  func() bool // the watch of the request's context (ex nil)
	reuse bool
	done  atomic.Bool
	err   error // after done, what Read returns
}

// errBodyClosed is the error of a Read after Close.
var errBodyClosed = errors.New("http: read on closed response body")

func (b *leanBody) Read(p []byte) (int, error) {
	if b.done.Load() {
		if b.err != nil {
			return 0, b.err
		}
		return 0, errBodyClosed
	}
	n, err := b.r.Read(p)
	if err == nil {
		return n, nil
	}
	if err == io.EOF {
		b.err = io.EOF
		b.finish(b.reuse)
		return n, io.EOF
	}
	if cerr := endErr(b.req, b.ex); cerr != nil {
		err = cerr
	}
	b.err = err
	b.finish(false)
	return n, err
}

// Close ends the body; an unread rest closes the connection.
func (b *leanBody) Close() error {
	b.finish(false)
	return nil
}

// finish releases the connection once: back to the pool when reuse and
// the context never ended the connection's I/O, else closed.
func (b *leanBody) finish(reuse bool) {
	if !b.done.CompareAndSwap(false, true) {
		return
	}
	if b.ex != nil {
		if !b.ex.unbind() {
			reuse = false // ended by the exchange's end
		}
	} else if b.stop != nil && !b.stop() {
		reuse = false // the deadline was set, or is being set
	}
	// bytes beyond the answer's framing (a body longer than its
	// Content-Length, a body after HEAD, 204 or 304...) would be read as
	// the next answer
	if reuse && b.c.BR.Buffered() == 0 {
		b.t.put(b.c)
	} else {
		b.t.discard(b.c)
	}
}
