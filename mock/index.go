package mock

import (
	"errors"
	"fmt"
	"sort"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/replay"
)

// item is one server message of a recorded request's playback.
type item struct {
	frame []byte
	kind  jsonrpc.Kind
	at    int64 // recorded time, Unix ns
	// answerAt is, for a server request, the recorded time of the client's
	// answer (0: the client never answered, do not wait).
	answerAt int64
	// progress marks a progress notification, sent under the live token.
	progress bool
	// part marks a part of an answer streamed in several results, sent
	// under the live request id.
	part bool
}

// entry is one recorded client request with what the server said for it.
type entry struct {
	req   request
	key   string
	frame []byte
	at    int64
	// record is the tape record that carried the request (replay.Step.Record:
	// as inspect and show number records), 0 when unknown.
	record int64
	// script is what the server sent between the request and its answer.
	script []item
	// resp is the recorded answer, nil when the server never answered.
	resp *item
	// tail is what the server sent after the answer and before the next
	// client request: spontaneous messages (list_changed, logs).
	tail []item
	// cancelAt is when the recorded client cancelled the request (0: it
	// did not): what the server sent after that depended on the cancel.
	cancelAt int64
	// asked counts the live requests this entry answered.
	asked int
}

// Index is the matching index of one recorded session: every client
// request by key, each with its recorded answer and playback.
type Index struct {
	byKey   map[string][]*entry
	entries []*entry
	// version is the protocol version the recorded server answered
	// initialize with ("" when the session has no handshake).
	version string
	// logging reports that the recorded server offered the logging
	// capability in its initialize result.
	logging bool
	id      string // the recorded sessions' ids, comma-separated
	match   Match
}

// NewIndex builds the index of the recorded sessions under match mode m.
// Several sessions make one pool: their requests in the order of the
// sessions, each session's in recorded order (a key asked in two recorded
// sessions answers the first session's answer first).
func NewIndex(sessions []*replay.Session, m Match) (*Index, error) {
	if len(sessions) == 0 {
		return nil, errors.New("mock: no session to serve")
	}
	x := &Index{byKey: map[string][]*entry{}, match: m}
	for i, s := range sessions {
		if s.Streamed() { // its messages are in the file, not in s
			return nil, fmt.Errorf("mock: session %q is streamed from its tape: load it in memory (replay.Load, or replay.Open with a negative memory)", s.ID)
		}
		if i > 0 {
			x.id += ", "
		}
		x.id += s.ID
		if err := x.addSession(s); err != nil {
			return nil, err
		}
	}
	for _, e := range x.entries {
		if e.req.method == "initialize" && e.resp != nil {
			x.version = resultVersion(e.resp.frame)
			x.logging = offersLogging(e.resp.frame)
			break
		}
	}
	return x, nil
}

// addSession indexes the requests of one recorded session, each with the
// server messages it owns: its answer; progress with its token; a server
// request on its HTTP stream; otherwise what came while it was the latest
// request waiting for its answer. What came when no request was waiting
// is played after the answer of the latest request (its tail).
func (x *Index) addSession(s *replay.Session) error {
	reqOf := map[string]*entry{}   // recorded id key -> entry
	tokenOf := map[string]*entry{} // progress token key -> entry
	var pending []*entry           // requests not answered yet, oldest first
	var last *entry                // the latest request sent
	var lead []item                // what came before the first request
	cursor := 0                    // next step
	steps, server := s.Steps, s.Server
	first := len(x.entries)
	for i := 0; i <= len(server); i++ {
		// Take every client step recorded before server message i.
		for cursor < len(steps) && (i == len(server) || steps[cursor].Time <= server[i].Time) {
			st := &steps[cursor]
			cursor++
			if st.Kind != jsonrpc.KindRequest {
				if st.Kind == jsonrpc.KindNotification {
					if info := jsonrpc.Classify(st.Frame); info.CancelTarget.Type != jsonrpc.IDAbsent {
						if e := reqOf[info.CancelTarget.Key()]; e != nil && e.resp == nil {
							e.cancelAt = st.Time
							pending = drop(pending, e)
						}
					}
				}
				continue
			}
			e, err := x.add(st)
			if err != nil {
				return err
			}
			reqOf[st.IDKey] = e
			if info := jsonrpc.Classify(st.Frame); info.ProgressToken.Type != jsonrpc.IDAbsent {
				tokenOf[info.ProgressToken.Key()] = e
			}
			pending = append(pending, e)
			last = e
		}
		if i == len(server) {
			break
		}
		m := &server[i]
		it := item{frame: m.Frame, kind: m.Kind, at: m.Time}
		var owner *entry
		switch m.Kind {
		case jsonrpc.KindResponse, jsonrpc.KindError:
			if e := reqOf[m.IDKey]; e != nil && e.resp == nil {
				if ps := m.Stream; ps != nil {
					// Streamed in several results: the parts, at their
					// recorded times, then the end as recorded.
					for j, f := range ps.Frames {
						e.script = append(e.script, item{frame: f, kind: jsonrpc.KindResponse, at: ps.Times[j], part: true})
					}
					it.frame = ps.End
				}
				e.resp = &it
				pending = drop(pending, e)
			}
			continue // else an answer to nothing recorded: a real server would not send it
		case jsonrpc.KindRequest:
			if m.Answer >= 0 {
				it.answerAt = steps[m.Answer].Time
			}
			if m.Related != "" {
				owner = reqOf[m.Related]
			}
		case jsonrpc.KindNotification:
			if info := jsonrpc.Classify(m.Frame); info.ProgressToken.Type != jsonrpc.IDAbsent {
				owner = tokenOf[info.ProgressToken.Key()]
				if owner == nil {
					continue // progress for no recorded request
				}
				it.progress = true
			}
		}
		if owner == nil && len(pending) > 0 {
			owner = pending[len(pending)-1]
		}
		switch {
		case owner != nil && owner.resp == nil:
			owner.script = append(owner.script, it)
		case owner != nil:
			owner.tail = append(owner.tail, it)
		case last != nil:
			last.tail = append(last.tail, it)
		default:
			lead = append(lead, it)
		}
	}
	if len(lead) > 0 && first < len(x.entries) {
		// Sent before anything was asked (a list_changed before the
		// initialize answer): played after the first answer.
		e := x.entries[first]
		e.tail = append(lead, e.tail...)
	}
	return nil
}

// drop returns list without e.
func drop(list []*entry, e *entry) []*entry {
	for i, x := range list {
		if x == e {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// add indexes one recorded client request.
func (x *Index) add(st *replay.Step) (*entry, error) {
	r, err := parseRequest(st.Frame)
	if err != nil {
		return nil, fmt.Errorf("mock: recorded request %s %s: %w", st.Method, st.IDKey, err)
	}
	e := &entry{req: r, key: r.key(x.match), frame: st.Frame, at: st.Time, record: st.Record}
	e.req.params = nil // kept small: closest decodes the frame again when needed
	x.entries = append(x.entries, e)
	x.byKey[e.key] = append(x.byKey[e.key], e)
	return e, nil
}

// Requests returns the number of recorded client requests.
func (x *Index) Requests() int { return len(x.entries) }

// Version returns the protocol version the recorded server negotiated, ""
// when the session has no initialize answer.
func (x *Index) Version() string { return x.version }

// Session returns the recorded sessions' ids, comma-separated.
func (x *Index) Session() string { return x.id }

// methods returns the recorded request methods, sorted, each once.
func (x *Index) methods() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range x.entries {
		if !seen[e.req.method] {
			seen[e.req.method] = true
			out = append(out, e.req.method)
		}
	}
	sort.Strings(out)
	return out
}

// stateless reports whether the recording is of a protocol without
// handshake (2026-07-28): no initialize answer, or a server/discover.
func (x *Index) stateless() bool {
	return x.version == "" || len(x.byKey["server/discover"]) > 0
}
