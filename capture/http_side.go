package capture

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Side streams. The HTTP dialect of the LangGraph MCP server's
// documentation POSTs JSON-RPC with no session and reads the server's
// messages, streamed answers included, from an event stream the client
// opens with GET on another path (new EventSource('/mcp/stream')), on a
// connection of its own. Grouped by connection, the answers would land in
// the stream's session, away from their requests. So once the proxy has
// seen a sessionless GET event stream, it notes the ids of the requests
// of sessionless exchanges (with their session and client host) until
// their terminal answer (a single response, an error, or the end part of
// a streamed answer), and an answer arriving on such a stream from the
// same host under such an id is recorded in the session of its request
// (with the stream's exchange number and Stream "get"). Everything else
// on the stream (notifications, server requests, answers to nobody known)
// stays in the stream's own "conn-N" session.
//
// A server of this dialect cannot tell its clients apart, and may send
// every message on every open stream. The first stream that carries a
// part of an answer owns it: copies on other streams stay in their own
// sessions. Ids are matched per client host, so two clients on one host
// that have the same id in flight at the same time are told apart only by
// that first-stream rule.

// maxSideRequests bounds the requests noted at once (a client that never
// gets answers must not grow the table without bound): at the bound the
// table is emptied.
const maxSideRequests = 1 << 16

// sideStreams is the proxy's side-stream state.
type sideStreams struct {
	on atomic.Bool // a sessionless GET event stream was seen

	mu   sync.Mutex
	reqs map[string]*sideRequest // host + "\x00" + id key
}

// sideRequest is one sessionless request in flight.
type sideRequest struct {
	session string
	owner   uint64 // the exchange of the stream that carried its first part; 0: none yet
	n       int    // requests in flight under this key
}

// streamSeen turns side-stream tracking on.
func (s *sideStreams) streamSeen() {
	if s.on.Load() {
		return
	}
	s.mu.Lock()
	if s.reqs == nil {
		s.reqs = make(map[string]*sideRequest)
	}
	s.mu.Unlock()
	s.on.Store(true)
}

func sideKey(host string, id *jsonrpc.ID) string {
	return host + "\x00" + id.Key()
}

// sent notes a client message m of a sessionless exchange of session
// from host.
func (s *sideStreams) sent(host, session string, m []byte) {
	info := jsonrpc.Classify(m)
	if info.Kind != jsonrpc.KindRequest {
		return
	}
	k := sideKey(host, &info.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.reqs[k]; r != nil {
		r.session, r.owner = session, 0
		r.n++
		return
	}
	if len(s.reqs) >= maxSideRequests {
		clear(s.reqs)
	}
	s.reqs[k] = &sideRequest{session: session, n: 1}
}

// answer takes a server message m from host, arriving on the side stream
// exchange (0 for a POST's answer), and returns the session of the
// request it answers when it belongs there. A terminal answer ends the
// request.
func (s *sideStreams) answer(host string, exchange uint64, m []byte) (string, bool) {
	info := jsonrpc.Classify(m)
	if (info.Kind != jsonrpc.KindResponse && info.Kind != jsonrpc.KindError) || info.ID.Type == jsonrpc.IDNull {
		return "", false
	}
	k := sideKey(host, &info.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs[k]
	if r == nil {
		return "", false
	}
	if exchange != 0 {
		if r.owner == 0 {
			r.owner = exchange
		} else if r.owner != exchange {
			return "", false // a copy on another client's stream
		}
	}
	if streamDialect.Ends(m, &info) {
		if r.n--; r.n <= 0 {
			delete(s.reqs, k)
		} else {
			r.owner = 0
		}
	}
	return r.session, true
}

// streamDialect is the dialect of streamed answers the proxy knows.
var streamDialect = jsonrpc.LangGraphStream()

// remoteHost is the host part of a remote address (all of it when it has
// no port).
func remoteHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// sideRequests notes the requests of body, the whole request body of an
// exchange that names no session, while side streams are tracked, before
// the upstream can answer them (the answer may come on another
// connection): in the session of the exchange's connection, where a
// sessionless exchange goes. Called once, by the lean path before it
// forwards the body, or when the body has been read (x.mu held or not
// shared yet).
func (x *exchange) sideRequests(body []byte) {
	if x.sideNoted || x.sessionKnown || !x.p.side.on.Load() || headerValue(x.reqHeader, "Content-Encoding") != "" {
		return
	}
	x.sideNoted = true
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		members, _ := jsonrpc.Split(body)
		for _, m := range members {
			x.p.side.sent(x.conn.host, x.conn.session, m)
		}
		return
	}
	x.p.side.sent(x.conn.host, x.conn.session, body)
}

// sideMessage handles a server message m of a sessionless exchange while
// side streams are tracked: an answer ends its request, and goes to the
// request's session when it came on a side stream.
func (x *exchange) sideMessage(m []byte, rec *tape.Record) {
	var stream uint64
	if x.side {
		stream = x.id
	}
	if s, ok := x.p.side.answer(x.conn.host, stream, m); ok && x.side {
		rec.Session = s
	}
}
