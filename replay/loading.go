package replay

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// sink receives a session's steps and server messages as they are built,
// in order: a Session keeps them (Load), a runner replays them as they
// come (a streamed session), an index only counts them. Indexes are the
// positions in Session.Steps and Session.Server.
type sink interface {
	addStep(st Step)
	addServer(m ServerMsg)
	// setAnswer sets Server[srv].Answer to step.
	setAnswer(srv, step int)
}

// maxExchanges bounds how many HTTP exchanges a loading remembers the
// first client request of (to relate the server's requests to it): the
// oldest are forgotten first.
const maxExchanges = 1 << 16

// loading builds one session's steps and server messages from its message
// records, handing each to out. The tape.Reader gives the records in time
// order. A tape written in time order (Header.TimeOrdered) also has every
// answer after the message it answers: its recorders stamp a message
// before forwarding it, so entries are built as they are read. An older
// tape may hold an answer stamped just before the message it answers (a
// proxy that recorded a POST when it was answered): for such a tape
// (lookahead) entries wait in a window (a tape.TimeOrder, used only as a
// look-ahead: the records are in order already), and such an answer (a
// server response whose request comes later, a client response whose
// server request comes later) is built right after the message it
// answers.
type loading struct {
	s   *Session // its metadata, cancels and progress tokens are filled in
	out sink

	nSteps, nServer int
	lastDep         int // last server response or request, -1
	lastDepKind     jsonrpc.Kind
	lastDepKey      string
	serverReq       map[string]int    // recorded server request id key -> index, until answered
	exchReq         map[uint64]string // HTTP exchange -> first client request id key on it
	exchOrder       []uint64          // exchReq's keys, oldest first
	ordinal         map[[2]string]int
	sessOrd         map[string]int

	lookahead bool                  // an older tape: entries wait in buf (see loading)
	buf       tape.TimeOrder[entry] // read, not built yet, in time order
	later     map[string]int        // requests in buf by dirKey
	open      map[string]int        // requests built and not yet answered, by dirKey
	held      map[string][]entry    // answers waiting for the request they answer (dirKey)

	seq     int64   // the number of the record add takes (Step.Record)
	postSeq []int64 // the numbers of the records in post
	batches int     // client batches built
	// post holds the client messages read so far of one HTTP POST: the
	// HTTP recorder writes a batch body as one record per member, all of
	// one exchange, so they are the members of one batch.
	post []tape.Record
	// The uses of each client request id (see useKey), forgotten
	// forgetLag steps after every use was answered.
	reqUses     map[string]int    // id key -> requests built
	resUses     map[string]int    // id key -> server responses built
	lastUse     map[string]string // id key -> key of its last use
	done        fifo[doneID]      // ids whose every use was answered
	unaddressed int               // server responses without a usable id built

	// HTTP response streams the client may close: request use key ->
	// its exchange, until answered; server messages per exchange.
	streams   map[string]uint64
	streamMsg map[uint64]int

	parts map[string]*streamParts // streamed answers being gathered, by dirKey of the request
	// open requests the client cancelled, by dirKey: a streamed answer
	// the cancellation cut short is not unfinished (streamed.go)
	cancelledOpen map[string]bool
}

// doneID is an id whose uses were all answered when step number at was
// next.
type doneID struct {
	at  int
	key string
}

// forgetLag is how many steps after the answer to its last use a client
// request id's uses are forgotten: by then a runner has forgotten them too
// (it is at most maxAhead steps behind and forgets pruneLag steps after),
// and a later use counts as a first one.
const forgetLag = 2 * (maxAhead + pruneLag)

// newLoading starts the loading of session s into out, from a tape whose
// header is h.
func newLoading(s *Session, out sink, h *tape.Header) *loading {
	return &loading{
		s: s, out: out, lookahead: !h.TimeOrdered, lastDep: -1, serverReq: map[string]int{},
		exchReq: map[uint64]string{}, ordinal: map[[2]string]int{}, sessOrd: map[string]int{},
		later: map[string]int{}, open: map[string]int{}, held: map[string][]entry{},
		reqUses: map[string]int{}, resUses: map[string]int{}, lastUse: map[string]string{},
		streams: map[string]uint64{}, streamMsg: map[uint64]int{}, parts: map[string]*streamParts{},
		cancelledOpen: map[string]bool{},
	}
}

// entry is one message of a session as read from the tape.
type entry struct {
	time     int64
	dir      tape.Direction
	exchange uint64
	stream   string
	frame    []byte
	info     jsonrpc.Info
	batch    int   // for a member of a client batch: its batch number (from 1)
	batchLen int   // and the batch's size
	refused  int   // the HTTP error status that refused the client message's POST
	noEOL    bool  // stdio: the recorded line had no "\n" (tape.Record.NoEOL)
	record   int64 // the record's number (Step.Record), 0 when unknown
	closes   bool  // the client closed the HTTP exchange's response stream
	// A streamed answer joined into one message (streamed.go): its
	// parts as recorded.
	parts *StreamParts
}

// add takes one message record (whose slices it keeps) and returns how
// many frames it skipped; it builds what the time ordering lets go.
func (l *loading) add(rec *tape.Record) int {
	if l.s.Start == 0 {
		l.s.Start = rec.Time
	}
	if rec.Dir == tape.ClientToServer && rec.Exchange != 0 && rec.Stream == string(transport.StreamPOST) {
		if len(l.post) > 0 && l.post[0].Exchange != rec.Exchange {
			l.flushPost(0)
		}
		l.post = append(l.post, *rec)
		l.postSeq = append(l.postSeq, l.seq)
		return 0
	}
	l.flushPost(0)
	members := [][]byte{rec.Frame}
	batch := 0
	if info := jsonrpc.Classify(rec.Frame); info.Kind == jsonrpc.KindBatch {
		if split, err := jsonrpc.Split(rec.Frame); err == nil && len(split) > 0 {
			members = split
			if rec.Dir == tape.ClientToServer {
				l.batches++
				batch = l.batches
			}
		}
	}
	skipped := 0
	noEOL := rec.NoEOL // the line's: its last member's (Step.NoEOL)
	for i, m := range members {
		rec.NoEOL = noEOL && i == len(members)-1
		if !l.member(rec, l.seq, m, batch, len(members), 0) {
			skipped++
		}
	}
	rec.NoEOL = noEOL
	l.release()
	return skipped
}

// flushPost takes the client messages of one HTTP POST held in post: one
// message alone, several as the members of one batch; refused is the HTTP
// error status the server answered the POST with (0 if none or unknown).
func (l *loading) flushPost(refused int) {
	if len(l.post) == 0 {
		return
	}
	batch := 0
	if len(l.post) > 1 {
		l.batches++
		batch = l.batches
	}
	for i := range l.post {
		l.member(&l.post[i], l.postSeq[i], l.post[i].Frame, batch, len(l.post), refused)
	}
	clear(l.post)
	l.post, l.postSeq = l.post[:0], l.postSeq[:0]
	l.release()
}

// member takes m, one message of rec, record number seq (a member of
// client batch number batch of size n when batch > 0; refused: see
// flushPost), and reports whether it was kept: a server frame that is not
// a JSON-RPC message is skipped and counted.
func (l *loading) member(rec *tape.Record, seq int64, m []byte, batch, n, refused int) bool {
	info := jsonrpc.Classify(m)
	if (info.Kind == jsonrpc.KindInvalid || info.Kind == jsonrpc.KindBatch) && rec.Dir != tape.ClientToServer {
		l.s.Invalid++
		return false
	}
	// A client frame that is not a message (invalid JSON, an empty
	// batch, a bare value) is a step too, re-sent byte for byte: it
	// is what reproduces the server's answer to it.
	e := entry{time: rec.Time, dir: rec.Dir, exchange: rec.Exchange, stream: rec.Stream, frame: m, info: info, refused: refused, noEOL: rec.NoEOL, record: seq}
	if batch > 0 {
		e.batch, e.batchLen = batch, n
	}
	l.insert(e)
	return true
}

// release builds what the time ordering lets go.
func (l *loading) release() {
	for l.buf.Ready(false) {
		l.pop()
	}
}

// closedByClient marks the payload of an "http" event that ends an
// exchange the client closed.
var closedByClient = []byte(`"closed_by":"client"`)

// addEvent takes an event record: the response of the HTTP POST whose
// client messages are held gives the status that refused them, if any;
// the end of an HTTP exchange whose response stream the client closed
// becomes a step that closes it.
func (l *loading) addEvent(rec *tape.Record) {
	if rec.Event != tape.EventHTTP {
		return // other events (a cut note before a batch member) leave a POST whole
	}
	refused := 0
	if len(l.post) > 0 && rec.Exchange == l.post[0].Exchange {
		refused = refusedStatus(rec.Data)
	}
	l.flushPost(refused)
	if rec.Exchange == 0 || !bytes.Contains(rec.Data, closedByClient) {
		return
	}
	var d struct {
		Phase    string `json:"phase"`
		ClosedBy string `json:"closed_by"`
	}
	if json.Unmarshal(rec.Data, &d) != nil || d.Phase != "end" || d.ClosedBy != "client" {
		return
	}
	l.insert(entry{time: rec.Time, dir: tape.ClientToServer, exchange: rec.Exchange, closes: true})
}

// refusedStatus returns the status of the "http" event data d when it is
// a response with an error status (400 or more), else 0.
func refusedStatus(d []byte) int {
	var e struct {
		Phase  string `json:"phase"`
		Status int    `json:"status"`
	}
	if json.Unmarshal(d, &e) != nil || e.Phase != "response" || e.Status < 400 {
		return 0
	}
	return e.Status
}

// addClose builds the step closing the stream of exchange e, when a
// request on it is still unanswered.
func (l *loading) addClose(e *entry) {
	n, open := l.streamMsg[e.exchange]
	delete(l.streamMsg, e.exchange)
	key := l.exchReq[e.exchange]
	if ex, ok := l.streams[key]; !open || key == "" || !ok || ex != e.exchange {
		return
	}
	delete(l.streams, key)
	l.s.stepCount++
	l.nSteps++
	l.out.addStep(Step{Kind: jsonrpc.KindInvalid, Time: e.time, Answers: -1, Closes: key, CloseAfter: n})
}

// insert builds e, or with lookahead puts it in buf after every entry of
// the same or an earlier time.
func (l *loading) insert(e entry) {
	if !l.lookahead {
		l.place(e)
		return
	}
	if e.info.Kind == jsonrpc.KindRequest {
		l.later[dirKey(e.dir, e.info.ID)]++
	}
	l.buf.Push(e.time, e)
}

// finish builds every entry still waiting.
func (l *loading) finish() {
	l.flushPost(0)
	for l.buf.Ready(true) {
		l.pop()
	}
	l.unfinishedRecorded()
}

// pop builds the oldest waiting entry (see place).
func (l *loading) pop() { l.place(l.buf.Pop()) }

// place builds e, or holds it when it answers a request still waiting in
// buf.
func (l *loading) place(e entry) {
	switch e.info.Kind {
	case jsonrpc.KindRequest:
		k := dirKey(e.dir, e.info.ID)
		if l.later[k]--; l.later[k] <= 0 {
			delete(l.later, k)
		}
		l.open[k]++
		delete(l.cancelledOpen, k) // a new use of the id
		l.build(e)
		for _, h := range l.held[k] {
			l.buildAnswer(k, h)
		}
		delete(l.held, k)
	case jsonrpc.KindResponse, jsonrpc.KindError:
		// The request it answers went the other way. It is held only
		// when no request of its id is open: an id used again after its
		// answer is not waited for.
		other := tape.ClientToServer
		if e.dir == tape.ClientToServer {
			other = tape.ServerToClient
		}
		k := dirKey(other, e.info.ID)
		if l.open[k] == 0 && l.later[k] > 0 {
			l.held[k] = append(l.held[k], e)
			return
		}
		l.buildAnswer(k, e)
	default:
		l.build(e)
	}
}

// buildAnswer builds the answer e to the open request k; the parts of a
// streamed answer are joined into its end first.
func (l *loading) buildAnswer(k string, e entry) {
	if !l.joinRecorded(&e, k) {
		return
	}
	l.answered(k)
	l.build(e)
}

// answered counts an answer to the open request k (a dirKey).
func (l *loading) answered(k string) {
	if l.open[k]--; l.open[k] <= 0 {
		delete(l.open, k)
	}
}

// useKey returns the key of the n-th use (from 1) of the id key k within
// a session: k itself the first time, k#n after. A client that uses an id
// again (after its answer, or while it is open) has each use paired with
// the answer of the same rank: the first answer to k with the first use.
func useKey(k string, n int) string {
	if n <= 1 {
		return k
	}
	return k + "#" + strconv.Itoa(n)
}

// unaddressedKey is the key of the n-th server response (from 1) whose id
// is null or absent: such answers are paired by their order.
func unaddressedKey(n int) string { return "#" + strconv.Itoa(n) }

// baseKey returns the recorded id key a use key stands for ("" for an
// unaddressed response).
func baseKey(k string) string {
	if i := strings.LastIndexByte(k, '#'); i >= 0 && !strings.ContainsAny(k[i:], `"]}`) {
		return k[:i]
	}
	return k
}

// dirKey names an id in the id space of one direction.
func dirKey(d tape.Direction, id jsonrpc.ID) string { return string(d) + " " + id.Key() }

// build adds one entry to the session.
func (l *loading) build(e entry) {
	if e.closes {
		l.addClose(&e)
		return
	}
	if e.dir == tape.ServerToClient {
		l.addServer(&e)
	} else {
		l.addClient(&e)
	}
}

func (l *loading) addClient(e *entry) {
	info := &e.info
	st := Step{Frame: e.frame, Kind: info.Kind, Method: info.Method, IDKey: info.ID.Key(), Time: e.time, Answers: -1, Batch: e.batch, BatchLen: e.batchLen, Refused: e.refused, NoEOL: e.noEOL, Record: e.record}
	if l.lastDep >= 0 {
		st.Deps = append(st.Deps, l.lastDep)
	}
	switch info.Kind {
	case jsonrpc.KindRequest:
		l.forget()
		l.reqUses[st.IDKey]++
		base := st.IDKey
		st.IDKey = useKey(base, l.reqUses[base])
		l.lastUse[base] = st.IDKey
		st.Name = paramsName(e.frame)
		if e.exchange != 0 {
			l.noteExchange(e.exchange, st.IDKey)
			if l.exchReq[e.exchange] == st.IDKey {
				l.streams[st.IDKey] = e.exchange
				l.streamMsg[e.exchange] += 0
			}
		}
		if l.s.Version == "" {
			l.s.Version = requestVersion(e.frame, info.Method)
		}
		if info.ProgressToken.Type != jsonrpc.IDAbsent {
			l.s.tokenOwner[info.ProgressToken.Key()] = st.IDKey
		}
		l.s.requests++
		if info.Method == "initialize" {
			l.s.initializes++
		}
		if l.s.requests == 1 {
			l.s.firstRequest = info.Method
		}
	case jsonrpc.KindNotification:
		if info.CancelTarget.Type != jsonrpc.IDAbsent {
			target := info.CancelTarget.Key()
			if u, ok := l.lastUse[target]; ok {
				target = u
			}
			l.s.cancelled[target] = true
			if k := dirKey(e.dir, info.CancelTarget); l.open[k] > 0 {
				l.cancelledOpen[k] = true
			}
			// The answer to the cancelled request may be stamped before
			// the cancel (an HTTP proxy records a POST when it is
			// answered), but it cannot be waited for: it may only come
			// because of the cancel.
			if len(st.Deps) > 0 && (l.lastDepKind == jsonrpc.KindResponse || l.lastDepKind == jsonrpc.KindError) && l.lastDepKey == target {
				st.Deps = nil
			}
		}
	case jsonrpc.KindResponse, jsonrpc.KindError:
		if i, ok := l.serverReq[st.IDKey]; ok {
			// An answer depends on the server request it answers only:
			// what the server sent after it (the answer to the request
			// that asked, stamped early) may be waiting for this answer.
			st.Answers = i
			st.Deps = []int{i}
			l.out.setAnswer(i, l.nSteps)
			delete(l.serverReq, st.IDKey)
		}
	}
	l.s.stepCount++
	l.nSteps++
	l.out.addStep(st)
}

// noteExchange remembers the first client request of an HTTP exchange.
func (l *loading) noteExchange(ex uint64, key string) {
	if _, ok := l.exchReq[ex]; ok {
		return
	}
	if len(l.exchOrder) >= maxExchanges {
		delete(l.exchReq, l.exchOrder[0])
		l.exchOrder = l.exchOrder[1:]
	}
	l.exchReq[ex] = key
	l.exchOrder = append(l.exchOrder, ex)
}

func (l *loading) addServer(e *entry) {
	info := &e.info
	m := ServerMsg{Frame: e.frame, Kind: info.Kind, Method: info.Method, IDKey: info.ID.Key(), Time: e.time, Answer: -1,
		Stream: e.parts}
	if e.stream == "get" {
		l.s.GetStream = true
	}
	idx := l.nServer
	l.nServer++
	m.After = l.nSteps
	if n, ok := l.streamMsg[e.exchange]; ok && e.exchange != 0 {
		l.streamMsg[e.exchange] = n + 1
	}
	if info.Kind == jsonrpc.KindResponse || info.Kind == jsonrpc.KindError {
		if t := info.ID.Type; t == jsonrpc.IDNull || t == jsonrpc.IDAbsent {
			l.unaddressed++
			m.IDKey = unaddressedKey(l.unaddressed)
		} else {
			k := m.IDKey
			m.Unsolicited = l.reqUses[k] == 0
			l.resUses[k]++
			m.IDKey = useKey(k, l.resUses[k])
			if ex, ok := l.streams[m.IDKey]; ok { // answered: not closed early
				delete(l.streams, m.IDKey)
				delete(l.streamMsg, ex)
			}
			if l.resUses[k] >= l.reqUses[k] {
				l.done.push(doneID{at: l.nSteps, key: k})
			}
		}
	}
	if info.Kind == jsonrpc.KindNotification {
		l.out.addServer(m)
		return
	}
	l.lastDep, l.lastDepKind, l.lastDepKey = idx, info.Kind, m.IDKey
	if info.Kind == jsonrpc.KindRequest {
		if e.exchange != 0 {
			m.Related = l.exchReq[e.exchange]
		}
		if m.Related != "" {
			l.s.hasRelated = true
		}
		k := [2]string{m.Related, m.Method}
		m.Ordinal = l.ordinal[k]
		l.ordinal[k]++
		m.SessionOrdinal = l.sessOrd[m.Method]
		l.sessOrd[m.Method]++
		l.serverReq[m.IDKey] = idx
	}
	l.out.addServer(m)
}

// forget drops the uses of the ids answered forgetLag steps ago and not
// used since.
func (l *loading) forget() {
	for l.done.len() > 0 && l.done.peek(0).at+forgetLag < l.nSteps {
		d := l.done.pop()
		if l.resUses[d.key] >= l.reqUses[d.key] {
			delete(l.reqUses, d.key)
			delete(l.resUses, d.key)
			delete(l.lastUse, d.key)
		}
	}
}

// discard is the sink of an index: it keeps nothing.
type discard struct{}

func (discard) addStep(Step)        {}
func (discard) addServer(ServerMsg) {}
func (discard) setAnswer(int, int)  {}

// addStep, addServer and setAnswer make a Session the sink that keeps
// everything (Load).
func (s *Session) addStep(st Step)         { s.Steps = append(s.Steps, st) }
func (s *Session) addServer(m ServerMsg)   { s.Server = append(s.Server, m) }
func (s *Session) setAnswer(srv, step int) { s.Server[srv].Answer = step }
