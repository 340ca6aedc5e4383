package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/httphead"
	"github.com/mcptape/mcptape/jsonrpc"
)

// HTTPConn is a Conn to an MCP server over HTTP: the Streamable HTTP
// transport (DialHTTP) or the legacy HTTP+SSE transport (DialLegacySSE).
//
// Streamable HTTP, as the connection handles it:
//
//   - Every frame is one POST with "Accept: application/json,
//     text/event-stream" and "Content-Type: application/json". A JSON
//     answer is one frame; each event of an event-stream answer whose data
//     is not blank is one frame (priming events, comments and events of
//     other types than "message" carry none); a 202 carries none.
//   - Sessions (2025-03-26 .. 2025-11-25): the Mcp-Session-Id of the answer
//     to initialize is sent on every later request, initialize excepted.
//     A 404, or a 400 that says the session is unknown, to a request that
//     carried it makes Send fail with an error wrapping ErrSessionExpired
//     and forgets the id; send initialize again to get a new session.
//   - Protocol version: the result.protocolVersion of the answer to
//     initialize (or WithProtocolVersion until then) goes in the
//     MCP-Protocol-Version header of every later request.
//   - 2026-07-28 (stateless): for any request or notification whose
//     params._meta holds "io.modelcontextprotocol/protocolVersion", that
//     version is the MCP-Protocol-Version header; from that version on,
//     Mcp-Method and Mcp-Name are derived from the body (see
//     StandardHeaders). Such servers set no session id, so none is sent,
//     and Close sends no DELETE.
//   - The GET stream of server-initiated messages is opened by
//     OpenGetStream (or WithGetStream); Close sends DELETE for a session
//     (unless WithoutDelete) and ends every stream.
//
// See Conn for the concurrency contract.
type HTTPConn struct {
	client    *http.Client
	ownClient bool
	lean      *leanTransport // the client's lean transport, when requests may skip http.Client
	// postHost is the lean path's pool of the POST URL, set with it when
	// the connection's own headers are valid and change nothing of how a
	// request is sent (no Host, Expect, Connection): a POST whose other
	// headers are valid too then skips the lean path's look-up and checks
	// (leanTransport.roundTrip). nil: none skipped.
	postHost    *leanHost
	plainHeader bool        // header is as postHost needs
	redirects   atomic.Bool // the server redirected a request: always use http.Client
	legacy      bool
	base        *url.URL      // the endpoint (Streamable HTTP) or the /sse URL (legacy)
	post        *http.Request // template of the POSTs: method and URL
	postURL     string        // the POST URL, for messages
	header      http.Header   // headers added to every request
	accept      []string
	ctype       []string
	version0    string // WithProtocolVersion
	autoGet     bool
	noDelete    bool
	noHeads     bool // WithoutAnswerHeaders
	grace       time.Duration
	stopNow     context.Context // WithStopNow: cuts the wait for DELETE's answer
	max         int

	ctx    context.Context // ends at Close, ending every exchange
	cancel context.CancelCauseFunc
	in     *inbox
	seq    atomic.Uint64
	wg     sync.WaitGroup // stream readers and the GET opener

	mu       sync.Mutex
	closed   bool
	session  string
	sessionH []string // session as a header value
	version  string   // negotiated version
	versionH []string // the version sent, as a header value (versionHLocked)
	getEx    *Exchange
	getting  bool                   // a GET stream is being opened
	live     map[*Exchange]struct{} // exchanges in progress: Close cancels them
	watch    sendWatch              // of a Send context (coverLocked)

	side *sideStream // WithStreamPath

	closeOnce sync.Once
	closeErr  error
}

var _ Conn = (*HTTPConn)(nil)

// DialHTTP returns a Streamable HTTP connection to the MCP endpoint at
// rawURL (such as http://127.0.0.1:3000/mcp). Nothing is sent until the
// first Send; ctx is only checked. Options: WithHTTPClient, WithHeader,
// WithProtocolVersion, WithGetStream, WithoutDelete, WithGrace,
// WithMaxFrame.
func DialHTTP(ctx context.Context, rawURL string, opts ...Option) (*HTTPConn, error) {
	o, err := newOptions("DialHTTP", forHTTP, opts)
	if err != nil {
		return nil, err
	}
	u, err := parseHTTPURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("transport: DialHTTP: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("transport: DialHTTP %s: %w", u.Redacted(), err)
	}
	c, err := newHTTPConn(o, u, false)
	if err != nil {
		return nil, fmt.Errorf("transport: DialHTTP: %w", err)
	}
	c.setPostURL(u)
	if o.streamPath != "" {
		c.side = newSideStream(u, o.streamPath)
	}
	return c, nil
}

// parseHTTPURL parses an absolute http or https URL.
func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL %q is not an absolute http or https URL", raw)
	}
	return u, nil
}

func newHTTPConn(o *options, base *url.URL, legacy bool) (*HTTPConn, error) {
	c := &HTTPConn{
		client: o.client, legacy: legacy, base: base, header: o.header,
		accept:   []string{"application/json, text/event-stream"},
		ctype:    []string{"application/json"},
		version0: o.version, autoGet: o.getStrm, noDelete: o.noDelete, noHeads: o.noHeads,
		grace: o.grace, stopNow: o.stopNow, max: o.maxFrame,
		in:   newInbox(streamQueueLimit),
		live: make(map[*Exchange]struct{}),
	}
	if c.client == nil {
		client, err := NewHTTPClient(0)
		if err != nil {
			return nil, err
		}
		c.client, c.ownClient = client, true
	}
	if lt, ok := c.client.Transport.(*leanTransport); ok && c.client.Jar == nil && c.client.Timeout == 0 && c.client.CheckRedirect == nil {
		c.lean = lt
		c.plainHeader = plainHeader(c.header)
	}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	return c, nil
}

// setPostURL sets where frames are POSTed.
func (c *HTTPConn) setPostURL(u *url.URL) {
	c.post = &http.Request{
		Method: http.MethodPost, URL: u, Host: u.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}
	c.postURL = u.Redacted()
	c.postHost = nil
	if c.plainHeader {
		c.postHost = c.lean.leanHost(c.post)
	}
}

// plainHeader reports whether the connection's headers h are valid
// (their names are, see WithHeader) and hold none that changes how the
// lean path sends a request (see HTTPConn.postHost).
func plainHeader(h http.Header) bool {
	for k, vs := range h {
		switch k {
		case "Host", "Expect", "Connection":
			return false
		}
		for _, v := range vs {
			if !httphead.ValidValue(v) {
				return false
			}
		}
	}
	return true
}

// SessionID returns the session id the server gave in its answer to
// initialize, or "" (before initialize, after the session expired, for
// stateless servers and for legacy SSE).
func (c *HTTPConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// ProtocolVersion returns the version sent in MCP-Protocol-Version: the
// one negotiated by initialize, else the one of WithProtocolVersion, else "".
func (c *HTTPConn) ProtocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.versionLocked()
}

// versionHLocked returns versionLocked as a header value (nil for ""),
// the same slice while the version stays; c.mu is held.
func (c *HTTPConn) versionHLocked() []string {
	v := c.versionLocked()
	if v == "" {
		return nil
	}
	if len(c.versionH) == 0 || c.versionH[0] != v {
		c.versionH = []string{v}
	}
	return c.versionH
}

func (c *HTTPConn) versionLocked() string {
	if c.version != "" {
		return c.version
	}
	return c.version0
}

// Endpoint returns the URL frames are POSTed to (for legacy SSE, the one
// the server's endpoint event gave).
func (c *HTTPConn) Endpoint() string { return c.postURL }

// GetStream returns the exchange of the server-initiated stream: the GET
// stream opened by OpenGetStream or WithGetStream, or the legacy /sse
// stream; nil when none was opened.
func (c *HTTPConn) GetStream() *Exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getEx
}

// reqInfo says how to handle the answer to one request.
type reqInfo struct {
	method    string                // HTTP method
	url       string                // for messages
	stream    Stream                // the stream frames of the answer arrive on
	initKey   string                // id key of an initialize request, "" otherwise
	session   string                // the Mcp-Session-Id sent, if any
	needsBody bool                  // a 2xx answer must be JSON or an event stream
	onEvent   func(*SSEEvent) error // events of types other than "message"
	onEnd     func(error)           // called when an event stream ended
	keep      func([]byte) bool     // when set, sees every message first; false drops it
	// keepRefusal: the body of a non-2xx answer is not queued (SendOptions.KeepRefusal)
	keepRefusal bool
}

// Send POSTs frame; see Conn.Send and HTTPConn. The error is a
// *StatusError for a non-2xx answer (the Exchange is then returned too);
// the Exchange is nil when no answer arrived.
func (c *HTTPConn) Send(ctx context.Context, frame []byte, opt SendOptions) (*Exchange, error) {
	if c.ctx.Err() != nil {
		return nil, ErrClosed
	}
	info := jsonrpc.Classify(frame)
	ri := reqInfo{method: http.MethodPost, url: c.postURL, stream: StreamPOST, keepRefusal: opt.KeepRefusal}
	ri.needsBody = info.Kind == jsonrpc.KindRequest || info.Kind == jsonrpc.KindBatch
	isInit := info.Kind == jsonrpc.KindRequest && info.Method == "initialize"
	if isInit {
		ri.initKey = info.ID.Key()
	}
	if c.side != nil {
		if err := c.openSide(ctx); err != nil {
			return nil, err
		}
		c.side.sent(frame, &info)
		ri.keep = c.side.keepPOST
	}

	p := newPost()
	h := p.header
	host := c.postHost // nil once a header calls for the lean path's checks
	h["Accept"], h["Content-Type"] = c.accept, c.ctype
	for k, v := range c.header {
		h[k] = v
	}
	if !c.legacy {
		c.mu.Lock()
		sessionH, versionH := c.sessionH, c.versionHLocked()
		c.mu.Unlock()
		if isInit {
			sessionH, versionH = nil, nil
		}
		if sessionH != nil {
			h[HeaderSessionID] = sessionH
		}
		version := setStandardHeaders(h, frame, &info, versionH)
		if (len(sessionH) > 0 && !httphead.ValidValue(sessionH[0])) || !httphead.ValidValue(version) {
			host = nil // the server's or the frame's: the lean path checks them
		}
	}
	if len(opt.Header) > 0 {
		host = nil
	}
	for k, v := range opt.Header {
		h[http.CanonicalHeaderKey(k)] = v
	}
	if v := h[HeaderSessionID]; len(v) > 0 {
		ri.session = v[0]
	}

	ex := &Exchange{ID: c.seq.Add(1), Method: http.MethodPost, Sent: time.Now(), reuseHead: c.noHeads}
	if opt.Written != nil {
		ex.wrote = sync.OnceFunc(opt.Written)
	}
	c.startExchange(ctx, ex, opt.Deadline)
	resp, lean, err := c.do(p.request(c.post, frame), ex, host)
	if err == nil && ex.wrote != nil {
		ex.wrote() // the answer's head came: a transport that reports no write is past it
	}
	if err != nil {
		c.endExchange(ex)
		if lean {
			p.free()
		}
		if c.side != nil {
			c.side.unsent(frame, &info)
		}
		return nil, c.requestError(ex, err)
	}
	ex, err = c.handle(ex, resp, &ri)
	if lean && ex.ContentType != "text/event-stream" {
		p.free() // the answer is read: the lean path is done with the request
	}
	if err == nil && c.autoGet && info.Kind == jsonrpc.KindNotification && info.Method == "notifications/initialized" {
		c.openGetInBackground()
	}
	return ex, err
}

// Recv returns the next frame from any of the connection's streams. See
// Conn.
func (c *HTTPConn) Recv(ctx context.Context) (Incoming, error) {
	return c.in.get(ctx)
}

// do sends req, the request of ex (nil: req's context governs it); lean
// reports that the lean path carried it, and nothing else holds it. A
// client made by NewHTTPClient with default settings takes its lean path
// directly, skipping http.Client's bookkeeping (header copies for
// redirects...); a redirect answer then sends the request again through
// http.Client, which follows it, and so do all later requests of the
// connection.
func (c *HTTPConn) do(req *http.Request, ex *Exchange, host *leanHost) (resp *http.Response, lean bool, err error) {
	if c.lean == nil || c.redirects.Load() {
		resp, err = c.client.Do(withExchange(req, ex))
		return resp, false, err
	}
	resp, lean, err = c.lean.roundTrip(req, ex, host)
	if err != nil {
		return nil, lean, &url.Error{Op: req.Method[:1] + strings.ToLower(req.Method[1:]), URL: req.URL.Redacted(), Err: err}
	}
	if isRedirect(resp) {
		resp.Body.Close()
		c.redirects.Store(true)
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, false, err
			}
			req.Body = body
		}
		resp, err = c.client.Do(withExchange(req, ex))
		return resp, false, err
	}
	return resp, lean, nil
}

// withExchange returns req for net/http: with the context of ex (req
// itself when ex is nil), and a Send's frame copied (detach).
func withExchange(req *http.Request, ex *Exchange) *http.Request {
	detach(req)
	if ex == nil {
		return req
	}
	ctx := ex.context()
	if wrote := ex.wrote; wrote != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) {
			if w.Err == nil {
				wrote()
			}
		}})
	}
	return req.WithContext(ctx)
}

// isRedirect reports whether http.Client would follow resp.
func isRedirect(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return resp.Header.Get("Location") != ""
	}
	return false
}

// startExchange starts the end of ex, an exchange of a Send with ctx and
// deadline (see http_exchange.go), and keeps ex in the set of exchanges
// in progress, which Close aborts, until endExchange. Neither costs a
// context, a timer or a registration with ctx: that is what an exchange
// pays for on the hot path.
func (c *HTTPConn) startExchange(ctx context.Context, ex *Exchange, deadline time.Time) {
	ex.begin(ctx, deadline)
	c.mu.Lock()
	closed := c.closed
	watch, unwatch := false, (func() bool)(nil)
	if !closed {
		c.live[ex] = struct{}{}
		watch, unwatch = c.coverLocked(ctx, ex)
	}
	gen := c.watch.gen
	c.mu.Unlock()
	if closed {
		ex.abort(ErrClosed)
	}
	if unwatch != nil {
		unwatch()
	}
	if watch {
		c.watchSendContext(ctx, gen)
	}
}

// endExchange frees what startExchange took, once ex is complete.
func (c *HTTPConn) endExchange(ex *Exchange) {
	c.mu.Lock()
	delete(c.live, ex)
	c.uncoverLocked(ex)
	c.mu.Unlock()
	ex.release()
}

// setHeader sets the request's headers; a Host header (from WithHeader or
// SendOptions) becomes the request's Host, as net/http ignores the header.
func setHeader(req *http.Request, h http.Header) {
	req.Header = h
	if v := h["Host"]; len(v) > 0 {
		req.Host = v[0]
	}
}

// requestError describes a request that got no answer.
func (c *HTTPConn) requestError(ex *Exchange, err error) error {
	if cause := ex.cause(); cause != nil && (errors.Is(cause, ErrClosed) || errors.Is(cause, ErrStreamClosed)) {
		return cause
	}
	return fmt.Errorf("transport: %w", err) // *url.Error names the method and URL
}

// handle reads or starts reading the answer to a request. It returns the
// exchange, and a *StatusError for a non-2xx status.
//
// Once the body is read to its end, resp may be the memory of another
// answer (Exchange.reuseHead): only the body, taken before, is read then.
func (c *HTTPConn) handle(ex *Exchange, resp *http.Response, ri *reqInfo) (*Exchange, error) {
	ex.Responded = time.Now()
	ex.Status = resp.StatusCode
	if !ex.reuseHead {
		ex.Header = resp.Header
	}
	ex.ContentType = mediaType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if ok && ri.initKey != "" {
		c.noteSession(resp.Header.Get(HeaderSessionID))
	}
	switch {
	case ok && ex.ContentType == "text/event-stream":
		if !c.startStream() {
			resp.Body.Close()
			c.endExchange(ex)
			ex.finish(ErrClosed)
			return ex, ErrClosed
		}
		go c.readStream(ex, resp.Body, *ri)
		return ex, nil
	case ok && isJSONType(ex.ContentType):
		return ex, c.readJSON(ex, resp.Body, resp.ContentLength, ri)
	}
	rb := resp.Body
	body, err := readCapped(rb, MaxErrorBody)
	rb.Close()
	c.endExchange(ex)
	ex.Body = body
	if err != nil {
		err = c.readError(ex, ri, err)
		ex.finish(err)
		return ex, err
	}
	if ok {
		ex.finish(nil)
		if ri.needsBody && len(bytes.TrimSpace(body)) > 0 && !c.legacy {
			return ex, fmt.Errorf("transport: %s %s: %d with unexpected content type %q", ri.method, ri.url, ex.Status, ex.ContentType)
		}
		return ex, nil
	}
	if isJSONType(ex.ContentType) && isMessage(body) && !ri.keepRefusal {
		c.in.put(Incoming{Frame: body, Exchange: ex.ID, Stream: ri.stream, Time: ex.Responded})
		ex.frames = 1
	}
	ex.finish(nil)
	se := &StatusError{Method: ri.method, URL: ri.url, Status: ex.Status, Body: body}
	if ri.session != "" && sessionExpired(ex.Status, body) {
		se.Expired = true
		c.forgetSession(ri.session)
	}
	return ex, se
}

// readJSON reads a JSON answer, the body rb of the announced length (-1:
// unknown), and queues it as one frame.
func (c *HTTPConn) readJSON(ex *Exchange, rb io.ReadCloser, length int64, ri *reqInfo) error {
	body, truncated, err := readBody(rb, length, c.max)
	rb.Close()
	c.endExchange(ex)
	if err != nil {
		err = c.readError(ex, ri, err)
		ex.finish(err)
		return err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if ri.initKey != "" {
			c.noteVersion(body)
		}
		if ri.keep != nil {
			ri.keep(body)
		}
		now := time.Now()
		c.in.put(Incoming{Frame: body, Exchange: ex.ID, Stream: ri.stream, Time: now, Truncated: truncated})
		ex.frames = 1
		ex.finishAt(nil, now)
		return nil
	}
	ex.finish(nil)
	return nil
}

// readError describes a failure to read an answer's body.
func (c *HTTPConn) readError(ex *Exchange, ri *reqInfo, err error) error {
	if cause := ex.cause(); cause != nil {
		return cause
	}
	return fmt.Errorf("transport: %s %s: reading the answer: %w", ri.method, ri.url, err)
}

// startStream registers a stream reader, unless the connection is closed.
func (c *HTTPConn) startStream() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	return true
}

// noteSession records the session id of an answer to initialize.
func (c *HTTPConn) noteSession(id string) {
	if id == "" || c.legacy {
		return
	}
	c.mu.Lock()
	c.session, c.sessionH = id, []string{id}
	c.mu.Unlock()
}

// forgetSession drops the session id if it still is id.
func (c *HTTPConn) forgetSession(id string) {
	c.mu.Lock()
	if c.session == id {
		c.session, c.sessionH = "", nil
	}
	c.mu.Unlock()
}

// noteVersion records the version of an answer to initialize.
func (c *HTTPConn) noteVersion(frame []byte) {
	v := initializeVersion(frame)
	if v == "" || !printableASCII(v) {
		return
	}
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
}
