package mock

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// ServeSSE serves the legacy HTTP+SSE transport (2024-11-05) on ln: GET
// /sse opens a session whose first event names the endpoint to POST to,
// /message?sessionId=ID; every answer comes back on the GET stream. It
// returns when ctx ends (nil) or the run must end (Mock.Err).
func (m *Mock) ServeSSE(ctx context.Context, ln net.Listener) error {
	return m.serve(ctx, ln, m.SSEHandler())
}

// SSEHandler returns the legacy HTTP+SSE handler of m (/sse and /message).
func (m *Mock) SSEHandler() http.Handler {
	l := &legacy{m: m, byID: map[string]*legacySession{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", l.open)
	mux.HandleFunc("POST /message", l.post)
	return mux
}

type legacy struct {
	m    *Mock
	mu   sync.Mutex
	byID map[string]*legacySession
}

type legacySession struct {
	c     *Conn
	ctx   context.Context // the GET stream's: playback ends with it
	plays sync.WaitGroup
}

func (l *legacy) open(w http.ResponseWriter, r *http.Request) {
	if !originOK(r) {
		http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
		return
	}
	id := newSessionID()
	stream := newSSEStream(w)
	s := &legacySession{c: l.m.NewConn(stream.send), ctx: r.Context()}
	l.mu.Lock()
	l.byID[id] = s
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.byID, id)
		l.mu.Unlock()
		s.plays.Wait()
		stream.close()
	}()
	stream.mu.Lock()
	stream.header()
	ev, _ := transport.AppendSSE(nil, &transport.SSEEvent{Type: "endpoint", Data: []byte("/message?sessionId=" + id)})
	_, err := w.Write(ev)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	stream.mu.Unlock()
	if err != nil {
		return
	}
	<-r.Context().Done()
}

func (l *legacy) post(w http.ResponseWriter, r *http.Request) {
	if !originOK(r) {
		http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
		return
	}
	// plays.Add under mu: the GET handler removes the session under mu
	// before it waits for plays, so no Add comes after that Wait.
	l.mu.Lock()
	s := l.byID[r.URL.Query().Get("sessionId")]
	if s != nil {
		s.plays.Add(1)
	}
	l.mu.Unlock()
	if s == nil {
		http.Error(w, "Not Found: unknown sessionId", http.StatusNotFound)
		return
	}
	played := false
	defer func() {
		if !played {
			s.plays.Done()
		}
	}()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return
	}
	if len(body) > maxBody {
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return
	}
	if jsonrpc.Classify(body).Violations.Has(jsonrpc.ViolationInvalidJSON) {
		frame := errorFrame(nil, codeParse, "Parse error")
		l.m.recordDirect(s.c.id, 0, body, frame)
		writeJSONError(w, http.StatusBadRequest, frame)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	_, _ = fmt.Fprint(w, "Accepted")
	p := s.c.Handle(s.ctx, body, 0, s.c.sessionStream())
	if p == nil {
		return
	}
	played = true
	go func() { defer s.plays.Done(); p(s.ctx) }()
}
