package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcptape/mcptape/internal/english"
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
	// StreamPath is, when the recorded server's answers came on a GET
	// event stream at another path than the endpoint (the LangGraph docs'
	// /mcp/stream, recorded in another session: see sidestream.go), that
	// stream's path; an HTTP replay opens it (HTTPOptions).
	StreamPath string
	// Cut reports that the tape ends, damaged, before the session's end
	// (no close event was recorded for it): what the server sent after
	// the cut is not in the recording, so live answers to requests whose
	// recorded answer is missing, server requests without a recorded
	// twin and the progress of such requests are not expected, and do not
	// change the verdict (the answers count in SessionReport.Unanswered,
	// a note counts the rest).
	Cut bool
	// Invalid counts the recorded server frames of the session that are
	// not JSON-RPC messages (a server's log line on stdout): they are not
	// compared, and as many live ones are let through, in any order; one
	// more fails the replay.
	Invalid int
	// CutFrames counts the client frames recorded cut (longer than the
	// recorder's frame limit, or a decoded body past its limit): they are
	// re-sent as recorded, cut, and a note in the report says so.
	CutFrames int

	// What the index of a streamed session counted (see StepCount and
	// Requests).
	stepCount, requests, initializes int
	firstRequest                     string

	hasRelated bool              // some server request has a known related request
	tokenOwner map[string]string // progress token key -> recorded id key of its request
	cancelled  map[string]bool   // recorded id keys of the requests the client cancelled
	unfinished []string          // recorded streamed answers the tape ends in (streamed.go)
	// path is set for a streamed session: Steps and Server are nil, and
	// a replay reads the session's records again from this tape file.
	path string
}

// StepCount returns the number of client messages: len(Steps) for a
// session held in memory.
func (s *Session) StepCount() int {
	if !s.Streamed() {
		return len(s.Steps)
	}
	return s.stepCount
}

// Requests returns how many requests the client sent, how many of them
// were initialize, and the method of its first request.
func (s *Session) Requests() (n, initializes int, first string) {
	if s.Streamed() {
		return s.requests, s.initializes, s.firstRequest
	}
	for _, st := range s.Steps {
		if st.Kind != jsonrpc.KindRequest {
			continue
		}
		if n == 0 {
			first = st.Method
		}
		n++
		if st.Method == "initialize" {
			initializes++
		}
	}
	return n, initializes, first
}

// Streamed reports whether the session's messages are read from its tape
// file as it is replayed (see Open) rather than held in Steps and Server.
func (s *Session) Streamed() bool { return s.path != "" }

func newSession(id string) *Session {
	return &Session{ID: id, tokenOwner: map[string]string{}, cancelled: map[string]bool{}}
}

// Step is one client-to-server message of a session.
type Step struct {
	// Frame is the recorded message (one member of a batch), or a frame
	// that is not a JSON-RPC message (Kind KindInvalid or KindBatch), sent
	// byte for byte.
	Frame []byte
	// Kind, Method and IDKey describe it. IDKey is ID.Key() ("" if none);
	// when the client used a request id again, the n-th use has the key
	// ID.Key()+"#n", and it is paired with the n-th answer to that id.
	Kind   jsonrpc.Kind
	Method string
	IDKey  string
	// Batch numbers the recorded batch the message was a member of (from
	// 1; 0 when it was sent alone), and BatchLen is that batch's size:
	// the members of a batch are consecutive steps, sent as one batch
	// unless WithUnbatch.
	Batch, BatchLen int
	// Refused is the HTTP error status (400 or more) with which the
	// recorded server answered the POST that carried the message, 0 when
	// it did not refuse it or the tape is not HTTP: a live refusal with
	// the same status is what was recorded, not a failure.
	Refused int
	// NoEOL is set for the last line of a stdio client whose input ended
	// without a newline (tape.Record.NoEOL): it is sent without one, and
	// the server's input is then ended, as the recorded server saw it
	// (transport.SendOptions.NoEOL).
	NoEOL bool
	// Closes is set (and Frame nil) for a step that sends nothing but
	// closes the HTTP response stream of the recorded request with this
	// id key, still unanswered, as the recorded client did (the
	// 2026-07-28 way to cancel): once CloseAfter server messages came on
	// that stream, as recorded before the close.
	Closes     string
	CloseAfter int
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
	// Record is the number of the record that carried the message in the
	// tape as it was read (from 1, the header not counted; the tapes read
	// joined counted as one), as inspect and show number records; 0 when
	// unknown (a session streamed from its file).
	Record int64
}

// ServerMsg is one server-to-client message of a session.
type ServerMsg struct {
	// Frame is the recorded message; Kind, Method and IDKey describe it,
	// Time is when it was recorded (Unix ns). The IDKey of the n-th
	// response to an id is ID.Key()+"#n" from the second on (see
	// Step.IDKey), and that of a response whose id is null or absent
	// "#n", n counting such responses: they are paired in order.
	Frame  []byte
	Kind   jsonrpc.Kind
	Method string
	IDKey  string
	Time   int64
	// After is how many client messages were recorded before it.
	After int
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
	// Stream holds, for an answer streamed in several results (joined
	// into Frame, see streamed.go), the parts as recorded; nil otherwise.
	Stream *StreamParts
	// Unsolicited marks a response to an id that no client request in
	// flight used (a server that answers with another id than it was
	// sent): its live twin is a live response to the same id, which the
	// replay did not send either; like a second answer to one request it
	// is waited for after the last client message (awaitLast), not
	// before the next one.
	Unsolicited bool
}

// StreamParts are the recorded parts of an answer streamed in several
// results under one id: the start and the deltas (Frames, recorded at
// Times) and End, the terminal answer as recorded. A player (mock) sends
// these; replay compares the joined Frame.
type StreamParts struct {
	Frames [][]byte
	Times  []int64
	End    []byte
}

// ErrNoClientMessages is wrapped by Load's error when the tape holds no
// client-to-server message to replay.
var ErrNoClientMessages = errors.New("no client-to-server messages to replay")

// Load reads every record of r and returns its sessions that hold at least
// one client-to-server message, in the order they first appear, held in
// memory. Batches are split into their members; client frames that are
// not JSON-RPC messages are steps sent as recorded, server frames that
// are not are skipped and counted in the returned number.
func Load(r *tape.Reader) (sessions []*Session, skipped int, err error) {
	t, err := LoadTape(r)
	if err != nil {
		return nil, 0, err
	}
	return t.Sessions, t.Skipped, nil
}

// LoadTape reads r as Load does and returns what it found, its gaps
// included (Tape.Warning is left to the caller: r.Warning()).
func LoadTape(r *tape.Reader) (*Tape, error) { return index(r, "", -1) }

// DefaultMemory is the budget of Open: the frame bytes of a tape whose
// sessions are held in memory, for replays to share.
const DefaultMemory = 8 << 20

// Tape is what Open found in a tape file.
type Tape struct {
	// Sessions are those with at least one client-to-server message, in
	// the order they first appear.
	Sessions []*Session
	// Skipped counts the recorded server frames that are not JSON-RPC
	// messages.
	Skipped int
	// Warning is the reader's warning about a damaged tail (nil if none).
	Warning error
	// Gaps are the messages of the tape's gap markers, the places where
	// records are missing though the tape reads on: a damaged or missing
	// tape of a rotated recording read joined (tape.OpenJoined), writing
	// that failed for a while (tape.GapData).
	Gaps []string
}

// Open reads the tape at path once and returns its sessions. When its
// message frames take at most memory bytes, the sessions are held in
// memory, as Load does; otherwise they are streamed: only their metadata
// is kept, and each replay of a session reads its records again from the
// file, holding only what is in flight (memory bounded by the sessions
// replayed at once, not by the tape). A negative memory holds every tape.
// Errors name the file; a damaged tail is not an error but Tape.Warning
// (also returned with an error).
func Open(path string, memory int64) (*Tape, error) {
	r, err := tape.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t, err := index(r, path, memory)
	if err != nil {
		// The warning may say why there is nothing to replay.
		return &Tape{Warning: r.Warning()}, fmt.Errorf("%s: %w", path, err)
	}
	t.Warning = r.Warning()
	return t, nil
}

// index reads r and builds its sessions, held in memory while the frames
// read take at most memory bytes (always when memory < 0), else streamed
// from path.
func index(r *tape.Reader, path string, memory int64) (*Tape, error) {
	byID := map[string]*loading{}
	var order []string
	closed := map[string]bool{}
	cutFrames := map[string]int{}
	t := &Tape{}
	var size int64
	streamed := false
	streams := getStreams{}
	var seq int64 // the record's number, as inspect and show count them
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("replay: reading tape: %w", err)
		}
		seq++
		if msg, ok := gapNote(rec); ok {
			t.Gaps = append(t.Gaps, msg)
		}
		if rec.Type == tape.TypeEvent && rec.Event == tape.EventClose {
			closed[rec.Session] = true
		}
		if isCutNote(rec) {
			cutFrames[rec.Session]++
		}
		if rec.Type == tape.TypeEvent && rec.Event == tape.EventHTTP {
			if l := byID[rec.Session]; l != nil {
				l.addEvent(rec)
			}
			streams.noteEvent(rec)
		}
		if rec.Type != tape.TypeMessage {
			continue
		}
		l := byID[rec.Session]
		if l == nil {
			s := newSession(rec.Session)
			var out sink = s
			if streamed {
				out = discard{}
			}
			l = newLoading(s, out, r.Header())
			byID[rec.Session] = l
			order = append(order, rec.Session)
		}
		if size += int64(len(rec.Frame)); memory >= 0 && size > memory && !streamed {
			streamed = true // from now on, keep only the metadata
			for _, l := range byID {
				l.out, l.s.Steps, l.s.Server = discard{}, nil, nil
			}
		}
		if p := streams.sidePath(rec); p != "" && l.s.StreamPath == "" {
			l.s.StreamPath = p
		}
		l.seq = seq
		t.Skipped += l.add(rec)
	}
	cut := r.Warning() != nil
	for _, id := range order {
		l := byID[id]
		l.finish()
		if s := l.s; s.stepCount > 0 {
			s.Cut = cut && !closed[id]
			s.CutFrames = cutFrames[id]
			if streamed {
				// A replay rebuilds what it needs as it reads.
				s.path, s.tokenOwner, s.cancelled = path, nil, nil
			}
			t.Sessions = append(t.Sessions, s)
		}
	}
	if len(t.Sessions) == 0 {
		return nil, fmt.Errorf("replay: tape: %w", ErrNoClientMessages)
	}
	return t, nil
}

// gapNote returns the message of rec when it is a gap marker: an "error"
// event with a "gap" (tape.GapData, or the note of a joined read).
func gapNote(rec *tape.Record) (string, bool) {
	if rec.Type != tape.TypeEvent || rec.Event != tape.EventError || !bytes.Contains(rec.Data, []byte(`"gap"`)) {
		return "", false
	}
	var d struct {
		Error string          `json:"error"`
		Gap   json.RawMessage `json:"gap"`
	}
	if json.Unmarshal(rec.Data, &d) != nil || len(d.Gap) == 0 || string(d.Gap) == "null" {
		return "", false
	}
	return d.Error, true
}

// isCutNote reports whether rec is the recorder's note that a client
// frame was recorded cut: an "error" event with the bytes "kept".
func isCutNote(rec *tape.Record) bool {
	if rec.Type != tape.TypeEvent || rec.Event != tape.EventError || rec.Dir != tape.ClientToServer || !bytes.Contains(rec.Data, []byte(`"kept"`)) {
		return false
	}
	var d struct {
		Kept *int `json:"kept"`
	}
	return json.Unmarshal(rec.Data, &d) == nil && d.Kept != nil
}

// Pick returns the session named id, or when id is "" the only session.
func Pick(sessions []*Session, id string) (*Session, error) {
	if id == "" {
		if len(sessions) == 1 {
			return sessions[0], nil
		}
		return nil, fmt.Errorf("replay: the tape has %s (%s); choose one with --session or replay all with --all", english.Count(len(sessions), "session"), sessionList(sessions))
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
