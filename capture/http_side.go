package capture

import (
	"bytes"
	"hash/maphash"
	"net"
	"sync"
	"sync/atomic"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Sessionless requests in flight. Traffic with no session (a server that
// assigns no Mcp-Session-Id: 2026-07-28 stateless servers, the LangGraph
// docs' dialect) is grouped by client connection, "conn-N", but two kinds
// of messages about a request can come on another connection than the
// request: the answer, and the client's cancel. So the proxy notes the id
// of every request of a sessionless exchange (with its client host and
// its connection's session) from its arrival until its terminal answer,
// or until its exchange ends when the answer can no longer come elsewhere.
// One table serves both uses.
//
// Side streams. The HTTP dialect of the LangGraph MCP server's
// documentation POSTs JSON-RPC with no session and reads the server's
// messages, streamed answers included, from an event stream the client
// opens with GET on another path (new EventSource('/mcp/stream')), on a
// connection of its own. Grouped by connection, the answers would land in
// the stream's session, away from their requests. Once the proxy has seen
// a sessionless GET event stream, an answer arriving on such a stream from
// the same host under the id of a noted request is recorded in the session
// of that request (with the stream's exchange number and Stream "get"),
// and a terminal answer (a single response, an error, or the end part of
// a streamed answer) ends the request. Everything else on the stream
// (notifications, server requests, answers to nobody known) stays in the
// stream's own "conn-N" session.
//
// A server of this dialect cannot tell its clients apart, and may send
// every message on every open stream. The first stream that carries a
// part of an answer owns it: copies on other streams stay in their own
// sessions. A part another stream carries before the owner's copy of it
// reached the recorder is held until that copy comes, or until the owner
// ends without it (http_side_held.go). Ids are matched per client host, so two clients on one host
// that have the same id in flight at the same time are told apart only by
// that first-stream rule; of several requests noted under one id, the
// latest is the one answered.
//
// Cancels. A client with a pool of connections (Python's httpx, Node's
// fetch) may send a request on one connection and, while it is in flight,
// its notifications/cancelled on another. A sessionless cancel whose
// requestId names a noted request of the same client host, the latest
// under that id, noted on another connection and none on the cancel's own,
// is recorded in that request's session, with the cancel's own exchange
// number and Stream "post"; the "http" events of its POST stay in the
// POST's connection session. A cancel naming nothing in flight (answered
// already, or unknown) stays in its own connection's session. The cancel
// is recorded after its request: when the request is not recorded yet (a
// sessionless request waits for its response headers, which may name a
// session), the cancel is parked with it and written right after it.
//
// Cost: every request of a sessionless exchange is noted, side stream or
// not: a classification of the request body, a map insert when it arrives
// and a delete when its exchange ends (or its terminal answer comes on a
// side stream), two allocations: 0.75 µs a request (BenchmarkSideTable),
// about 2 % of what the proxy spends on a sessionless exchange
// (BenchmarkHTTPProxyHop/sessionless). Exchanges that name a session never
// pay. Turning the table on only after a first sessionless cancel was seen
// would lose that first cancel, and a tape of one cancelled call is a
// common thing to record (the cancel that shows a bug): the table is
// always kept.

// Side table bounds: keys (host and id) noted at once (a client that never
// gets answers must not grow the table without bound: at the bound the
// table is emptied), and requests noted under one key (the oldest go).
const (
	maxSideRequests = 1 << 16
	maxSidePerKey   = 8
	// maxParked bounds the cancels waiting for one request to be
	// recorded; more stay in their own connection's session.
	maxParked = 16
)

// sideStreams is the proxy's table of sessionless requests in flight.
type sideStreams struct {
	on atomic.Bool // a sessionless GET event stream was seen

	mu   sync.Mutex
	reqs map[string]*sideEntry // host + "\x00" + id key
	key  []byte                // scratch for keys (mu held)
}

// sideEntry holds the requests in flight under one host and id.
type sideEntry struct {
	owner uint64     // the exchange of the stream that carried the answer's first part; 0: none yet
	parts partLog    // the parts recorded in the request's session (see answer)
	held  heldLog    // parts other streams carried ahead of the owner (http_side_held.go)
	reqs  []*sideReq // oldest first
	one   [1]*sideReq
	first sideReq // the first request noted under the key (one allocation)
}

// sideReq is one sessionless request in flight.
type sideReq struct {
	key      string      // its key in the table
	conn     string      // the session of its exchange's connection
	session  string      // the session it was recorded in (set before recorded)
	recorded atomic.Bool // its message was handed to the tape
	waiting  atomic.Bool // a cancel was parked with it (or is being)
	parked   []tape.Record
}

// sessionNow is the session r's messages go to.
func (r *sideReq) sessionNow() string {
	if r.recorded.Load() {
		return r.session
	}
	return r.conn
}

// sideCancel is a cancel of an exchange's body routed to the session of
// the request it cancels.
type sideCancel struct {
	member int // its place in the body (0 for a lone message)
	to     *sideReq
}

// streamSeen turns side-stream answers on.
func (s *sideStreams) streamSeen() {
	if !s.on.Load() {
		s.on.Store(true)
	}
}

// keyOf builds the table key of host and id in s.key (s.mu held).
func (s *sideStreams) keyOf(host string, id *jsonrpc.ID) []byte {
	s.key = id.AppendKey(append(append(s.key[:0], host...), 0))
	return s.key
}

// sent notes the client message m, member i of a body of n members of
// the sessionless exchange x: a request is noted in flight, a cancel
// naming a request in flight in another connection's session is routed
// there.
func (s *sideStreams) sent(x *exchange, i, n int, m []byte) {
	info := jsonrpc.Classify(m)
	switch {
	case info.Kind == jsonrpc.KindRequest:
		s.note(x, &info.ID)
	case info.Kind == jsonrpc.KindNotification && info.Method == jsonrpc.MethodCancelled &&
		info.CancelTarget.Type != jsonrpc.IDAbsent && info.CancelTarget.Type != jsonrpc.IDNull:
		if to := s.target(x, &info.CancelTarget); to != nil {
			x.sideCancels = append(x.sideCancels, sideCancel{member: i, to: to})
			x.sideMembers = n
		}
	}
}

// note notes a request of x with id.
func (s *sideStreams) note(x *exchange, id *jsonrpc.ID) {
	var out []tape.Record // held parts let go at the table's bound, written after s.mu
	s.mu.Lock()
	if s.reqs == nil {
		s.reqs = make(map[string]*sideEntry)
	}
	k := s.keyOf(x.conn.host, id)
	var r *sideReq
	if e := s.reqs[string(k)]; e != nil {
		if len(e.reqs) >= maxSidePerKey {
			e.reqs = append(e.reqs[:0], e.reqs[1:]...)
		}
		r = &sideReq{key: e.first.key, conn: x.conn.session}
		e.reqs, e.owner = append(e.reqs, r), 0
	} else {
		if len(s.reqs) >= maxSideRequests {
			for _, e := range s.reqs {
				e.held.flush(&out)
			}
			clear(s.reqs)
		}
		e = &sideEntry{}
		r = &e.first
		r.key, r.conn = string(k), x.conn.session
		e.one[0] = r
		e.reqs = e.one[:1]
		s.reqs[r.key] = e
	}
	// Under s.mu: answer reads it on the goroutine of the response,
	// which the race detector cannot order after this one by the wire.
	if x.sideReqs == nil {
		x.sideReqs = x.sideOne[:0]
	}
	x.sideReqs = append(x.sideReqs, r)
	s.mu.Unlock()
	if out != nil {
		x.p.writeHeld(out)
	}
}

// target returns the request a cancel of x names, when it is to be
// recorded in another connection's session: the latest request in flight
// under the id from x's host, noted on another connection, with none
// under the id noted on x's.
func (s *sideStreams) target(x *exchange, id *jsonrpc.ID) *sideReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.reqs[string(s.keyOf(x.conn.host, id))]
	if e == nil || len(e.reqs) == 0 {
		return nil
	}
	for _, r := range e.reqs {
		if r.conn == x.conn.session {
			return nil
		}
	}
	return e.reqs[len(e.reqs)-1]
}

// Verdicts of sideStreams.answer on a server message.
const (
	sideOwn     = iota // recorded in the session of the request it answers
	sideElse           // recorded in its stream's own session
	sideHeldOff        // held: recorded later (http_side_held.go)
)

// answer takes a server message m of exchange x from host, arriving on a
// side stream (stream, its exchange) or on x's own response (stream 0),
// and tells where it is recorded: in the session of the request it
// answers (sideOwn, with the session), in x's own session (sideElse), or
// later (sideHeldOff: a part ahead of the answer's owner, kept from rec
// until it is known to be a copy or the owner ends). A terminal answer
// ends the request. Held parts let go are added to out, to be written
// after s.mu.
func (s *sideStreams) answer(x *exchange, stream uint64, m []byte, rec *tape.Record, out *[]tape.Record) (string, int) {
	info := jsonrpc.Classify(m)
	if (info.Kind != jsonrpc.KindResponse && info.Kind != jsonrpc.KindError) || info.ID.Type == jsonrpc.IDNull {
		return "", sideElse
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keyOf(x.conn.host, &info.ID)
	e := s.reqs[string(k)]
	if e == nil || len(e.reqs) == 0 {
		return "", sideElse
	}
	r := e.reqs[len(e.reqs)-1]
	switch {
	case stream == 0:
		r = x.ownReq(e) // its own request: no stream is involved
		if r == nil {
			return "", sideElse
		}
	case e.owner == stream:
		e.parts.add(m)
		e.held.settle(&e.parts, out)
	case e.held.has(stream): // behind its own held parts
		e.held.hold(stream, x, m, rec, streamDialect.Ends(m, &info), &e.parts, out)
		return "", sideHeldOff
	default:
		switch e.parts.takeOver(e.owner == 0, stream, m) {
		case partCopy:
			return "", sideElse // a copy on another client's stream
		case partAhead:
			e.held.hold(stream, x, m, rec, streamDialect.Ends(m, &info), &e.parts, out)
			return "", sideHeldOff
		}
		e.owner = stream
		e.parts.add(m)
	}
	session := r.sessionNow()
	if streamDialect.Ends(m, &info) {
		s.dropLocked(r.key, e, r, out)
	}
	return session, sideOwn
}

// streamEnded frees the answers owned by the side stream of exchange
// stream, which ended (its client left, maybe with an answer of another
// client half sent on it): the stream that holds the most parts ahead of
// it takes over, its held parts recorded in the session of the request
// (they are the parts the owner never carried to the proxy: in flight on
// its connection as it closed); with none held, the next stream that
// carries a part of the answer owns it, so that the rest of it, read by
// its client on that client's own stream, is still recorded in the
// session of its request. The parts stream itself held are recorded in
// its own session. Records let go are added to out.
func (s *sideStreams) streamEnded(stream uint64, out *[]tape.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.reqs {
		e.held.drop(stream, out)
		delete(e.parts.pos, stream)
		if e.owner != stream {
			continue
		}
		e.owner = 0
		if next := e.held.longest(); next != 0 && len(e.reqs) > 0 {
			r := e.reqs[len(e.reqs)-1]
			e.owner = next
			if e.held.takeOver(next, r.sessionNow(), &e.parts, out) {
				s.dropLocked(k, e, r, out)
				continue
			}
			e.held.settle(&e.parts, out)
		}
	}
}

// partLog remembers the parts of a streamed answer recorded from the
// stream that owns it, to tell the copies on other streams from new parts
// when the owner ends mid-answer. Every stream carries the server's parts
// in its order, from when it opened: a copy is the next recorded part,
// after the one the stream's previous copy matched, with the same bytes.
type partLog struct {
	n    int            // parts recorded
	hash []uint64       // of the last partLogSize recorded, by n modulo the size; nil before the first
	pos  map[uint64]int // by stream other than the owner: the number of the recorded part its last copy matched, +1
	seed maphash.Seed
}

// partLogSize bounds the parts remembered per answer: a stream that lags
// the owner by more may see a copy taken for a new part.
const partLogSize = 32

// add notes a part recorded.
func (l *partLog) add(m []byte) {
	if l.hash == nil {
		l.hash, l.seed = make([]uint64, partLogSize), maphash.MakeSeed()
	}
	l.hash[l.n%partLogSize] = maphash.Bytes(l.seed, m)
	l.n++
}

// Verdicts of partLog.takeOver on a part of a stream that does not own
// the answer.
const (
	partNew   = iota // recorded: the stream takes the answer over
	partCopy         // a copy of a part recorded
	partAhead        // neither: the owner has not recorded that part yet
)

// takeOver tells what m, a part that stream carried, is: a copy of a part
// recorded after the one stream's previous copy matched (a copy moves the
// stream's place on), else new when no stream owns the answer (free),
// else a part ahead of the owner, which records it when it comes.
func (l *partLog) takeOver(free bool, stream uint64, m []byte) int {
	if l.n == 0 { // no owner has recorded a part (an owner always has)
		if free {
			return partNew
		}
		return partCopy
	}
	if l.copied(stream, maphash.Bytes(l.seed, m)) {
		return partCopy
	}
	if !free {
		return partAhead
	}
	delete(l.pos, stream)
	return partNew
}

// copied reports whether the part of hash h that stream carried is a copy
// of a recorded part, after the one its previous copy matched, and if so
// moves the stream's place on.
func (l *partLog) copied(stream uint64, h uint64) bool {
	for j := max(l.pos[stream], l.n-partLogSize); j < l.n; j++ {
		if l.hash[j%partLogSize] == h {
			if l.pos == nil {
				l.pos = make(map[uint64]int, 2)
			}
			l.pos[stream] = j + 1
			return true
		}
	}
	return false
}

// dropLocked takes r out of e, the entry of key k (s.mu held); the parts
// held for its answer are copies then, let go to out.
func (s *sideStreams) dropLocked(k string, e *sideEntry, r *sideReq, out *[]tape.Record) {
	for i, q := range e.reqs {
		if q == r {
			e.reqs = append(e.reqs[:i], e.reqs[i+1:]...)
			e.owner, e.parts = 0, partLog{}
			e.held.flush(out)
			break
		}
	}
	if len(e.reqs) == 0 && s.reqs[k] == e {
		delete(s.reqs, k)
	}
}

// ownReq returns the request of x among e's, the latest if several.
func (x *exchange) ownReq(e *sideEntry) *sideReq {
	for i := len(e.reqs) - 1; i >= 0; i-- {
		for _, r := range x.sideReqs {
			if e.reqs[i] == r {
				return r
			}
		}
	}
	return nil
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

// sideRequests notes the requests and cancels of body, the whole request
// body of an exchange that names no session, before the upstream can
// answer them (the answer may come on another connection). Called once,
// by the lean path before it forwards the body, or when the body has been
// read (x.mu held or not shared yet).
func (x *exchange) sideRequests(body []byte) {
	if x.sideNoted || x.sessionKnown || headerValue(x.reqHeader, "Content-Encoding") != "" {
		return
	}
	x.sideNoted = true
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		members, _ := jsonrpc.Split(body)
		for i, m := range members {
			x.p.side.sent(x, i, len(members), m)
		}
		return
	}
	x.p.side.sent(x, 0, 1, body)
}

// sideMessage handles a server message m of a sessionless exchange while
// side streams are tracked: an answer ends its request, and goes to the
// request's session when it came on a side stream. It reports whether
// the message is held, to be recorded later (rec is not to be recorded).
func (x *exchange) sideMessage(m []byte, rec *tape.Record) bool {
	var stream uint64
	if x.side {
		stream = x.id
	}
	var out []tape.Record
	s, verdict := x.p.side.answer(x, stream, m, rec, &out)
	if verdict == sideOwn && x.side {
		rec.Session = s
	}
	if out != nil {
		x.p.writeHeld(out)
	}
	return verdict == sideHeldOff
}

// sideCancelOf returns the request that member i of n of x's body cancels
// in another session, or nil.
func (x *exchange) sideCancelOf(i, n int) *sideReq {
	if n != x.sideMembers {
		return nil // not the body the cancels were found in (cut, decoded)
	}
	for _, c := range x.sideCancels {
		if c.member == i {
			return c.to
		}
	}
	return nil
}

// recordCancel records rec, a cancel of x, in the session of the request
// to: now when that request was recorded, else parked with it until it
// is (sideRecorded). Here to.waiting is set before to.recorded is read;
// sideRecorded sets recorded before it reads waiting (sync/atomic is
// sequentially consistent): so either this sees the request recorded, or
// sideRecorded sees the cancel waiting and takes the parked ones under
// s.mu, after this parked them (recorded is read again under s.mu).
func (x *exchange) recordCancel(rec tape.Record, to *sideReq) {
	s := &x.p.side
	to.waiting.Store(true)
	if !to.recorded.Load() {
		s.mu.Lock()
		if len(to.parked) >= maxParked {
			s.mu.Unlock()
			x.record(rec)
			return
		}
		if !to.recorded.Load() {
			rec.Exchange = x.id
			rec.Frame = bytes.Clone(rec.Frame)
			to.parked = append(to.parked, rec)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
	rec.Session = to.session
	x.record(rec)
}

// sideRecorded marks x's requests as recorded in x's session (x.mu held)
// and writes the cancels parked with them.
func (x *exchange) sideRecorded() {
	for _, r := range x.sideReqs {
		if r.recorded.Load() {
			continue
		}
		r.session = x.session
		r.recorded.Store(true)
		if !r.waiting.Load() {
			continue
		}
		x.p.side.mu.Lock()
		parked := r.parked
		r.parked = nil
		x.p.side.mu.Unlock()
		for i := range parked {
			parked[i].Session = x.session
			x.p.write(&parked[i])
		}
	}
}

// sideDone ends x's requests still noted when x ends (x.mu not held),
// unless their answers may still come on a side stream: x was accepted
// (2xx) with no message while side streams are open.
func (x *exchange) sideDone() {
	var out []tape.Record
	if x.side {
		x.p.side.streamEnded(x.id, &out)
	}
	if len(x.sideReqs) > 0 && !(x.p.side.on.Load() && x.status/100 == 2 && x.messages == 0) {
		s := &x.p.side
		s.mu.Lock()
		for _, r := range x.sideReqs {
			if e := s.reqs[r.key]; e != nil {
				s.dropLocked(r.key, e, r, &out)
			}
		}
		s.mu.Unlock()
	}
	if out != nil {
		x.p.writeHeld(out)
	}
}
