package capture

// The lean path of Serve. Each HTTP/1.1 client connection is served by one
// goroutine and pinned to an upstream connection of its own (keep-alive,
// one to one): the goroutine reads a request, writes it upstream, reads the
// response and writes it back, streaming event streams event by event,
// with the recording of http_exchange.go. No request crosses goroutines on
// its way, unlike net/http's server and Transport, where each exchange
// wakes several goroutines; on a loaded machine those wake-ups were most of
// what the proxy cost. What an exchange needs, the connection keeps for
// the next, as its exchanges come one after another: the exchange's
// record state, the request (parseFastInto) and the response (http1's
// Conn.Reuse) with their header maps, the copy of the request body, the
// event-stream framer. An echo-shaped exchange allocates 3 times
// (TestHTTPLeanAllocs).
//
// What the lean path does not do, it hands over whole: a connection whose
// next request is not plain HTTP/1.1 with a body of known length (an
// upgrade, CONNECT, Expect, a chunked request body, HTTP/1.0, a malformed
// request) is given, that request included, to the net/http server running
// ServeHTTP, which keeps it. A malformed one (net/http refuses it with 400
// or 431) is also noted in the tape, as an "error" event.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/http1"
	"github.com/mcptape/mcptape/transport"
)

// Lean path limits.
const (
	// maxLeanBody is the largest request body the lean path reads before
	// sending it upstream; larger ones take the net/http path.
	maxLeanBody = 1 << 20
	// maxLeanHead bounds the bytes read for one request head: a longer
	// head is handed over with them, and net/http, whose own limit
	// (http.DefaultMaxHeaderBytes and 4 KiB) they exceed, answers 431.
	maxLeanHead = http.DefaultMaxHeaderBytes + 8<<10
	// watchDelay is how long an exchange runs, at least, before the proxy
	// starts watching its client connection for a disconnect (GET streams
	// are watched at once); a client that goes away is noticed at most
	// twice this late. Exchanges shorter than this, nearly all of them,
	// pay nothing for the watch.
	watchDelay = 25 * time.Millisecond
	// leanIdleTimeout bounds the wait for a request's first byte on a
	// connection that carried one, leanHeaderTimeout (by default: see
	// withHeadTimeout) the time for a whole head from its first byte, or
	// for the first from the connection's start, on both paths, once.
	leanIdleTimeout   = 5 * time.Minute
	leanHeaderTimeout = 30 * time.Second
)

// aLongTimeAgo is a deadline in the past: it interrupts a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

// leanConn is one client connection on the lean path.
type leanConn struct {
	p        *HTTPProxy
	srv      *leanServer
	c        net.Conn
	tap      headTap
	br       *bufio.Reader
	bw       *bufio.Writer
	local    localAddr
	remote   string
	body     []byte                          // request body buffer
	reqKeep  []byte                          // the recorder's copy of a request body (exchange.reqBuf), lent to each exchange
	framer   *transport.SSEFramer            // the last exchange's event stream framer, reset for the next (exchange.spare)
	x        exchange                        // the exchange in progress (see exchange), reused for the next
	emit     func(*transport.SSEEvent) error // x.onEvent, bound once (exchange.emit)
	hdrs     [2]headerCache                  // the last request and response headers recorded, encoded (exchange.hdrs)
	head     fastRequest                     // the request of the exchange in progress, when parsed fast; reused for the next
	reqBody  fixedBody                       // reads the body of a request the fast parser read
	lastPost bool                            // the last request read was a POST
	// ctx is the context of the connection's exchanges: cancelled with
	// errProxyClosing by Close, and when the client goes away (which ends
	// the connection). It carries http.LocalAddrContextKey.
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stopExit func() bool  // stops the abort at Close
	idle     atomic.Bool  // waiting for a request
	busy     atomic.Int64 // when the exchange started waiting (the server's clock), 0 when it is not

	mu      sync.Mutex
	up      *upstreamConn
	aborted bool  // the exchange was cut: its upstream connection is closed
	readBy  int64 // when the wait for a request is cut (see setReadBy)
	// The watch of the client connection (see arm).
	armed  bool
	watchC chan struct{} // a watch runs; closed when it returns
	gone   bool          // the client went away

	kept     keptChunks // of the response being copied (see http_stream.go)
	handKept func()     // kept.hand, bound once

	// headBy is when the request head being read must be whole (zero
	// until a wait within the head needs it: see headDeadline).
	headBy time.Time

	// The last Host asked about, and whether it names the proxy (see
	// namesProxy).
	lastHost   string
	lastProxy  bool
	lastHostOK bool
}

// namesProxy is p.hostNamesProxy for this connection (not over TLS, the
// lean path's), remembered for the last host it was asked about: a
// connection's requests name the same host, which then costs no parsing
// of addresses again. The answer depends on nothing else that changes.
func (lc *leanConn) namesProxy(host string) bool {
	if !lc.lastHostOK || host != lc.lastHost {
		lc.lastHost, lc.lastProxy, lc.lastHostOK = host, lc.p.hostNamesProxy(host, lc.local, false), true
	}
	return lc.lastProxy
}

func newLeanConn(s *leanServer, c net.Conn) *leanConn {
	lc := &leanConn{p: s.p, srv: s, c: c, remote: c.RemoteAddr().String(), local: localAddrOf(c.LocalAddr())}
	lc.tap.c = c
	lc.br = bufio.NewReaderSize(&lc.tap, 4<<10)
	lc.bw = bufio.NewWriterSize(c, 4<<10)
	lc.ctx, lc.cancel = context.WithCancelCause(context.WithValue(s.p.closing, http.LocalAddrContextKey, c.LocalAddr()))
	lc.stopExit = context.AfterFunc(lc.ctx, lc.abortUpstream)
	lc.handKept = lc.kept.hand
	lc.emit = lc.x.onEvent
	return lc
}

// serve runs the connection until it closes or is handed over.
func (lc *leanConn) serve() {
	handedOver := false
	defer func() {
		lc.stopExit()
		lc.cancel(nil)
		lc.dropUpstream()
		lc.srv.forget(lc)
		if !handedOver {
			lc.c.Close()
			lc.p.ConnState(lc.c, http.StateClosed)
		}
	}()
	// As with net/http, the first head must come whole within the head
	// timeout from the connection's start; later ones have the idle wait
	// for their first byte, then the head timeout from it.
	wait := lc.p.o.headTimeout
	lc.headBy = time.Now().Add(wait)
	for {
		if !lc.srv.setIdle(lc, true) {
			return
		}
		// The watch loop times the idle wait: a read deadline per request woke a thread.
		lc.setReadBy(lc.srv.clock() + int64(wait))
		_, err := lc.br.Peek(1)
		cut := lc.setReadBy(0)
		if err != nil {
			return
		}
		lc.srv.setIdle(lc, false)
		// The head has begun: it must come whole within the time net/http
		// allows (ReadHeaderTimeout), not the idle wait (see readRequest).
		req, checked, err := lc.readRequest(cut)
		if err != nil && isNetError(err) {
			// Out of time for the head (or the connection failed): net/http,
			// given the rest, would grant the head its time again; like it,
			// close without an answer.
			return
		}
		// A head that came with more than maxLeanHead bytes goes to
		// net/http even when it parsed: the tap's error waits in lc.br.
		if err != nil || len(lc.tap.buf) > maxLeanHead || !checked && !leanable(req) {
			lc.noteMalformed(req, err)
			handedOver = lc.handOver()
			return
		}
		if !lc.exchange(req) {
			return
		}
		wait, lc.headBy = leanIdleTimeout, time.Time{}
	}
}

// isNetError reports whether err is (or wraps) a net.Error: the
// connection failed or ran out of time. A *url.Error is a net.Error too,
// but http.ReadRequest returns one for a request target it cannot parse
// (an empty one: "GET  HTTP/1.1"), which net/http answers with 400: it
// counts only for the error it wraps. Its target stays in this function,
// so that asking costs an exchange nothing when there is no error
// (errors.As makes its target escape).
func isNetError(err error) bool {
	var ne net.Error
	if !errors.As(err, &ne) {
		return false
	}
	if ue, ok := ne.(*url.Error); ok {
		return isNetError(ue.Err)
	}
	return true
}

// headEnd ends a request head (with the end of its last line): a head
// whose bytes hold it is whole, or ends earlier (at a bare "\n\n").
var headEnd = []byte("\r\n\r\n")

// peekBuffered returns the bytes br holds.
func peekBuffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return b
}

// leanable reports whether the lean path serves r.
func leanable(r *http.Request) bool {
	return leanFraming(r) && checkRequestHead(r) == nil
}

// leanFraming is leanable but for the checks of checkRequestHead.
func leanFraming(r *http.Request) bool {
	return r.ProtoMajor == 1 && r.ProtoMinor == 1 && r.Method != http.MethodConnect &&
		len(r.RequestURI) > 0 && r.RequestURI[0] == '/' && targetAsIs(r) &&
		r.Header["Upgrade"] == nil && r.Header["Expect"] == nil && r.Header["Trailer"] == nil &&
		r.TransferEncoding == nil && r.ContentLength >= 0 && r.ContentLength <= maxLeanBody &&
		r.Host != "" // an empty Host is net/http's to judge (present or missing)
}

// exchange forwards and records one request; it reports whether the
// client connection may carry another.
func (lc *leanConn) exchange(req *http.Request) bool {
	p := lc.p
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		lc.writeError(http.StatusServiceUnavailable, "mcptape: the recording proxy is shutting down", true)
		return false
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()

	req.RemoteAddr = lc.remote
	x := &lc.x
	p.initExchange(x, req)
	x.ctx, x.clientCtx = lc.ctx, lc.ctx
	x.reqBuf, x.spare, x.emit, x.hdrs = lc.reqKeep[:0], lc.framer, lc.emit, &lc.hdrs
	lc.mu.Lock()
	lc.aborted = false
	lc.mu.Unlock()
	defer func() {
		x.finish()
		// The exchange has recorded its request: its copy of the body
		// serves the next one (see exchange.recordRequestLocked).
		if cap(x.reqBuf) <= 64<<10 {
			lc.reqKeep = x.reqBuf[:0]
		}
		if x.framer != nil { // closed by finish
			lc.framer = x.framer
		}
		*x = exchange{} // an idle connection holds nothing of it
	}()

	// The body is read whole, then sent; it is recorded while the
	// upstream works on it.
	var body []byte
	if req.ContentLength > 0 {
		var err error
		lc.body, err = readBody(req.Body, lc.body, int(req.ContentLength))
		body = lc.body
		if err != nil {
			x.requestBytes(body, false, time.Time{})
			lc.cancel(context.Canceled) // the client went away inside its body
			x.upstreamFailed(fmt.Errorf("reading the request body: %w", err))
			return false
		}
	}
	received := p.o.now()
	recorded := false
	recordBody := func() {
		if !recorded && body != nil {
			recorded = true
			x.requestBytes(body, true, received)
		}
	}
	x.sideRequests(body) // http_side.go: sessionless exchanges only
	lc.arm(false)
	x.markDispatched(body) // http_observe.go
	resp, err := lc.roundTrip(x, req, body, recordBody)
	recordBody()
	if err != nil {
		lc.disarm()
		if lc.ctx.Err() != nil {
			err = context.Cause(lc.ctx)
		}
		x.upstreamFailed(err)
		if lc.clientGone() || x.cutByShutdown() {
			return false // no answer: the connection closes
		}
		lc.writeError(http.StatusBadGateway, fmt.Sprintf("mcptape: upstream %s: %v", RedactURL(p.up.String()), err), req.Close)
		return !req.Close && x.writeErr == nil
	}
	http1.RemoveHopByHop(resp.Header)
	at := p.o.now()
	if req.Method == http.MethodGet {
		// A GET stream may be a legacy one, whose endpoint event is
		// rewritten: the recorder sees its bytes before they go out.
		x.response(resp, at)
		if x.streaming {
			lc.arm(true) // a stream: watch the client from now on
		}
	}
	clean := lc.copyResponse(x, req, resp, at)
	lc.disarm()
	lc.mu.Lock()
	if !clean || resp.Close || lc.aborted || (lc.up != nil && lc.up.BR.Buffered() > 0) {
		lc.closeUpstreamLocked()
	}
	gone := lc.gone
	lc.mu.Unlock()
	if lc.body != nil && cap(lc.body) > 64<<10 {
		lc.body = nil
	}
	return clean && !gone && !req.Close && x.writeErr == nil
}

// readBody reads an n-byte body from r into buf (reused), which grows
// only as bytes come: a client that announces a large body and sends
// little of it costs little. Short of n bytes, it returns what came and
// the error (io.ErrUnexpectedEOF for an early end).
func readBody(r io.Reader, buf []byte, n int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n-len(buf), max(len(buf), 4<<10)))
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil && len(buf) < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}

// roundTrip sends the request on the pinned upstream connection (dialled
// if there is none) and reads the response head. A request that met a
// connection the upstream had closed while idle is sent again on a new one
// when that is safe.
func (lc *leanConn) roundTrip(x *exchange, req *http.Request, body []byte, sent func()) (*http.Response, error) {
	host := req.Host
	if !lc.p.o.preserveHost && lc.namesProxy(host) {
		host = lc.p.up.Host
	}
	for attempt := 0; ; attempt++ {
		up, err := lc.upstream(x.ctx)
		if err != nil {
			return nil, err
		}
		reused, written := up.used, up.Written()
		up.used = true
		err = up.writeRequest(req, host, body)
		sent()
		if err == nil {
			var resp *http.Response
			if resp, err = up.ReadResponse(req, lc.interim); err == nil {
				if resp.StatusCode != http.StatusSwitchingProtocols {
					return resp, nil
				}
				err = errors.New("unexpected 101 Switching Protocols: no upgrade was asked for")
			}
		}
		lc.dropUpstream()
		if !reused || attempt > 0 || !retryable(req, err, up.Written() == written) || x.ctx.Err() != nil {
			return nil, err
		}
	}
}

// interim forwards an informational (1xx) response.
func (lc *leanConn) interim(resp *http.Response) error {
	http1.RemoveHopByHop(resp.Header)
	b := lc.bw.AvailableBuffer()
	b = appendStatusLine(b, resp.StatusCode)
	for name, values := range resp.Header {
		if suppressedHeader(resp.StatusCode, name) {
			continue
		}
		for _, v := range values {
			b = appendHeader(b, name, v)
		}
	}
	b = append(b, "\r\n"...)
	lc.bw.Write(b)
	return lc.bw.Flush()
}

// copyResponse writes the response head and streams its body to the
// client, handing each chunk to the recorder once written (and, for a
// streaming response, flushed). The response reaches the recorder
// (exchange.response) when its first bytes are out, unless it did before
// (at is when its head arrived). It reports whether the response ended
// cleanly, both connections still usable.
func (lc *leanConn) copyResponse(x *exchange, req *http.Request, resp *http.Response, at time.Time) bool {
	defer func() { resp.Body.Close() }() // exchange.response wraps it
	// A response whose framing says it has no body (by its status, or a
	// Content-Length of 0, event streams included) ends with its head:
	// waiting for more would hold up the next request on the connection.
	noBody := bodyless(req.Method, resp.StatusCode) || resp.ContentLength == 0
	chunked := !noBody && resp.ContentLength < 0
	x.assignSession(resp)
	_, err := lc.bw.Write(lc.appendHead(lc.bw.AvailableBuffer(), req, resp, chunked))
	if noBody || err != nil {
		if err == nil {
			err = lc.bw.Flush()
		}
		if !x.gotResp {
			x.response(resp, at)
		}
		x.forwarded(nil, time.Time{}, err)
		x.upEOF = noBody
		return err == nil
	}
	_, streaming := streamingResponse(resp)
	lc.mu.Lock()
	up := lc.up
	lc.mu.Unlock()
	if streaming {
		lc.waitFirstBytes(x, up)
	}
	bp := copyBuffers.Get().(*[]byte)
	defer func() { copyBuffers.Put(bp) }()
	var hook idleHook // recording waits while more is there (http_stream.go)
	if streaming && up != nil {
		if hook, _ = up.Raw.(idleHook); hook != nil {
			x.holdResp, lc.kept.x = !x.gotResp, x
			defer func() { hook.SetIdle(nil); lc.kept.hand(); lc.kept.x = nil }()
		}
	}
	for {
		if streaming && up != nil && up.BR.Buffered() == 0 && !holding(resp.Body) {
			// A stream may stay silent for long: wait for its next bytes
			// without holding a copy buffer.
			copyBuffers.Put(bp)
			up.BR.Peek(1) // an error comes again from Read
			bp = copyBuffers.Get().(*[]byte)
		}
		buf := *bp
		n, rerr := resp.Body.Read(buf)
		var werr error
		var sent time.Time
		if n > 0 {
			sent = lc.p.o.now() // before the client can have them: see exchange.forwarded
			werr = lc.writeBody(buf[:n], chunked)
		}
		if rerr == io.EOF && werr == nil && chunked {
			werr = lc.writeEnd(resp.Trailer)
		}
		if werr == nil && (streaming || rerr != nil || !x.gotResp) {
			werr = lc.bw.Flush()
		}
		if !x.gotResp {
			x.response(resp, at)
			switch {
			case rerr == io.EOF:
				x.upEOF = true
			case rerr != nil:
				x.upErr = rerr
			}
		}
		if hook != nil && x.decoder == nil && werr == nil && rerr == nil && n > 0 && len(lc.kept.buf)+n <= maxKept {
			lc.kept.add(buf[:n], sent)
			hook.SetIdle(lc.handKept)
			continue
		}
		lc.kept.hand()
		x.forwarded(buf[:n], sent, werr)
		switch {
		case werr != nil:
			return false
		case rerr == io.EOF:
			return true
		case rerr != nil:
			// The upstream broke off: what came was passed on, and the
			// client connection closes without ending the body, so that
			// the client sees the break.
			return false
		}
	}
}

// appendHead appends the response head for the client.
func (lc *leanConn) appendHead(b []byte, req *http.Request, resp *http.Response, chunked bool) []byte {
	b = appendStatusLine(b, resp.StatusCode)
	for name, values := range resp.Header {
		if chunked && name == "Content-Length" || suppressedHeader(resp.StatusCode, name) {
			continue
		}
		for _, v := range values {
			b = appendHeader(b, name, v)
		}
	}
	if resp.Header["Date"] == nil {
		b = appendHeader(b, "Date", time.Now().UTC().Format(http.TimeFormat))
	}
	if !chunked && resp.ContentLength >= 0 && resp.Header["Content-Length"] == nil && !bodyless(req.Method, resp.StatusCode) {
		b = appendHeader(b, "Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	if chunked {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		for name := range resp.Trailer {
			b = appendHeader(b, "Trailer", name)
		}
	}
	if req.Close {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...)
}

// writeEnd ends a chunked body, with the trailers.
func (lc *leanConn) writeEnd(trailer http.Header) error {
	lc.bw.WriteString("0\r\n")
	for name, values := range trailer {
		for _, v := range values {
			lc.bw.Write(appendHeader(lc.bw.AvailableBuffer(), name, v))
		}
	}
	_, err := lc.bw.WriteString("\r\n")
	return err
}

// writeBody writes response body bytes to the client.
func (lc *leanConn) writeBody(b []byte, chunked bool) error {
	if chunked {
		lc.bw.Write(strconv.AppendInt(lc.bw.AvailableBuffer(), int64(len(b)), 16))
		lc.bw.WriteString("\r\n")
	}
	_, err := lc.bw.Write(b)
	if chunked && err == nil {
		_, err = lc.bw.WriteString("\r\n")
	}
	return err
}

// writeError answers with a one-line plain text body.
func (lc *leanConn) writeError(code int, msg string, closing bool) {
	b := lc.bw.AvailableBuffer()
	b = appendStatusLine(b, code)
	b = appendHeader(b, "Content-Type", "text/plain; charset=utf-8")
	b = appendHeader(b, "X-Content-Type-Options", "nosniff")
	b = appendHeader(b, "Date", time.Now().UTC().Format(http.TimeFormat))
	b = appendHeader(b, "Content-Length", strconv.Itoa(len(msg)+1))
	if closing {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, msg...)
	b = append(b, '\n')
	lc.bw.Write(b)
	lc.bw.Flush()
}
