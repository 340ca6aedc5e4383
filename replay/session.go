package replay

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Session is one recorded session, ready to replay.
type Session struct {
	// ID is the session's name in the tape.
	ID string
	// Steps are the client-to-server messages, in the order they were sent.
	Steps []Step
	// Server are the server-to-client messages, in the order they arrived.
	Server []ServerMsg
	// Version is the protocol version the client asked for: the
	// protocolVersion of its initialize request or, for 2026-07-28
	// sessions without a handshake, the version in its first request's
	// _meta ("" when neither is known).
	Version string
	// Start is the time of the session's first message (Unix ns).
	Start int64
	// GetStream reports that the recorded server sent messages on the
	// Streamable HTTP GET stream: an HTTP replay should open it too.
	GetStream bool
	// Cut reports that the tape ends, damaged, before the session's end
	// (no close event was recorded for it): what the server sent after
	// the cut is not in the recording, so live answers to requests whose
	// recorded answer is missing, server requests without a recorded
	// twin and the progress of such requests are not expected, and do not
	// change the verdict (a note counts them).
	Cut bool

	hasRelated bool              // some server request has a known related request
	tokenOwner map[string]string // progress token key -> recorded id key of its request
	cancelled  map[string]bool   // recorded id keys of the requests the client cancelled
}

// Step is one client-to-server message of a session.
type Step struct {
	// Frame is the recorded message (one member of a batch).
	Frame []byte
	// Kind, Method and IDKey describe it (IDKey is ID.Key(), "" if none).
	Kind   jsonrpc.Kind
	Method string
	IDKey  string
	// Time is when it was recorded (Unix ns).
	Time int64
	// Deps are indexes into Session.Server of the messages whose live
	// equivalents must have arrived before the step is sent.
	Deps []int
	// Answers is, for the client's answer to a server request, the index
	// of that request in Session.Server; -1 otherwise.
	Answers int
	// Name is params.name or params.uri of a request, to name it in
	// reports.
	Name string
}

// ServerMsg is one server-to-client message of a session.
type ServerMsg struct {
	// Frame is the recorded message; Kind, Method and IDKey describe it,
	// Time is when it was recorded (Unix ns).
	Frame  []byte
	Kind   jsonrpc.Kind
	Method string
	IDKey  string
	Time   int64
	// Related is, for a server request that came on the HTTP stream of a
	// client request, that request's recorded id key ("" when unknown).
	Related string
	// Ordinal counts the server requests of the same Related and Method
	// before this one; SessionOrdinal those of the same Method in the
	// session.
	Ordinal, SessionOrdinal int
	// Answer is the index in Steps of the client's answer to this server
	// request, or -1.
	Answer int
}

// ErrNoClientMessages is wrapped by Load's error when the tape holds no
// client-to-server message to replay.
var ErrNoClientMessages = errors.New("no client-to-server messages to replay")

// Load reads every record of r and returns its sessions that hold at least
// one client-to-server message, in the order they first appear. Batches are
// split into their members; frames that are not JSON-RPC messages are
// skipped and counted in the returned number.
func Load(r *tape.Reader) (sessions []*Session, skipped int, err error) {
	byID := map[string]*loading{}
	var order []string
	closed := map[string]bool{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, skipped, fmt.Errorf("replay: reading tape: %w", err)
		}
		if rec.Type == tape.TypeEvent && rec.Event == tape.EventClose {
			closed[rec.Session] = true
		}
		if rec.Type != tape.TypeMessage {
			continue
		}
		l := byID[rec.Session]
		if l == nil {
			l = newLoading(rec.Session)
			byID[rec.Session] = l
			order = append(order, rec.Session)
		}
		skipped += l.add(rec)
	}
	cut := r.Warning() != nil
	for _, id := range order {
		if s := byID[id].finish(); len(s.Steps) > 0 {
			s.Cut = cut && !closed[id]
			sessions = append(sessions, s)
		}
	}
	if len(sessions) == 0 {
		return nil, skipped, fmt.Errorf("replay: tape: %w", ErrNoClientMessages)
	}
	return sessions, skipped, nil
}

// Pick returns the session named id, or when id is "" the only session.
func Pick(sessions []*Session, id string) (*Session, error) {
	if id == "" {
		if len(sessions) == 1 {
			return sessions[0], nil
		}
		return nil, fmt.Errorf("replay: the tape has %d sessions (%s); choose one with --session or replay all with --all", len(sessions), sessionList(sessions))
	}
	for _, s := range sessions {
		if s.ID == id {
			return s, nil
		}
	}
	return nil, fmt.Errorf("replay: session %q is not in the tape (sessions: %s)", id, sessionList(sessions))
}

func sessionList(sessions []*Session) string {
	out := ""
	for i, s := range sessions {
		if i == 5 {
			return out + fmt.Sprintf(", ... %d more", len(sessions)-5)
		}
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", s.ID)
	}
	return out
}

// loading accumulates one session's messages.
type loading struct {
	s         *Session
	lastDep   int               // last server response or request, -1
	serverReq map[string]int    // recorded server request id key -> index
	exchReq   map[uint64]string // HTTP exchange -> first client request id key on it
	ordinal   map[[2]string]int
	sessOrd   map[string]int
	entries   []entry
}

func newLoading(id string) *loading {
	return &loading{
		s: &Session{ID: id, tokenOwner: map[string]string{}, cancelled: map[string]bool{}}, lastDep: -1, serverReq: map[string]int{},
		exchReq: map[uint64]string{}, ordinal: map[[2]string]int{}, sessOrd: map[string]int{},
	}
}

// entry is one message of a session as read from the tape.
type entry struct {
	rec   *tape.Record
	frame []byte
	info  jsonrpc.Info
}

// add takes one message record and returns how many frames it skipped.
func (l *loading) add(rec *tape.Record) int {
	if l.s.Start == 0 {
		l.s.Start = rec.Time
	}
	members := [][]byte{rec.Frame}
	if info := jsonrpc.Classify(rec.Frame); info.Kind == jsonrpc.KindBatch {
		members, _ = jsonrpc.Split(rec.Frame)
	}
	skipped := 0
	for _, m := range members {
		info := jsonrpc.Classify(m)
		if info.Kind == jsonrpc.KindInvalid || info.Kind == jsonrpc.KindBatch {
			skipped++
			continue
		}
		l.entries = append(l.entries, entry{rec: rec, frame: m, info: info})
	}
	return skipped
}

// finish builds the session from its entries, in time order. A capture
// proxy records the two directions from two goroutines, so records are not
// always in time order in the tape, and an answer can even be stamped just
// before the message it answers: such an answer (a server response whose
// request comes later, a client response whose server request comes later)
// is moved right after the message it answers.
func (l *loading) finish() *Session {
	sort.SliceStable(l.entries, func(i, j int) bool { return l.entries[i].rec.Time < l.entries[j].rec.Time })
	later := map[string]bool{} // c2s request keys still to come, "c"+key; s2c request keys, "s"+key
	for _, e := range l.entries {
		if e.info.Kind == jsonrpc.KindRequest {
			later[dirKey(e.rec.Dir, e.info.ID)] = true
		}
	}
	held := map[string][]entry{}
	for _, e := range l.entries {
		switch e.info.Kind {
		case jsonrpc.KindRequest:
			k := dirKey(e.rec.Dir, e.info.ID)
			delete(later, k)
			l.build(e)
			for _, h := range held[k] {
				l.build(h)
			}
			delete(held, k)
		case jsonrpc.KindResponse, jsonrpc.KindError:
			// The request it answers went the other way.
			other := tape.ClientToServer
			if e.rec.Dir == tape.ClientToServer {
				other = tape.ServerToClient
			}
			if k := dirKey(other, e.info.ID); later[k] {
				held[k] = append(held[k], e)
				continue
			}
			l.build(e)
		default:
			l.build(e)
		}
	}
	l.entries = nil
	return l.s
}

// dirKey names an id in the id space of one direction.
func dirKey(d tape.Direction, id jsonrpc.ID) string { return string(d) + " " + id.Key() }

// build adds one entry to the session.
func (l *loading) build(e entry) {
	frame := append([]byte(nil), e.frame...)
	if e.rec.Dir == tape.ServerToClient {
		l.addServer(e.rec, frame, &e.info)
	} else {
		l.addClient(e.rec, frame, &e.info)
	}
}

func (l *loading) addClient(rec *tape.Record, frame []byte, info *jsonrpc.Info) {
	st := Step{Frame: frame, Kind: info.Kind, Method: info.Method, IDKey: info.ID.Key(), Time: rec.Time, Answers: -1}
	if l.lastDep >= 0 {
		st.Deps = append(st.Deps, l.lastDep)
	}
	switch info.Kind {
	case jsonrpc.KindRequest:
		st.Name = paramsName(frame)
		if rec.Exchange != 0 {
			if _, ok := l.exchReq[rec.Exchange]; !ok {
				l.exchReq[rec.Exchange] = st.IDKey
			}
		}
		if l.s.Version == "" {
			l.s.Version = requestVersion(frame, info.Method)
		}
		if info.ProgressToken.Type != jsonrpc.IDAbsent {
			l.s.tokenOwner[info.ProgressToken.Key()] = st.IDKey
		}
	case jsonrpc.KindNotification:
		if info.CancelTarget.Type != jsonrpc.IDAbsent {
			target := info.CancelTarget.Key()
			l.s.cancelled[target] = true
			// The answer to the cancelled request may be stamped before
			// the cancel (an HTTP proxy records a POST when it is
			// answered), but it cannot be waited for: it may only come
			// because of the cancel.
			if len(st.Deps) > 0 && l.isResponseTo(st.Deps[0], target) {
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
			l.s.Server[i].Answer = len(l.s.Steps)
			delete(l.serverReq, st.IDKey)
		}
	}
	l.s.Steps = append(l.s.Steps, st)
}

// isResponseTo reports whether Server[i] is the response to the client
// request with id key.
func (l *loading) isResponseTo(i int, key string) bool {
	m := &l.s.Server[i]
	return (m.Kind == jsonrpc.KindResponse || m.Kind == jsonrpc.KindError) && m.IDKey == key
}

func (l *loading) addServer(rec *tape.Record, frame []byte, info *jsonrpc.Info) {
	m := ServerMsg{Frame: frame, Kind: info.Kind, Method: info.Method, IDKey: info.ID.Key(), Time: rec.Time, Answer: -1}
	if rec.Stream == "get" {
		l.s.GetStream = true
	}
	if info.Kind == jsonrpc.KindNotification {
		l.s.Server = append(l.s.Server, m)
		return
	}
	idx := len(l.s.Server)
	l.lastDep = idx
	if info.Kind == jsonrpc.KindRequest {
		if rec.Exchange != 0 {
			m.Related = l.exchReq[rec.Exchange]
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
	l.s.Server = append(l.s.Server, m)
}
