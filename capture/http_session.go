package capture

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// Session kinds, in the Data of "open" events written by the HTTP proxy.
const (
	kindStreamable = "streamable" // Mcp-Session-Id
	kindLegacy     = "legacy-sse" // the sessionId query parameter of a legacy endpoint
	kindConnection = "connection" // no session id: grouped by client connection
)

// HTTPSessionEvent is the payload of the "open" and "close" events the
// HTTP proxy writes.
type HTTPSessionEvent struct {
	// Kind (open): "streamable", "legacy-sse" or "connection".
	Kind string `json:"kind,omitempty"`
	// How (open) the session was learned: "request" (a request named it),
	// "assigned" (a response set Mcp-Session-Id), "endpoint" (a legacy
	// endpoint event), "connection" (a request without any session id).
	How string `json:"how,omitempty"`
	// Conn is the client connection of the exchange that opened the
	// session.
	Conn uint64 `json:"conn,omitempty"`
	// By (close) tells who ended it: ClosedByClient, ClosedByServer,
	// ClosedByProxy, or "" when unknown (a connection closed).
	By string `json:"by,omitempty"`
	// Reason (close): "delete", "not-found", "stream-ended",
	// "connection-closed" or "shutdown".
	Reason string `json:"reason,omitempty"`
}

// sessionRegistry knows the sessions open in the tape and the client
// connections.
type sessionRegistry struct {
	mu       sync.Mutex
	live     map[string]string    // open session -> kind
	conns    map[string]*connInfo // remote address -> connection
	nextConn uint64
}

// connInfo is one client connection.
type connInfo struct {
	id      uint64
	session string // "conn-N"
	host    string // the client's host, without the port
}

func (s *sessionRegistry) init() {
	s.live = make(map[string]string)
	s.conns = make(map[string]*connInfo)
}

// open returns the number of sessions open in the tape.
func (s *sessionRegistry) openCount() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.live))
}

// conn returns the connection with remote address remote, numbering it on
// first sight.
func (s *sessionRegistry) conn(remote string) *connInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.conns[remote]; c != nil {
		return c
	}
	s.nextConn++
	c := &connInfo{id: s.nextConn, session: "conn-" + strconv.FormatUint(s.nextConn, 10), host: remoteHost(remote)}
	s.conns[remote] = c
	return c
}

// open writes an "open" event for session id unless it is open already.
// The event is written with the lock held, so that no other exchange of the
// session can record before it.
func (s *sessionRegistry) open(p *HTTPProxy, id, kind, how string, x *exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live[id]; ok {
		return
	}
	s.live[id] = kind
	// Stamped with the exchange's arrival, so that the event also precedes,
	// in time, the client messages recorded later with their arrival time.
	s.writeAt(p, x.start, id, tape.EventOpen, x.id, &HTTPSessionEvent{Kind: kind, How: how, Conn: x.conn.id})
}

// close writes a "close" event for session id if it is open.
func (s *sessionRegistry) close(p *HTTPProxy, id, by, reason string, exchange uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live[id]; !ok {
		return
	}
	delete(s.live, id)
	s.write(p, id, tape.EventClose, exchange, &HTTPSessionEvent{By: by, Reason: reason})
}

// closeAll closes every open session.
func (s *sessionRegistry) closeAll(p *HTTPProxy, by, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.live {
		s.write(p, id, tape.EventClose, 0, &HTTPSessionEvent{By: by, Reason: reason})
	}
	clear(s.live)
	clear(s.conns)
}

func (s *sessionRegistry) write(p *HTTPProxy, id, event string, exchange uint64, data *HTTPSessionEvent) {
	s.writeAt(p, p.o.now(), id, event, exchange, data)
}

func (s *sessionRegistry) writeAt(p *HTTPProxy, t time.Time, id, event string, exchange uint64, data *HTTPSessionEvent) {
	p.write(&tape.Record{Type: tape.TypeEvent, Time: t.UnixNano(), Session: id, Event: event, Exchange: exchange, Data: marshalData(data)})
}

// ConnState follows client connections; Serve installs it. A caller that
// serves the proxy with its own http.Server should install it too
// (Server.ConnState), so that "conn-N" sessions close with their
// connection and the proxy forgets closed connections.
func (p *HTTPProxy) ConnState(c net.Conn, state http.ConnState) {
	if state != http.StateClosed && state != http.StateHijacked {
		return
	}
	s := &p.sessions
	key := c.RemoteAddr().String()
	s.mu.Lock()
	ci := s.conns[key]
	delete(s.conns, key)
	s.mu.Unlock()
	if ci != nil {
		s.close(p, ci.session, "", "connection-closed", 0)
	}
}

// legacySessionID returns the session id a legacy HTTP+SSE endpoint URL
// carries in its query: the sessionId parameter (TypeScript SDK) or
// session_id (Python SDK).
func legacySessionID(rawQuery string) string {
	if !strings.Contains(rawQuery, "ession") {
		return ""
	}
	q, _ := url.ParseQuery(rawQuery) // keeps what parses
	if id := q.Get("sessionId"); id != "" {
		return id
	}
	return q.Get("session_id")
}

// endSession closes the exchange's session in the tape when the exchange
// ended it: a successful DELETE, a 404 for a named session, or the end of
// a legacy event stream (by the proxy's shutdown: reason "shutdown", as
// for the sessions it closes at the end).
func (x *exchange) endSession(closedBy string) {
	p := x.p
	switch {
	case !x.sessionKnown:
	case x.method == http.MethodDelete && x.status/100 == 2:
		p.sessions.close(p, x.session, ClosedByClient, "delete", x.id)
	case x.status == http.StatusNotFound && x.kind == kindStreamable:
		p.sessions.close(p, x.session, ClosedByServer, "not-found", x.id)
	case x.stream == StreamSSE && closedBy == ClosedByProxy && x.cutByShutdown():
		p.sessions.close(p, x.session, closedBy, "shutdown", x.id)
	case x.stream == StreamSSE:
		p.sessions.close(p, x.session, closedBy, "stream-ended", x.id)
	}
}
