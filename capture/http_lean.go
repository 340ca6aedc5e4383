package capture

// The lean path of Serve. Each HTTP/1.1 client connection is served by one
// goroutine and pinned to an upstream connection of its own (keep-alive,
// one to one): the goroutine reads a request, writes it upstream, reads the
// response and writes it back, streaming event streams event by event,
// with the recording of http_exchange.go. No request crosses goroutines on
// its way, unlike net/http's server and Transport, where each exchange
// wakes several goroutines; on a loaded machine those wake-ups were most of
// what the proxy cost.
//
// What the lean path does not do, it hands over whole: a connection whose
// next request is not plain HTTP/1.1 with a body of known length (an
// upgrade, CONNECT, Expect, a chunked request body, HTTP/1.0, a malformed
// request) is given, that request included, to the net/http server running
// ServeHTTP, which keeps it.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Lean path limits.
const (
	// maxLeanBody is the largest request body the lean path reads before
	// sending it upstream; larger ones take the net/http path.
	maxLeanBody = 1 << 20
	// watchDelay is how long an exchange runs, at least, before the proxy
	// starts watching its client connection for a disconnect (GET streams
	// are watched at once); a client that goes away is noticed at most
	// twice this late. Exchanges shorter than this, nearly all of them,
	// pay nothing for the watch.
	watchDelay = 25 * time.Millisecond
	// checkIdle is how long an upstream connection must have been idle
	// before it is checked for a close by the upstream before reuse.
	checkIdle = 100 * time.Millisecond
	// leanIdleTimeout bounds the wait for a request (its head included),
	// leanHeaderTimeout the wait for a head on the net/http path.
	leanIdleTimeout   = 5 * time.Minute
	leanHeaderTimeout = 30 * time.Second
)

// aLongTimeAgo is a deadline in the past: it interrupts a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

// leanConn is one client connection on the lean path.
type leanConn struct {
	p      *HTTPProxy
	srv    *leanServer
	c      net.Conn
	tap    headTap
	br     *bufio.Reader
	bw     *bufio.Writer
	local  localAddr
	remote string
	body   []byte // request body buffer
	// ctx is the context of the connection's exchanges: cancelled with
	// errProxyClosing by Close, and when the client goes away (which ends
	// the connection). It carries http.LocalAddrContextKey.
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stopExit func() bool  // stops the abort at Close
	idle     atomic.Bool  // waiting for a request
	busy     atomic.Int64 // when the exchange started waiting (UnixNano), 0 when it is not

	mu      sync.Mutex
	up      *upstreamConn
	aborted bool // the exchange was cut: its upstream connection is closed
	// The watch of the client connection (see arm).
	armed  bool
	watchC chan struct{} // a watch runs; closed when it returns
	gone   bool          // the client went away
}

// headTap passes the client's bytes to the request parser and, while on,
// keeps a copy: the bytes of a request head to hand over to net/http.
type headTap struct {
	c   net.Conn
	on  bool
	buf []byte
}

func (t *headTap) Read(p []byte) (int, error) {
	n, err := t.c.Read(p)
	if t.on {
		t.buf = append(t.buf, p[:n]...)
	}
	return n, err
}

func newLeanConn(s *leanServer, c net.Conn) *leanConn {
	lc := &leanConn{p: s.p, srv: s, c: c, remote: c.RemoteAddr().String(), local: localAddrOf(c.LocalAddr())}
	lc.tap.c = c
	lc.br = bufio.NewReaderSize(&lc.tap, 4<<10)
	lc.bw = bufio.NewWriterSize(c, 4<<10)
	lc.ctx, lc.cancel = context.WithCancelCause(context.WithValue(s.p.closing, http.LocalAddrContextKey, c.LocalAddr()))
	lc.stopExit = context.AfterFunc(lc.ctx, lc.abortUpstream)
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
	for {
		if !lc.srv.setIdle(lc, true) {
			return
		}
		lc.c.SetReadDeadline(time.Now().Add(leanIdleTimeout))
		if _, err := lc.br.Peek(1); err != nil {
			return
		}
		lc.srv.setIdle(lc, false)
		lc.tap.buf = append(lc.tap.buf[:0], peekBuffered(lc.br)...)
		lc.tap.on = true
		req, err := http.ReadRequest(lc.br)
		lc.tap.on = false
		lc.c.SetReadDeadline(time.Time{})
		if err != nil || !leanable(req) {
			handedOver = lc.handOver()
			return
		}
		if !lc.exchange(req) {
			return
		}
	}
}

// peekBuffered returns the bytes br holds.
func peekBuffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return b
}

// leanable reports whether the lean path serves r.
func leanable(r *http.Request) bool {
	return r.ProtoMajor == 1 && r.ProtoMinor == 1 && r.Method != http.MethodConnect &&
		len(r.RequestURI) > 0 && r.RequestURI[0] == '/' &&
		r.Header["Upgrade"] == nil && r.Header["Expect"] == nil && r.Header["Trailer"] == nil &&
		r.TransferEncoding == nil && r.ContentLength >= 0 && r.ContentLength <= maxLeanBody
}

// handOver gives the connection, with the bytes of the request just read,
// to the net/http server; it reports whether that server took it.
func (lc *leanConn) handOver() bool {
	lc.dropUpstream()
	replay := append([]byte(nil), lc.tap.buf...)
	lc.tap.buf = nil
	return lc.srv.fallback.give(&replayConn{Conn: lc.c, pending: replay})
}

// replayConn is a client connection handed over with bytes already read.
type replayConn struct {
	net.Conn
	pending []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
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
	x := p.newExchange(req)
	x.ctx, x.clientCtx = lc.ctx, lc.ctx
	lc.mu.Lock()
	lc.aborted = false
	lc.mu.Unlock()
	defer x.finish()

	// The body is read whole, then sent; it is recorded while the
	// upstream works on it.
	var body []byte
	if req.ContentLength > 0 {
		if int64(cap(lc.body)) < req.ContentLength {
			lc.body = make([]byte, req.ContentLength)
		}
		body = lc.body[:req.ContentLength]
		if n, err := io.ReadFull(req.Body, body); err != nil {
			x.requestBytes(body[:n], false, time.Time{})
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
	lc.arm(false)
	resp, err := lc.roundTrip(x, req, body, recordBody)
	recordBody()
	if err != nil {
		lc.disarm()
		if lc.ctx.Err() != nil {
			err = context.Cause(lc.ctx)
		}
		x.upstreamFailed(err)
		if lc.clientGone() {
			return false
		}
		lc.writeError(http.StatusBadGateway, fmt.Sprintf("mcptape: upstream %s: %v", RedactURL(p.up.String()), err), req.Close)
		return !req.Close && x.writeErr == nil
	}
	removeHopByHop(resp.Header)
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
	if !clean || resp.Close || lc.aborted {
		lc.closeUpstreamLocked()
	} else if lc.up != nil {
		lc.up.idle = time.Now()
	}
	gone := lc.gone
	lc.mu.Unlock()
	if lc.body != nil && cap(lc.body) > 64<<10 {
		lc.body = nil
	}
	return clean && !gone && !req.Close && x.writeErr == nil
}

// roundTrip sends the request on the pinned upstream connection (dialled
// if there is none) and reads the response head. A request that met a
// connection the upstream had closed while idle is sent again on a new one
// when that is safe.
func (lc *leanConn) roundTrip(x *exchange, req *http.Request, body []byte, sent func()) (*http.Response, error) {
	host := req.Host
	if !lc.p.o.preserveHost && lc.p.hostNamesProxy(host, lc.local, false) {
		host = lc.p.up.Host
	}
	for attempt := 0; ; attempt++ {
		up, err := lc.upstream(x.ctx)
		if err != nil {
			return nil, err
		}
		reused := up.used
		up.used = true
		err = up.writeRequest(req, host, body)
		sent()
		if err == nil {
			var resp *http.Response
			if resp, err = up.readResponse(req, lc.interim); err == nil {
				return resp, nil
			}
		}
		lc.dropUpstream()
		if !reused || attempt > 0 || !retryableError(err) || !replayable(req) || x.ctx.Err() != nil {
			return nil, err
		}
	}
}

// upstream returns the connection's upstream connection, dialling one
// when there is none or the upstream closed it.
func (lc *leanConn) upstream(ctx context.Context) (*upstreamConn, error) {
	lc.mu.Lock()
	up := lc.up
	lc.mu.Unlock()
	if up != nil && up.used && time.Since(up.idle) >= checkIdle && !connAlive(up.raw) {
		lc.dropUpstream()
		up = nil
	}
	if up != nil {
		return up, nil
	}
	up, err := lc.p.dialUpstream(ctx)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.aborted {
		up.c.Close()
		return nil, errors.New("exchange cancelled")
	}
	lc.up = up
	return up, nil
}

// dropUpstream closes the upstream connection.
func (lc *leanConn) dropUpstream() {
	lc.mu.Lock()
	lc.closeUpstreamLocked()
	lc.mu.Unlock()
}

func (lc *leanConn) closeUpstreamLocked() {
	if lc.up != nil {
		lc.up.c.Close()
		lc.up = nil
	}
}

// abortUpstream cuts the exchange in progress: its upstream connection
// is closed, which ends any read or write on it.
func (lc *leanConn) abortUpstream() {
	lc.mu.Lock()
	lc.aborted = true
	if lc.up != nil {
		lc.up.c.Close()
	}
	lc.mu.Unlock()
}

// interim forwards an informational (1xx) response.
func (lc *leanConn) interim(resp *http.Response) error {
	removeHopByHop(resp.Header)
	b := lc.bw.AvailableBuffer()
	b = appendStatusLine(b, resp.StatusCode)
	for name, values := range resp.Header {
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
	noBody := bodyless(req.Method, resp.StatusCode)
	chunked := !noBody && resp.ContentLength < 0
	_, err := lc.bw.Write(lc.appendHead(lc.bw.AvailableBuffer(), req, resp, chunked))
	if noBody || err != nil {
		if err == nil {
			err = lc.bw.Flush()
		}
		if !x.gotResp {
			x.response(resp, at)
		}
		x.forwarded(nil, err)
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
	for {
		if streaming && up != nil && up.br.Buffered() == 0 && !holding(resp.Body) {
			// A stream may stay silent for long: wait for its next bytes
			// without holding a copy buffer.
			copyBuffers.Put(bp)
			up.br.Peek(1) // an error comes again from Read
			bp = copyBuffers.Get().(*[]byte)
		}
		buf := *bp
		n, rerr := resp.Body.Read(buf)
		var werr error
		if n > 0 {
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
		x.forwarded(buf[:n], werr)
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

// holding reports whether body has bytes of its own to return before it
// reads again: a legacy endpoint rewriter that holds some.
func holding(body io.Reader) bool {
	e, ok := body.(*endpointRewriter)
	return ok && (!e.done || len(e.held) > 0 || e.err != nil)
}

// appendHead appends the response head for the client.
func (lc *leanConn) appendHead(b []byte, req *http.Request, resp *http.Response, chunked bool) []byte {
	b = appendStatusLine(b, resp.StatusCode)
	for name, values := range resp.Header {
		if chunked && name == "Content-Length" {
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

// waitFirstBytes holds the head of a streaming response up to headerDelay
// for the first body bytes, so that both usually leave in one write; the
// head of a stream that stays silent is flushed alone.
func (lc *leanConn) waitFirstBytes(x *exchange, up *upstreamConn) {
	if up == nil || up.br.Buffered() > 0 {
		return
	}
	up.c.SetReadDeadline(time.Now().Add(headerDelay))
	_, err := up.br.Peek(1)
	up.c.SetReadDeadline(time.Time{})
	if err != nil {
		x.forwarded(nil, lc.bw.Flush())
	}
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
