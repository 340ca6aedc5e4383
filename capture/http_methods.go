package capture

import (
	"sync"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// The method table: for an observer (WithObserver) only, the methods of
// the requests in flight, by session, direction and id, so that an answer
// that comes on another exchange than its request (a GET event stream, a
// client's answer to a server request in a later POST) is reported under
// its request's method. A terminal answer takes its request out. Memory is
// bounded: the table remembers the last maxMethodEntries requests noted,
// answered or not, and noting one more forgets the oldest still there (a
// request never answered, or answered by nobody the proxy saw, goes then).
// The table is made on the first request noted: a proxy without an
// observer never has one.
//
// A client's answer can overtake its server request: the proxy records a
// stream's bytes after it forwarded them (on the lean path, once the
// upstream has nothing more to read: http_stream.go), and a client that
// answers at once (ping, roots/list) may have its answer's POST recorded
// first. An answer that finds no server request in its session is parked
// under the request's key, up to parkAnswerFor (at most maxParkedAnswers
// at once): the server request, when noted, reports it under its method;
// else it is reported under "" when the time is up (or the ring reuses its
// place). The observer hears it that much later.

// Method table bounds: the requests remembered, the client answers parked
// and how long one waits for its server request.
const (
	maxMethodEntries = 1 << 14
	maxParkedAnswers = 256
	parkAnswerFor    = time.Second
)

// methodTable is the proxy's table of requests in flight, for the
// observer.
type methodTable struct {
	mu   sync.Mutex
	m    map[string]methodEntry // methodKey -> request
	ring []string               // the keys noted, by sequence number modulo its length
	seq  uint64                 // the last sequence number given
	key  []byte                 // scratch (mu held)

	obs    HTTPObserver // hears the parked answers
	parked int          // client answers parked
}

// methodEntry is one request in the table, or a client's answer parked
// under the key of the server request it answers (parked set).
type methodEntry struct {
	method string
	seq    uint64 // when it was noted: its place in the ring
	parked *parkedAnswer
}

// parkedAnswer is a client's answer waiting for its server request.
type parkedAnswer struct {
	kind  jsonrpc.Kind
	timer *time.Timer
}

// keyOf builds the key of session, dir and id in t.key (t.mu held).
func (t *methodTable) keyOf(session string, dir tape.Direction, id *jsonrpc.ID) []byte {
	t.key = append(append(append(t.key[:0], session...), 0), dir...)
	t.key = id.AppendKey(append(t.key, 0))
	return t.key
}

// note notes a request with id and method, sent in direction dir in
// session, and returns its sequence number (0 when it was answered
// already: a parked answer is reported under method).
func (t *methodTable) note(session string, dir tape.Direction, id *jsonrpc.ID, method string) uint64 {
	var late []methodEntry // parked answers to report, after t.mu
	defer func() { t.report(late, method) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.initLocked()
	if e, ok := t.m[string(t.keyOf(session, dir, id))]; ok && e.parked != nil {
		t.unparkLocked(string(t.key), e)
		late = append(late, e)
		return 0
	}
	return t.addLocked(methodEntry{method: method}, &late)
}

// initLocked makes the table (t.mu held).
func (t *methodTable) initLocked() {
	if t.m == nil {
		t.m = make(map[string]methodEntry)
		t.ring = make([]string, maxMethodEntries)
	}
}

// addLocked puts e in the table under the key in t.key and returns its
// sequence number; the parked answer it pushes out of the ring is added
// to late (t.mu held).
func (t *methodTable) addLocked(e methodEntry, late *[]methodEntry) uint64 {
	t.seq++
	slot := &t.ring[t.seq%maxMethodEntries]
	if old := *slot; old != "" {
		if o, ok := t.m[old]; ok && o.seq == t.seq-maxMethodEntries {
			delete(t.m, old) // the oldest noted, still unanswered
			if o.parked != nil {
				t.unparkLocked(old, o)
				*late = append(*late, o)
			}
		}
	}
	*slot = string(t.key)
	e.seq = t.seq
	t.m[*slot] = e
	return t.seq
}

// unparkLocked takes the parked answer e, under key k, out (t.mu held).
func (t *methodTable) unparkLocked(k string, e methodEntry) {
	e.parked.timer.Stop() // when it fired already, expire finds nothing
	delete(t.m, k)
	t.parked--
}

// report tells the observer of the parked answers of late, under method.
func (t *methodTable) report(late []methodEntry, method string) {
	for _, e := range late {
		t.obs.Message(tape.ClientToServer, e.parked.kind, method)
	}
}

// answerClient returns the method of the server request with id in
// session that a client's answer of kind answers, and forgets it. When
// none is noted, the answer is parked (true: the table reports it) if
// there is room.
func (t *methodTable) answerClient(session string, id *jsonrpc.ID, kind jsonrpc.Kind) (string, bool) {
	var late []methodEntry
	defer func() { t.report(late, "") }()
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.keyOf(session, tape.ServerToClient, id)
	if e, ok := t.m[string(k)]; ok {
		if e.parked != nil {
			return "", false // a second answer: only the first waits
		}
		delete(t.m, string(k))
		return e.method, false
	}
	if t.parked >= maxParkedAnswers {
		return "", false
	}
	t.initLocked()
	t.parked++
	pa := &parkedAnswer{kind: kind}
	seq := t.addLocked(methodEntry{parked: pa}, &late)
	key := string(t.key)
	pa.timer = time.AfterFunc(parkAnswerFor, func() { t.expire(key, seq) })
	return "", true
}

// expire reports the answer parked under k as seq, if still there, under
// "": its server request did not come in time.
func (t *methodTable) expire(k string, seq uint64) {
	t.mu.Lock()
	e, ok := t.m[k]
	if !ok || e.parked == nil || e.seq != seq {
		t.mu.Unlock()
		return
	}
	t.unparkLocked(k, e)
	t.mu.Unlock()
	t.obs.Message(tape.ClientToServer, e.parked.kind, "")
}

// answer returns the method of the request with id sent in direction dir
// in session, "" when none is noted, and forgets it when ends.
func (t *methodTable) answer(session string, dir tape.Direction, id *jsonrpc.ID, ends bool) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.keyOf(session, dir, id)
	e, ok := t.m[string(k)]
	if ok && ends {
		delete(t.m, string(k))
	}
	return e.method
}

// forget forgets the request with id sent in direction dir in session,
// if it is still the one noted as seq.
func (t *methodTable) forget(session string, dir tape.Direction, id *jsonrpc.ID, seq uint64) {
	if seq == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.keyOf(session, dir, id)
	if e, ok := t.m[string(k)]; ok && e.seq == seq {
		delete(t.m, string(k))
	}
}

// size returns the number of requests in the table.
func (t *methodTable) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
