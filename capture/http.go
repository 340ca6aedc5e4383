package capture

// The HTTP recording proxy: the proxy itself, forwarding and shutdown.
// Its options are in http_options.go. The recording of one exchange is in http_exchange.go, its
// bodies in http_body.go (compressed ones in http_decode.go), SSE handling
// in http_sse.go, sessions in http_session.go.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// HTTP proxy defaults.
const (
	// DefaultListen is the address "mcptape record" listens on in HTTP mode.
	DefaultListen = "127.0.0.1:8931"
	// DefaultShutdownGrace is how long Serve lets open exchanges finish
	// after its context ends before cancelling them.
	DefaultShutdownGrace = 2 * time.Second
)

// Stream names recorded in Record.Stream by the HTTP proxy.
const (
	StreamPOST   = "post"   // a POST body or the response to a POST
	StreamGET    = "get"    // a Streamable HTTP GET stream
	StreamSSE    = "sse"    // a legacy HTTP+SSE GET stream
	StreamDELETE = "delete" // a DELETE exchange
)

// EventSSE names the tape event that notes an SSE event carrying no message
// (Data: an [SSENote]).
const EventSSE = "sse"

// Who ended an exchange or a session ("closed_by" / "by" in the tape).
const (
	ClosedByServer = "server" // the upstream ended the response (or failed)
	ClosedByClient = "client" // the client went away or deleted the session
	ClosedByProxy  = "proxy"  // mcptape: shutdown, or no upstream answer
)

// errProxyClosing is the cancellation cause of exchanges cut by Close.
var errProxyClosing = errors.New("mcptape proxy shutting down")

// HTTPStats counts what an HTTPProxy did.
type HTTPStats struct {
	Exchanges      int64 // HTTP requests handled
	ClientMessages int64 // messages client to server: recorded, or left out by a method filter (those of sessions out of the sample are not even parsed, unless an observer counts them)
	ServerMessages int64 // messages server to client, counted alike
	UpstreamErrors int64 // exchanges that got no upstream response (502) or broke mid-stream
	RecordErrors   int64 // records the tape refused
	Unrecorded     int64 // records built and left out by WithSample or WithMethodFilter (forwarded all the same; an exchange known at once to be out of the sample builds none)
	Cut            int64 // messages recorded cut (forwarded whole)
	OpenSessions   int64 // sessions open in the tape now
	OpenStreams    int64 // event streams and bodies of unknown length being forwarded now
	OpenExchanges  int64 // requests being forwarded now (waiting for the upstream, or streaming its answer)
}

// HTTPProxy is a recording reverse proxy for MCP over HTTP: Streamable HTTP
// in every spec era (2025 sessions and 2026-07-28 stateless POSTs) and the
// legacy HTTP+SSE transport. Its methods are safe for concurrent use.
//
// Serve runs it on a listener, on one of two paths that forward and record
// alike. The lean path (http_lean.go) serves a plain HTTP/1.1 client
// connection on one goroutine over an upstream connection of its own; the
// proxy is also an http.Handler built on net/http/httputil.ReverseProxy,
// which serves the rest: requests the lean path hands over with their
// connection (upgrades, Expect, chunked request bodies, HTTP/1.0,
// malformed requests), every request when the proxy has its own transport
// (WithTransport) or the upstream is reached through an HTTP proxy from
// the environment, and callers that serve ServeHTTP themselves.
//
//	client ──▶ lean connection / ServeHTTP ──▶ request body ──▶ upstream
//	client ◀── (legacy endpoint rewrite) ◀── upstream body
//	      │ after each chunk is written (and flushed) to the client
//	      ▼
//	  transport.SSEFramer / whole JSON body ──▶ tape records
//
// Forwarding. Paths and queries are forwarded as they are: the upstream URL
// gives the scheme and host, and its path is the endpoint the client uses
// at the proxy too. A response chunk reaches the client (written, and for
// event streams flushed) before the recorder parses its copy; request
// bodies are teed while the transport sends them (on the lean path, a body
// of known length, up to 1 MiB, is read whole, sent, and recorded while
// the upstream works on it). Recording never alters
// the forwarded bytes. The only changes made to the traffic are those HTTP
// requires of a proxy (hop-by-hop headers; X-Forwarded-* and Forwarded are
// passed on as the client sent them, none are added) plus two that keep
// the client on the proxy: a Host header that names the proxy itself
// becomes the upstream's host (unless WithPreserveHost), and a legacy
// "endpoint" event that names the upstream by absolute URL is rewritten to
// name the proxy. Any other Host value, and Origin, reach the upstream
// unchanged, so an upstream that rejects DNS-rebinding or cross-origin
// requests still rejects them. (A browser client whose upstream compares
// Origin with Host needs WithPreserveHost.) Response headers that arrive
// alone wait up to a millisecond for the first body bytes, so that they
// usually leave in one write with the first event. Request bodies stay
// readable after the response has started (full duplex), which a fast
// upstream needs. A response without a Date header gets one, as net/http
// gives it. The client's Accept-Encoding is forwarded as it is; a
// gzip or deflate body is forwarded compressed and recorded decoded, as a
// stream and within bounds (WithMaxDecoded, WithDecodeBudget; see
// http_decode.go).
//
// Records. Every HTTP request is one exchange, numbered from 1
// (Record.Exchange). Its records: the client's messages (the POST body;
// each member of a batch is one message), an "http" event when the
// response headers arrive (an HTTPEvent, Phase "response": method, path,
// status, content type, redacted headers), the server's messages (an
// application/json body, or one per SSE event with data, with its event
// id), "sse" notes for events without a message (an SSENote: comments,
// priming events, retry settings, the legacy endpoint), "error" events, and
// an "http" event when the exchange ends (Phase "end": duration, who closed
// it, counts; a body that is not JSON, such as an error page, is kept
// there). Record.Stream names the stream: "post", "get" (a Streamable HTTP
// GET stream), "sse" (a legacy HTTP+SSE stream), "delete", or the
// lower-cased method.
//
// Sessions. Records are grouped in sessions (Record.Session):
//
//   - A request carrying Mcp-Session-Id belongs to that session.
//   - A request without one whose response sets Mcp-Session-Id (the
//     initialize exchange) belongs to the session the server assigned; its
//     client messages are recorded when the response headers arrive, with
//     the time their body was received.
//   - Legacy HTTP+SSE: the GET stream belongs to the session named by the
//     sessionId (or session_id) query parameter of its "endpoint" event,
//     and the POSTs to the endpoint carry the same parameter. Events
//     before the endpoint event (keep-alive comments) are held and
//     recorded in that session, with their times, once it is known; a GET
//     event stream without a session whose first 64 events carry neither
//     a message nor an endpoint is grouped by connection.
//   - Anything else (2026-07-28 stateless traffic, servers without
//     sessions) is grouped by client TCP connection: session "conn-N", N
//     counting connections. A client process normally keeps one keep-alive
//     connection, so its requests stay together and in order, while
//     requests of different clients, which never depend on each other, are
//     never merged. The session closes when the connection does.
//   - Side streams (the LangGraph docs' dialect: POSTs without a session,
//     the server's messages on a GET event stream at another path, such
//     as /mcp/stream): an answer arriving on a sessionless GET stream is
//     recorded in the session of the request it answers, from the same
//     client host, while that request is in flight (see http_side.go);
//     the rest of the stream stays in its connection's session.
//   - Cancels on another connection (a client with a pool of
//     connections): a sessionless notifications/cancelled naming a
//     sessionless request of the same client host in flight on another
//     connection is recorded in that request's session, after it (see
//     http_side.go); its POST's "http" events stay in its own session.
//
// An "open" event (an HTTPSessionEvent: kind "streamable", "legacy-sse" or
// "connection", and how it was learned) precedes a session's first record;
// a "close" event ends it: after a successful DELETE, when the server
// answers 404 for it, when a legacy stream ends, when a grouping connection
// closes, or at shutdown (closed by the proxy).
//
// Cancellation. Each exchange runs under the client request's context: a
// client that closes its response stream (the 2026-07-28 cancellation) or
// disconnects cancels the upstream request, and the "end" event says
// closed_by "client". On the lean path that is at once for a GET stream
// and for a response that is being written; an exchange still waiting for
// its answer starts watching its client after 25 to 50 ms, so that the
// many short exchanges pay nothing for the watch, and its cancellation
// reaches the upstream that much later. An upstream that fails before answering gets
// the client a 502 with a one-line body; one that breaks mid-stream ends
// the client's stream; both leave "error" events, and the proxy keeps
// serving. A request body whose framing breaks gets a 400 instead, and
// its connection closes after the answer (see http_refusal.go).
type HTTPProxy struct {
	up   *url.URL
	rec  RecordWriter
	o    httpOptions
	rp   *httputil.ReverseProxy
	idle interface{ CloseIdleConnections() }
	lean bool // Serve uses the lean path (http_lean.go)

	decode *decodeBudget // bounds decoded bodies (http_decode.go)

	closing   context.Context // cancelled by Close: cuts every open exchange
	stop      context.CancelFunc
	mu        sync.Mutex // guards closed and wg.Add
	closed    bool
	wg        sync.WaitGroup // running handlers
	closeOnce sync.Once

	sessions sessionRegistry
	side     sideStreams   // answers on sessionless GET streams (http_side.go)
	methods  methodTable   // requests in flight, for the observer (http_methods.go)
	filter   *recordFilter // nil: every record is kept (http_filter.go)
	nextX    atomic.Uint64
	warned   atomic.Bool
	st       struct {
		exchanges, c2s, s2c, upstreamErrs, recordErrs, unrecorded, cut, streams atomic.Int64
		// ended counts the exchanges whose recording is over, the
		// session's close included (exchange.finish returned).
		ended atomic.Int64
	}

	// acceptWarned is set once a failed Accept was reported.
	acceptWarned atomic.Bool
}

// NewHTTPProxy returns a proxy to upstream, an absolute http or https URL,
// recording into rec.
func NewHTTPProxy(upstream string, rec RecordWriter, opts ...HTTPOption) (*HTTPProxy, error) {
	up, err := parseUpstream(upstream)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, errors.New("capture: nil RecordWriter")
	}
	o := httpOptions{maxBody: transport.DefaultMaxFrame, maxDecoded: DefaultMaxDecoded, decodeBudget: DefaultDecodeBudget,
		now: time.Now, grace: DefaultShutdownGrace, headTimeout: leanHeaderTimeout}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("capture: http option: %w", err)
		}
	}
	if o.transport != nil && o.insecure {
		return nil, errors.New("capture: http option: WithInsecureTLS applies to the default transport, not to WithTransport's")
	}
	if o.warnf == nil {
		o.warnf = func(string, ...any) {}
	}
	if o.debugf == nil {
		o.debugf = func(string, ...any) {}
	}
	lean := o.transport == nil && !o.netHTTPOnly
	if o.transport == nil {
		t := defaultTransport(o.insecure)
		if u, err := t.Proxy(&http.Request{URL: up}); err != nil || u != nil {
			lean = false // the lean path does not go through HTTP proxies
		}
		o.transport = t
	}
	o.redact.known, o.redact.count = new(sync.Map), new(atomic.Int64)
	p := &HTTPProxy{up: up, rec: rec, o: o, lean: lean, decode: newDecodeBudget(min(o.maxDecoded, o.maxBody), o.decodeBudget),
		filter: newRecordFilter(&o)}
	closing, stop := context.WithCancelCause(context.Background())
	p.closing, p.stop = closing, func() { stop(errProxyClosing) }
	p.sessions.init()
	p.methods.obs = o.obs
	if c, ok := o.transport.(interface{ CloseIdleConnections() }); ok {
		p.idle = c
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      o.transport,
		FlushInterval:  0, // event streams and bodies of unknown length are flushed at once anyway
		ErrorLog:       log.New(logWriter(o.debugf), "", 0),
		BufferPool:     bufferPool{},
		ModifyResponse: p.onResponse,
		ErrorHandler:   p.onError,
	}
	return p, nil
}

// parseUpstream checks an upstream URL.
func parseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("capture: upstream %q: %w", RedactURL(s), err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("capture: upstream %q: want an http:// or https:// URL", RedactURL(s))
	case u.Host == "":
		return nil, fmt.Errorf("capture: upstream %q: no host", RedactURL(s))
	}
	return u, nil
}

// defaultTransport is http.DefaultTransport tuned for a proxy: the
// client's Accept-Encoding is forwarded as it is (no transparent gzip), and
// many idle connections are kept for many sessions.
func defaultTransport(insecure bool) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = 1024
	if insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
	}
	return t
}

// logWriter turns the ReverseProxy's log lines into debug lines.
type logWriter func(string, ...any)

func (f logWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// bufferPool gives the ReverseProxy 4 KiB copy buffers (the size of
// net/http's own connection buffers), so that a thousand idle streams do
// not each pin 32 KiB.
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }

// Upstream returns the upstream URL.
func (p *HTTPProxy) Upstream() *url.URL { u := *p.up; return &u }

// Stats returns what the proxy did so far.
func (p *HTTPProxy) Stats() HTTPStats {
	return HTTPStats{
		Exchanges:      p.st.exchanges.Load(),
		ClientMessages: p.st.c2s.Load(),
		ServerMessages: p.st.s2c.Load(),
		UpstreamErrors: p.st.upstreamErrs.Load(),
		RecordErrors:   p.st.recordErrs.Load(),
		Unrecorded:     p.st.unrecorded.Load(),
		Cut:            p.st.cut.Load(),
		OpenSessions:   p.sessions.openCount(),
		OpenStreams:    p.st.streams.Load(),
		OpenExchanges:  p.st.exchanges.Load() - p.st.ended.Load(),
	}
}

// ServeHTTP forwards one request to the upstream and records it.
func (p *HTTPProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "mcptape: the recording proxy is shutting down", http.StatusServiceUnavailable)
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()

	x := p.newExchange(r)
	ctx, cancel := context.WithCancelCause(context.WithValue(r.Context(), exchangeKey{}, x))
	stop := context.AfterFunc(p.closing, func() { cancel(errProxyClosing) })
	defer func() {
		stop()
		cancel(nil)
	}()
	x.ctx = ctx
	r = r.WithContext(ctx)
	rc := http.NewResponseController(w)
	var guard *bodyGuard
	if r.Body != nil && r.Body != http.NoBody {
		guard = &bodyGuard{rc: r.Body}
		x.tee = &requestTee{rc: guard, x: x, left: r.ContentLength}
		r.Body = x.tee
		// Keep the request body readable once the response has started:
		// a fast upstream may answer before the transport has seen the
		// body's end, and net/http would otherwise close the body when
		// the response headers go out, breaking the upstream request.
		_ = rc.EnableFullDuplex() // HTTP/2 is always full duplex
	}
	xw := &exchangeWriter{rw: w, x: x, rc: rc}
	defer x.finish() // also when the ReverseProxy aborts with http.ErrAbortHandler
	defer xw.close()
	p.rp.ServeHTTP(xw, r)
	xw.close()
	if guard != nil {
		// A body whose framing broke ends the connection (http_refusal.go).
		// (After a panic, http.ErrAbortHandler, net/http closes it.)
		p.settleBody(w, r, guard)
	}
}

// forwardingHeaders are restored after ReverseProxy's Rewrite mode strips
// them: the client's values reach the upstream unchanged, and the proxy adds
// none of its own.
var forwardingHeaders = [...]string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

// rewrite points the outgoing request at the upstream.
func (p *HTTPProxy) rewrite(pr *httputil.ProxyRequest) {
	in, out := pr.In, pr.Out
	if x := exchangeFrom(in.Context()); x != nil {
		x.markDispatched(nil) // http_observe.go; the body is noted as read (requestBytes)
	}
	out.URL.Scheme, out.URL.Host = p.up.Scheme, p.up.Host
	out.URL.RawQuery = in.URL.RawQuery // ReverseProxy drops parameters it cannot parse
	out.Host = in.Host
	if !p.o.preserveHost && p.namesProxy(in) {
		out.Host = p.up.Host
	}
	for _, h := range forwardingHeaders {
		if v, ok := in.Header[h]; ok {
			out.Header[h] = v
		}
	}
}

// onError answers an exchange whose upstream request failed: 502 with a
// one-line body, an "error" event in the tape. A request the client itself
// abandoned is recorded as closed by the client, not as an upstream error;
// one the proxy's shutdown cut gets no answer (the connection is closed:
// http.ErrAbortHandler), as the tape records.
func (p *HTTPProxy) onError(w http.ResponseWriter, r *http.Request, err error) {
	x := exchangeFrom(r.Context())
	if x == nil { // not ours: cannot happen, answer anyway
		http.Error(w, "mcptape: upstream request failed", http.StatusBadGateway)
		return
	}
	if x.tee != nil && p.refuseBody(w, x) {
		return
	}
	x.upstreamFailed(err)
	if x.cutByShutdown() {
		panic(http.ErrAbortHandler) // ServeHTTP's deferred finish records the end
	}
	msg := fmt.Sprintf("mcptape: upstream %s: %v", RedactURL(p.up.String()), err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusBadGateway)
	io.WriteString(w, msg+"\n")
}

// Close ends the proxy: it refuses new requests (503), cancels the open
// exchanges, waits for their handlers to return, writes a "close" event for
// every session still open and closes idle upstream connections. It does
// not close the tape. It is idempotent. A handler blocked writing to a
// client that stopped reading returns when its connection is closed:
// Serve closes them; a caller serving the proxy with its own http.Server
// should close that server first.
func (p *HTTPProxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.stop()
		p.wg.Wait()
		p.sessions.closeAll(p, ClosedByProxy, "shutdown")
		if p.idle != nil {
			p.idle.CloseIdleConnections()
		}
	})
	return nil
}

// write hands one record to the tape. A failure never affects forwarding:
// it is counted, and the first one is reported through warnf.
func (p *HTTPProxy) write(r *tape.Record) {
	if p.filter != nil && !p.filter.keep(r) {
		p.st.unrecorded.Add(1)
		return
	}
	if err := p.rec.Write(r); err != nil {
		p.st.recordErrs.Add(1)
		if !p.warned.Swap(true) {
			p.o.warnf("recording failed, the tape misses records from now on: %v", err)
		}
	}
}
