package mock

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// HTTPConfig configures the Streamable HTTP server of a Mock.
type HTTPConfig struct {
	// Stateless serves without sessions: no Mcp-Session-Id, no GET stream,
	// no DELETE (protocol 2026-07-28). All POSTs share one connection.
	Stateless bool
}

// Path is where the Streamable HTTP endpoint is served.
const Path = "/mcp"

// maxBody bounds the body of one POST.
const maxBody = 64 << 20

// sessionHeader is the Streamable HTTP session header.
const sessionHeader = "Mcp-Session-Id"

// ServeHTTP serves Streamable HTTP at Path on ln until ctx ends (nil) or
// the run must end (Mock.Err).
func (m *Mock) ServeHTTP(ctx context.Context, ln net.Listener, cfg HTTPConfig) error {
	mux := http.NewServeMux()
	mux.Handle(Path, m.HTTPHandler(cfg))
	return m.serve(ctx, ln, mux)
}

// serve runs an HTTP server on ln until ctx ends or Done closes.
func (m *Mock) serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case <-m.Done():
		err = m.Err()
	case err = <-errc:
		return fmt.Errorf("mock: serving: %w", err)
	}
	_ = srv.Close() // ends open streams: the clients see the connection end
	<-errc
	return err
}

// httpSessions are the sessions of a Streamable HTTP handler.
type httpSessions struct {
	m        *Mock
	cfg      HTTPConfig
	mu       sync.Mutex
	byID     map[string]*httpSession
	shared   *httpSession // stateless
	exchange atomic.Uint64
}

type httpSession struct {
	c   *Conn
	get atomic.Bool // a GET stream is open
}

// HTTPHandler returns the Streamable HTTP handler of m (any path).
func (m *Mock) HTTPHandler(cfg HTTPConfig) http.Handler {
	return &httpSessions{m: m, cfg: cfg, byID: map[string]*httpSession{}}
}

func (h *httpSessions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !originOK(r) {
		http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// originOK refuses browsers of other sites: an Origin, when sent, must be
// on a loopback host.
func originOK(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (h *httpSessions) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return
	}
	if len(body) > maxBody {
		h.answerDirect(w, r, &jsonrpc.Info{}, nil, http.StatusRequestEntityTooLarge, errorFrame(nil, codeInvalidRequest, "Invalid Request: body too large"))
		return
	}
	info := jsonrpc.Classify(body)
	switch {
	case info.Violations.Has(jsonrpc.ViolationInvalidJSON):
		h.answerDirect(w, r, &info, body, http.StatusBadRequest, errorFrame(nil, codeParse, "Parse error"))
		return
	case info.Violations.Has(jsonrpc.ViolationEmptyBatch):
		h.answerDirect(w, r, &info, body, http.StatusBadRequest, emptyBatchError())
		return
	}
	s, id, status := h.session(r, &info)
	if id != "" {
		w.Header().Set(sessionHeader, id)
	}
	if s == nil {
		h.answerDirect(w, r, &info, body, status, errorFrame(nil, codeInvalidRequest, http.StatusText(status)+": "+sessionProblem(status)))
		return
	}
	ex := h.exchange.Add(1)
	if !hasRequest(body, &info) {
		s.c.Handle(r.Context(), body, ex, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	stream := newSSEStream(w)
	reply, finish := Stream(stream.send), stream.close
	if info.Kind == jsonrpc.KindBatch {
		reply, finish = batchPost(h.m.o.batch, w, stream, body)
	}
	if p := s.c.Handle(r.Context(), body, ex, reply); p != nil {
		p(r.Context())
	}
	finish()
}

// answerDirect answers a POST that no session's Conn handles (a body too
// large, unparseable, an empty batch, one of a missing or unknown session)
// with frame, and records body (nil: too large to keep) and frame in the
// output tape as a Conn records what it takes and sends: under the session
// the POST names when the mock serves it, else under a session of its own.
func (h *httpSessions) answerDirect(w http.ResponseWriter, r *http.Request, info *jsonrpc.Info, body []byte, status int, frame []byte) {
	if h.m.o.out != nil {
		h.m.recordDirect(h.directSession(r, info), h.exchange.Add(1), body, frame)
	}
	writeJSONError(w, status, frame)
}

// recordDirect records body (when not empty), a client's POST of exchange
// ex, and frame, the answer an HTTP handler gave it itself, in session of
// the output tape, as a Conn records what it takes and sends.
func (m *Mock) recordDirect(session string, ex uint64, body, frame []byte) {
	if len(bytes.TrimSpace(body)) > 0 {
		m.record(session, tape.ClientToServer, body, ex)
	}
	m.record(session, tape.ServerToClient, frame, 0)
}

// directSession names the session of the output tape a POST answered by
// answerDirect goes to.
func (h *httpSessions) directSession(r *http.Request, info *jsonrpc.Info) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cfg.Stateless || (h.m.x.stateless() && stateless(r, info)) {
		if h.shared == nil {
			h.shared = &httpSession{c: h.m.newStreamConn()}
		}
		return h.shared.c.id
	}
	if s := h.byID[r.Header.Get(sessionHeader)]; s != nil {
		return s.c.id
	}
	return h.m.nextConn()
}

// sessionProblem words what is wrong with a request's session.
func sessionProblem(status int) string {
	if status == http.StatusNotFound {
		return "unknown or ended session"
	}
	return "missing " + sessionHeader + " header"
}

// session returns the session of a POST, making one for initialize (and
// returning its new id), or nil and the HTTP status to answer.
func (h *httpSessions) session(r *http.Request, info *jsonrpc.Info) (*httpSession, string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := r.Header.Get(sessionHeader)
	if h.cfg.Stateless || (id == "" && h.m.x.stateless() && stateless(r, info)) {
		if h.shared == nil {
			h.shared = &httpSession{c: h.m.newStreamConn()}
		}
		return h.shared, "", 0
	}
	if info.Kind == jsonrpc.KindRequest && info.Method == "initialize" {
		id = newSessionID()
		s := &httpSession{c: h.m.newStreamConn()}
		h.byID[id] = s
		return s, id, 0
	}
	if id == "" {
		return nil, "", http.StatusBadRequest
	}
	s := h.byID[id]
	if s == nil {
		return nil, "", http.StatusNotFound
	}
	return s, "", 0
}

// stateless reports whether a POST without a session is of the 2026-07-28
// protocol, which has none: its MCP-Protocol-Version header says so, or it
// is server/discover. Such a POST is served without a session only when
// the recording is of that protocol too (Index.stateless): a server that
// speaks only 2025 versions answers it 400, and a client such as the Go
// SDK's then falls back to initialize.
func stateless(r *http.Request, info *jsonrpc.Info) bool {
	v := r.Header.Get("MCP-Protocol-Version")
	return v >= statelessVersion || (info.Kind == jsonrpc.KindRequest && info.Method == "server/discover")
}

// statelessVersion is the first protocol version without HTTP sessions.
const statelessVersion = "2026-07-28"

// hasRequest reports whether a POST body holds a request.
func hasRequest(body []byte, info *jsonrpc.Info) bool {
	if info.Kind != jsonrpc.KindBatch {
		return info.Kind == jsonrpc.KindRequest
	}
	members, _ := jsonrpc.Split(body)
	for _, m := range members {
		if jsonrpc.Classify(m).Kind == jsonrpc.KindRequest {
			return true
		}
	}
	return false
}

func (h *httpSessions) get(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Stateless {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	h.mu.Lock()
	s := h.byID[r.Header.Get(sessionHeader)]
	h.mu.Unlock()
	if s == nil {
		http.Error(w, "Bad Request: unknown or missing "+sessionHeader, http.StatusBadRequest)
		return
	}
	if !s.get.CompareAndSwap(false, true) {
		http.Error(w, "Conflict: a GET stream is already open", http.StatusConflict)
		return
	}
	defer s.get.Store(false)
	stream := newSSEStream(w)
	stream.flushHeader()
	s.c.SetSession(stream.send)
	<-r.Context().Done()
	s.c.SetSession(nil)
	stream.close()
}

func (h *httpSessions) delete(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Stateless {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	id := r.Header.Get(sessionHeader)
	h.mu.Lock()
	_, ok := h.byID[id]
	delete(h.byID, id)
	h.mu.Unlock()
	if !ok {
		http.Error(w, "Not Found: unknown session", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// newStreamConn returns a connection whose requests each have their own
// stream.
func (m *Mock) newStreamConn() *Conn {
	c := m.NewConn(nil)
	c.streams = true
	return c
}

// newSessionID returns a random session id.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

func writeJSONError(w http.ResponseWriter, status int, frame []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(frame)
}

// sseStream writes message events to an HTTP response, one at a time,
// flushed at once. Writes after close fail.
type sseStream struct {
	w       http.ResponseWriter
	mu      sync.Mutex
	started bool
	closed  bool
	buf     []byte
}

func newSSEStream(w http.ResponseWriter) *sseStream { return &sseStream{w: w} }

// errStreamClosed is returned by a send on a closed stream.
var errStreamClosed = errors.New("mock: the stream is closed")

func (s *sseStream) header() {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "text/event-stream")
		s.w.Header().Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
	}
}

// flushHeader sends the response head before any event.
func (s *sseStream) flushHeader() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.header()
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *sseStream) send(_ context.Context, frame []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	s.header()
	var err error
	s.buf, err = transport.AppendSSE(s.buf[:0], &transport.SSEEvent{Type: "message", Data: frame})
	if err != nil {
		return fmt.Errorf("mock: %w", err)
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return fmt.Errorf("mock: writing to the client: %w", err)
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// close ends the stream: later sends fail. A stream nothing was sent on
// still sends its head.
func (s *sseStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.header()
	s.closed = true
}
