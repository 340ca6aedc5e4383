package capture

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// exchangeKey carries the *exchange in a request's context.
type exchangeKey struct{}

func exchangeFrom(ctx context.Context) *exchange {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	return x
}

// exchange is the recording state of one HTTP request.
//
// The request side (requestTee) runs on the transport's goroutine; the rest
// on the handler's goroutine (or, for a compressed body, on the decoder's
// goroutine while the handler waits for it). mu guards what they share.
type exchange struct {
	p         *HTTPProxy
	id        uint64
	start     time.Time
	method    string
	path      string // for the tape
	host      string
	tls       bool // the client reached the proxy over TLS
	conn      *connInfo
	reqHeader http.Header
	tee       *requestTee     // the request body, as the transport reads it
	clientCtx context.Context // the server's request context: done when the client goes away
	ctx       context.Context // derived: cancelled with errProxyClosing by Close

	mu           sync.Mutex
	session      string
	kind         string // the session's kind (kindStreamable...)
	sessionKnown bool
	stream       string
	reqBuf       []byte
	reqSize      int64
	reqDone      bool      // the body was read to its end
	reqEnd       time.Time // when the body ended (or the request arrived, without one)
	reqRecorded  bool
	mcp          bool          // the request names a session or the upstream's endpoint: an MCP exchange whatever its body
	plainSet     bool          // plain is decided (plainExchange)
	plain        bool          // a plain HTTP exchange (OAuth, discovery): its bodies are notes, not messages
	reqNote      string        // a plain exchange's request body, redacted, for the "end" event
	respPending  bool          // the "response" event waits for the session, or for releaseResponse
	holdResp     bool          // response holds the "response" event back for releaseResponse
	sentAt       time.Time     // when the write of the bytes being framed began, if not now (see forwarded)
	dispatched   time.Time     // when the request went to the upstream (only with an observer)
	unsampled    bool          // the session is out of the sample: nothing of the exchange is recorded (http_filter.go)
	legacy       bool          // a GET event stream whose session comes from its endpoint event
	side         bool          // a GET event stream with no session: answers go to their requests' sessions (http_side.go)
	sideNoted    bool          // the request's ids are noted (http_side.go)
	sideReqs     []*sideReq    // the requests noted, in flight (http_side.go)
	sideOne      [1]*sideReq   // sideReqs' room for one
	sideCancels  []sideCancel  // cancels of the body recorded in other sessions (http_side.go)
	sideMembers  int           // the members of the body sideCancels index
	held         []tape.Record // records of a legacy stream written before its session was known
	observed     []observedReq // the requests of the body, for the observer (http_observe.go)
	obsSession   string        // the session observed's requests were noted under
	obsNoted     bool          // observeRequests ran
	batch        int

	respAt     time.Time
	status     int
	ctype      string
	respHeader http.Header
	sse        bool
	streaming  bool // flushed chunk by chunk: an event stream or a body of unknown length
	framer     *transport.SSEFramer
	spare      *transport.SSEFramer            // a framer of an earlier exchange, to Reset rather than allocate one (the lean path's)
	emit       func(*transport.SSEEvent) error // x.onEvent bound once by the owner of a reused exchange, or nil
	hdrs       *[2]headerCache                 // the encodings of the last request and response headers recorded (the lean path's), or nil
	decoder    *bodyDecoder
	upBody     upstreamBody // the response body, as read
	sinkOn     bool         // forwarded response bytes are recorded: by sink, or plainBody when it is nil
	sink       func([]byte) // a decoder's (or nothing's) for an encoded body
	hold       decodeHold   // the decoded response bytes held (on the decoder's goroutine)
	body       []byte
	bodySent   time.Time // when the write of body's last chunk began (see forwarded)
	bodySize   int64
	bodyCut    string // why body was cut ("" when it was not): cappedBody, cappedBudget or cappedFrame
	endpoint   string // original data of a rewritten legacy endpoint event
	gotResp    bool
	failErr    error // the upstream request failed (502 sent)
	upEOF      bool
	upErr      error
	writeErr   error
	events     int
	comments   int
	messages   int
	lastID     string
}

// newExchange starts the record of request r.
func (p *HTTPProxy) newExchange(r *http.Request) *exchange {
	x := new(exchange)
	p.initExchange(x, r)
	return x
}

// initExchange starts the record of request r in x: a new exchange, or
// one that finished and that nothing holds any more (the lean path serves
// a connection's exchanges, one after another, in one).
func (p *HTTPProxy) initExchange(x *exchange, r *http.Request) {
	p.st.exchanges.Add(1)
	*x = exchange{
		p:         p,
		id:        p.nextX.Add(1),
		start:     p.o.now(),
		method:    r.Method,
		path:      p.o.redact.requestURI(r.URL),
		host:      r.Host,
		tls:       r.TLS != nil || p.o.tls != nil, // the lean path and a handed-over connection leave r.TLS unset
		conn:      p.sessions.conn(r.RemoteAddr),
		reqHeader: r.Header,
		clientCtx: r.Context(),
		stream:    streamName(r.Method),
	}
	x.reqEnd = x.start
	if r.Body == nil || r.Body == http.NoBody {
		x.reqDone = true
	}
	if sid := headerValue(r.Header, "Mcp-Session-Id"); sid != "" {
		x.setSession(sid, kindStreamable, "request")
	} else if sid := legacySessionID(r.URL.RawQuery); sid != "" {
		x.setSession(sid, kindLegacy, "request")
	}
	x.mcp = x.sessionKnown || p.mcpPath(r.URL.Path)
}

// streamName names the stream of a request with method m.
func streamName(m string) string {
	switch m {
	case http.MethodPost:
		return StreamPOST
	case http.MethodGet:
		return StreamGET
	case http.MethodDelete:
		return StreamDELETE
	}
	return strings.ToLower(m)
}

// setSession assigns the exchange to a session (x.mu held, or before the
// exchange is shared) and opens the session in the tape if it is new.
func (x *exchange) setSession(id, kind, how string) {
	x.session, x.kind, x.sessionKnown = id, kind, true
	x.unsampled = x.p.filter != nil && !x.p.filter.sessionSampled(id)
	x.p.sessions.open(x.p, id, kind, how, x)
}

// record writes one record of this exchange. On a stream whose session is
// still unknown (a GET event stream waiting for a legacy endpoint event),
// records are held, with their times, until resolvePendingLocked settles
// the session; only the handler's goroutine records then.
func (x *exchange) record(r tape.Record) {
	r.Exchange = x.id
	if r.Session == "" {
		if x.legacy && !x.sessionKnown {
			r.Data = bytes.Clone(r.Data) // httpEvent's buffer is reused
			x.held = append(x.held, r)
			return
		}
		r.Session = x.session
	}
	rp := recordPool.Get().(*tape.Record)
	*rp = r
	x.p.write(rp) // the tape keeps nothing of it (RecordWriter)
	*rp = tape.Record{}
	recordPool.Put(rp)
}

// recordPool holds the records handed to the tape.
var recordPool = sync.Pool{New: func() any { return new(tape.Record) }}

// note writes an event of this exchange; data is marshalled to JSON.
func (x *exchange) note(t time.Time, name string, data any) {
	if x.unsampled {
		return
	}
	raw := marshalData(data)
	x.record(tape.Record{Type: tape.TypeEvent, Time: t.UnixNano(), Event: name, Data: raw, Stream: x.stream})
}

// httpEvent writes an "http" event of this exchange. The JSON is built in
// a pooled buffer: the tape copies what it keeps before Write returns.
// The tape writer takes the encoding as valid JSON (tape.Record.DataValid):
// FuzzHTTPEventJSON holds appendJSON to encoding/json's output.
func (x *exchange) httpEvent(t time.Time, ev *HTTPEvent) {
	if x.unsampled {
		return
	}
	bp := eventBuffers.Get().(*[]byte)
	*bp = ev.appendJSON((*bp)[:0])
	x.record(tape.Record{Type: tape.TypeEvent, Time: t.UnixNano(), Event: tape.EventHTTP, Data: *bp, DataValid: true, Stream: x.stream})
	if cap(*bp) <= 64<<10 {
		eventBuffers.Put(bp)
	}
}

// eventBuffers holds buffers for encoding "http" events.
var eventBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// fail writes an "error" event of this exchange.
func (x *exchange) fail(t time.Time, format string, args ...any) {
	x.note(t, tape.EventError, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// recordFrame records frame as the messages it holds: each member of a batch
// is one message; anything else, valid JSON or not, is one message. It
// returns the number of messages recorded and, for a batch, its length.
func (x *exchange) recordFrame(dir tape.Direction, frame []byte, eventID string, t time.Time) (n, batch int) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 {
		return 0, 0
	}
	rec := tape.Record{Type: tape.TypeMessage, Time: t.UnixNano(), Dir: dir, Stream: x.stream, EventID: eventID}
	members := [][]byte{frame}
	if frame[0] == '[' {
		if m, err := jsonrpc.Split(frame); err == nil && len(m) > 0 {
			members, batch = m, len(m)
		}
	}
	for i, m := range members {
		rec.Frame, rec.Session = m, ""
		held := false
		if dir == tape.ServerToClient && x.kind == kindConnection && x.p.side.on.Load() {
			held = x.sideMessage(m, &rec) // http_side.go
		}
		if held {
			// recorded once the proxy knows in which session (http_side_held.go)
		} else if to := x.sideCancelOf(i, len(members)); to != nil && dir == tape.ClientToServer {
			x.recordCancel(rec, to) // http_side.go
		} else {
			x.record(rec)
		}
		x.observeMessage(dir, m, rec.Session)
	}
	if dir == tape.ClientToServer {
		x.p.st.c2s.Add(int64(len(members)))
	} else {
		x.p.st.s2c.Add(int64(len(members)))
	}
	return len(members), batch
}

// requestTee copies the request body, as the transport reads it, for the
// tape. With a known Content-Length it reports io.EOF with the last byte,
// so that the end is seen (and recorded) without another read.
type requestTee struct {
	rc   io.ReadCloser
	x    *exchange
	left int64 // bytes still expected; negative when unknown
}

func (t *requestTee) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if t.left >= 0 {
		t.left -= int64(n)
		if t.left <= 0 && err == nil {
			err = io.EOF
		}
	}
	t.x.requestBytes(p[:n], err == io.EOF, time.Time{})
	return n, err
}

func (t *requestTee) Close() error { return t.rc.Close() }

// requestBytes keeps b (up to the maximum) and, at the end of the body
// (received at end, or now when end is zero), records the client's
// messages if their session is known.
func (x *exchange) requestBytes(b []byte, eof bool, end time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.reqSize += int64(len(b))
	if room := x.p.o.maxBody - len(x.reqBuf); room > 0 && !x.parseless() {
		x.reqBuf = append(x.reqBuf, b[:min(room, len(b))]...)
	}
	if eof && !x.reqDone {
		x.sideRequests(x.reqBuf)
		if x.p.o.obs != nil {
			x.observeRequests(x.reqBuf) // http_observe.go (the lean path noted them at dispatch)
		}
		if end.IsZero() {
			end = x.p.o.now()
		}
		x.reqDone, x.reqEnd = true, end
		if x.sessionKnown {
			x.recordRequestLocked(false)
		}
	}
}

// recordRequestLocked records the request body's messages once (x.mu
// held). final is set when the exchange ends, whatever was read.
func (x *exchange) recordRequestLocked(final bool) {
	if x.reqRecorded || (!x.reqDone && !final) {
		return
	}
	x.reqRecorded = true
	defer x.sideRecorded() // http_side.go: cancels parked with its requests follow them
	body := x.reqBuf
	if len(body) == 0 {
		return
	}
	var cut *cutNote
	if enc := headerValue(x.reqHeader, "Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		h := x.p.decode.body()
		defer h.release() // once the tape has its copy
		dec, dcut, err := decodeBody(enc, body, &h)
		switch {
		case err != nil:
			x.fail(x.reqEnd, "request body: %v; recorded as received", err)
		case dcut:
			body = dec
			cut = &cutNote{Error: fmt.Sprintf("request body decoded past %d bytes: recorded cut, forwarded whole (%s)", len(dec), h.reason()),
				Kept: len(dec), Limit: h.capped}
		default:
			body = dec
		}
	}
	if x.plainExchange(body) {
		x.reqNote = x.p.o.redact.bodyNote(headerValue(x.reqHeader, "Content-Type"), body)
		return
	}
	if cut == nil && x.reqSize > int64(len(x.reqBuf)) {
		cut = &cutNote{Error: fmt.Sprintf("request body of %d bytes recorded cut at %d bytes", x.reqSize, len(x.reqBuf)),
			Kept: len(x.reqBuf), Size: x.reqSize, Limit: cappedFrame}
	}
	if cut != nil {
		x.noteCut(x.reqEnd, tape.ClientToServer, cut)
	}
	_, x.batch = x.recordFrame(tape.ClientToServer, body, "", x.reqEnd)
	if !x.reqDone {
		x.fail(x.reqEnd, "request body recorded incomplete: %d bytes read before the exchange ended", x.reqSize)
	}
}

// onResponse is the ReverseProxy's ModifyResponse hook: the response
// headers have arrived and are about to be forwarded.
func (p *HTTPProxy) onResponse(resp *http.Response) error {
	x := exchangeFrom(resp.Request.Context())
	if x == nil {
		return nil
	}
	x.response(resp, x.p.o.now())
	return nil
}

// assignSession opens the session that resp assigns (its Mcp-Session-Id)
// before the client can see resp: the client's next request names that
// session and, on another connection, could otherwise open it first, so
// that the tape would never say the session was assigned here.
func (x *exchange) assignSession(resp *http.Response) {
	sid := headerValue(resp.Header, "Mcp-Session-Id")
	if sid == "" {
		return
	}
	x.mu.Lock()
	if !x.sessionKnown {
		x.setSession(sid, kindStreamable, "assigned")
	}
	x.mu.Unlock()
}

// response resolves the exchange's session, records what waited for it and
// prepares the recording of the body; the response headers arrived at at.
func (x *exchange) response(resp *http.Response, at time.Time) {
	x.respAt, x.gotResp = at, true
	x.status, x.respHeader = resp.StatusCode, resp.Header
	x.ctype = headerValue(resp.Header, "Content-Type")
	x.sse, x.streaming = streamingResponse(resp)
	if x.streaming {
		x.p.st.streams.Add(1) // until finish
	}
	x.mu.Lock()
	if !x.sessionKnown {
		switch sid := headerValue(resp.Header, "Mcp-Session-Id"); {
		case sid != "":
			x.setSession(sid, kindStreamable, "assigned")
		case x.method == http.MethodGet && x.sse && resp.StatusCode/100 == 2:
			x.legacy = true // decided by the first event: endpoint or not
			x.p.side.streamSeen()
		default:
			x.setSession(x.conn.session, kindConnection, "connection")
		}
	}
	if x.sessionKnown && !x.holdResp {
		x.recordRequestLocked(false)
		x.writeResponseEvent()
	} else {
		x.respPending = true
	}
	x.mu.Unlock()

	x.upBody = upstreamBody{rc: resp.Body, x: x}
	resp.Body = &x.upBody
	if x.parseless() {
		return // forwarded only: no decoding, no framing, no copy
	}
	maxEvent := x.p.o.maxBody
	if enc := headerValue(resp.Header, "Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		sink, hold := x.decodedBody, x.p.decode.body()
		if x.sse {
			sink, hold, maxEvent = x.decodedEvents, x.p.decode.stream(), x.p.decode.perBody
		}
		d, err := newBodyDecoder(enc, sink)
		if err != nil {
			x.fail(x.respAt, "response body: %v; its messages are not recorded", err)
			x.sink = func([]byte) {}
		} else {
			x.decoder, x.sink, x.hold = d, d.write, hold
		}
	}
	if x.sse {
		opts := [...]transport.SSEOption{transport.WithoutRaw(), transport.WithMaxEvent(maxEvent)} // valid options
		emit := x.emit
		if emit == nil {
			emit = x.onEvent
		}
		if x.spare != nil && x.spare.Reset(emit, opts[:]...) == nil {
			x.framer = x.spare
		} else {
			x.framer, _ = transport.NewSSEFramer(emit, opts[:]...)
		}
	}
	x.sinkOn = true
	if x.legacy && x.decoder == nil && resp.ContentLength < 0 {
		resp.Body = &endpointRewriter{rc: resp.Body, x: x}
	}
}

// releaseResponse writes the "response" event that holdResp held back, if
// the session is known (else it waits for the session, as without it).
func (x *exchange) releaseResponse() {
	if !x.holdResp {
		return
	}
	x.holdResp = false
	x.mu.Lock()
	if x.respPending && x.sessionKnown {
		x.recordRequestLocked(false)
		x.writeResponseEvent()
	}
	x.mu.Unlock()
}

// streamingResponse reports whether resp is an event stream, and whether
// it is forwarded chunk by chunk, flushed: an event stream or a body of
// unknown length.
func streamingResponse(resp *http.Response) (sse, streaming bool) {
	mt, _, _ := strings.Cut(headerValue(resp.Header, "Content-Type"), ";")
	sse = strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
	return sse, sse || resp.ContentLength < 0
}

// writeResponseEvent records the "response" event (x.mu held).
func (x *exchange) writeResponseEvent() {
	x.respPending = false
	if x.unsampled { // spare the headers' redaction
		return
	}
	ev := HTTPEvent{
		Phase: "response", Method: x.method, Path: x.path, Host: x.host, Conn: x.conn.id,
		Status: x.status, ContentType: x.ctype,
		WaitNs: x.respAt.Sub(x.start).Nanoseconds(),
	}
	if x.hdrs != nil {
		ev.reqHeadersJSON = x.hdrs[0].encode(&x.p.o.redact, x.reqHeader)
		ev.respHeadersJSON = x.hdrs[1].encode(&x.p.o.redact, x.respHeader)
	} else {
		ev.RequestHeaders = x.p.o.redact.headers(x.reqHeader)
		ev.ResponseHeaders = x.p.o.redact.headers(x.respHeader)
	}
	x.httpEvent(x.respAt, &ev)
}

// resolvePendingLocked settles a session still unknown (x.mu held): a GET
// stream that turned out not to be legacy belongs to its connection.
func (x *exchange) resolvePendingLocked() {
	if !x.sessionKnown {
		x.side = x.method == http.MethodGet && x.sse
		x.legacy = false
		x.setSession(x.conn.session, kindConnection, "connection")
	}
	x.recordRequestLocked(false)
	if x.respPending {
		x.writeResponseEvent()
	}
	held := x.held
	x.held = nil
	for _, r := range held {
		x.record(r)
	}
}
