package analysis

import (
	"encoding/base64"
	"encoding/json"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// stderrKept is how many of a session's last stderr lines are kept.
const stderrKept = 3

// sessionState is what the Inspector keeps per session. Sessions beyond
// the listing bound are "folded": they keep the protocol state (version,
// handshake) and the counters that Report.FoldedSessions sums, but no
// counts by method or tool of their own.
type sessionState struct {
	id          string
	folded      bool
	first, last int64

	version      string // negotiated protocol version
	requested    string // asked for in initialize
	modern       bool   // 2026-07-28: version in every request's _meta
	initSent     bool
	sessionless  bool // HTTP without a session id: one per connection (see deferHandshake)
	flaggedEarly bool
	metaChecks   int // client requests searched for a _meta version
	client       *Peer
	server       *Peer

	messages    int64
	byKind      [jsonrpc.KindBatch + 1]int64
	byDir       [3]int64
	counts      map[countKey]*int64
	tools       map[string]*int64
	lastCounts  [2][jsonrpc.KindBatch + 1]countSlot // by dirIndex and kind: the last method counted
	hotTools    hot[string, *int64]
	stderrLines int64
	stderr      []string
	exit        *ExitInfo
	closedBy    string
	// closeOutcome is how the session's close ends its requests still in
	// flight at the tape's end, sent before it (closedAt): see
	// sessionCloseOutcome.
	closeOutcome string
	closedAt     int64
	closedSeq    int64 // the close's record number

	violations, unanswered, errors int64
	toolErrors, cancelled          int64
	refused, brokenOff             int64            // see SessionReport
	refusedNotes                   int64            // SessionReport.RefusedNotifications
	abandoned, unfinished          int64            // MRTR operations never retried, tasks never finished
	details                        *SessionDetails  // WithSessionDetails; nil for none yet
	violationRules                 map[string]int64 // violations by rule
	maxLatency                     int64            // the slowest client request answered, ns
	slowest                        string           // its method (and tool)

	// inflight's scopes of the session's requests sent client to server
	// and server to client (see pairs)
	scopes [2]scopeRef[*request]
}

// violated counts one violation of rule in the session.
func (s *sessionState) violated(rule string) {
	s.violations++
	if s.violationRules == nil {
		s.violationRules = map[string]int64{}
	}
	s.violationRules[rule]++
}

// pairs returns the handle of the Inspector's Pairer scope of the
// session's requests sent in dir, or nil for a direction other than the
// two.
func (s *sessionState) pairs(dir tape.Direction) *scopeRef[*request] {
	switch dir {
	case tape.ClientToServer:
		return &s.scopes[0]
	case tape.ServerToClient:
		return &s.scopes[1]
	}
	return nil
}

type countKey struct {
	dir    tape.Direction
	kind   jsonrpc.Kind
	method string
}

// session returns the state of the named session, creating it.
func (in *Inspector) session(id string, t int64) *sessionState {
	set := &in.sessSlots[sessionSlot(id)]
	s := set[0]
	if s == nil || s.id != id {
		if s = set[1]; s == nil || s.id != id {
			s = in.newSession(id, t)
			set[0], set[1] = s, set[0]
		}
	}
	s.first = min(s.first, t)
	s.last = max(s.last, t)
	return s
}

// newSession returns the state of the named session from the map,
// creating it.
func (in *Inspector) newSession(id string, t int64) *sessionState {
	if s := in.sessions[id]; s != nil {
		return s
	}
	s := &sessionState{id: id, first: t}
	if len(in.order) < in.o.maxSessions {
		s.counts = map[countKey]*int64{}
		s.tools = map[string]*int64{}
		in.order = append(in.order, s)
	} else {
		s.folded = true
		in.folded++
		if in.foldedTools == nil {
			in.foldedTools = map[string]*int64{}
		}
		s.tools = in.foldedTools // summed for Report.FoldedSessions
	}
	in.sessions[id] = s
	return s
}

// sessionSlots is how many sets of two sessions Inspector.session keeps at
// hand.
const sessionSlots = 64

// sessionSlot hashes a session name by where its bytes are, not by what
// they are: the tape.Reader interns session names, so a session's records
// share one string, whose set is found without reading it, and whose
// comparison with a cached name ends at the equal pointers. A name stored
// elsewhere only costs the map lookup a miss costs.
func sessionSlot(id string) int {
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(id))))
	return int(p * 0x9E3779B97F4A7C15 >> 58) // the top 6 bits: < sessionSlots
}

// countSlot is the count of the last method counted for one direction
// and kind: the next message of that direction and kind is most often of
// the same method, whose interned name compares at once.
type countSlot struct {
	method string
	n      *int64
}

func (s *sessionState) count(dir tape.Direction, kind jsonrpc.Kind, method string) {
	if s.counts == nil {
		return
	}
	var slot *countSlot
	if d := dirIndex(dir); d < len(s.lastCounts) && int(kind) < len(s.lastCounts[d]) {
		if slot = &s.lastCounts[d][kind]; slot.n != nil && slot.method == method {
			*slot.n++
			return
		}
	}
	k := countKey{dir, kind, method}
	n := s.counts[k]
	if n == nil {
		n = new(int64)
		s.counts[k] = n
	}
	*n++
	if slot != nil {
		*slot = countSlot{method, n}
	}
}

func (s *sessionState) tool(name string) {
	if s.tools != nil {
		increment(s.tools, &s.hotTools, name)
	}
}

// increment adds one to the count of k in m, through the cache h.
func increment[K comparable](m map[K]*int64, h *hot[K, *int64], k K) {
	n, ok := h.get(k)
	if !ok {
		if n = m[k]; n == nil {
			n = new(int64)
			m[k] = n
		}
		h.put(k, n)
	}
	*n++
}

func dirIndex(d tape.Direction) int {
	switch d {
	case tape.ClientToServer:
		return 0
	case tape.ServerToClient:
		return 1
	}
	return 2
}

// Event payloads read by the inspector (written by the capture package).
type (
	stderrEvent struct {
		Line *string `json:"line"`
		B64  string  `json:"b64"`
	}
	exitEvent struct {
		Code   int    `json:"code"`
		Signal string `json:"signal"`
	}
	closeEvent struct {
		By     string `json:"by"`
		Reason string `json:"reason"`
	}
	openEvent struct {
		Kind string `json:"kind"`
	}
	errorEvent struct {
		Error     string          `json:"error"`
		Truncated bool            `json:"truncated"` // HTTP: the next message of the exchange, in the event's direction, is cut
		Gap       json.RawMessage `json:"gap"`       // records are missing here (tape.GapData)
	}
)

// event handles an event record.
func (in *Inspector) event(it *Item) {
	rec := it.Rec
	switch rec.Event {
	case tape.EventStderr:
		s := in.session(rec.Session, rec.Time)
		s.stderrLines++
		if s.folded {
			return
		}
		var d stderrEvent
		_ = json.Unmarshal(rec.Data, &d) // a malformed payload shows as an empty line
		line := ""
		switch {
		case d.Line != nil:
			line = *d.Line
		case d.B64 != "":
			if b, err := base64.StdEncoding.DecodeString(d.B64); err == nil {
				line = string(b)
				if !utf8.ValidString(line) {
					line = "(binary) " + d.B64
				}
			}
		}
		if len(s.stderr) == stderrKept {
			copy(s.stderr, s.stderr[1:])
			s.stderr = s.stderr[:stderrKept-1]
		}
		s.stderr = append(s.stderr, clip(line, 200))
	case tape.EventExit:
		s := in.session(rec.Session, rec.Time)
		var d exitEvent
		if json.Unmarshal(rec.Data, &d) == nil {
			s.exit = &ExitInfo{Code: d.Code, Signal: d.Signal}
		}
	case tape.EventOpen:
		var d openEvent
		if json.Unmarshal(rec.Data, &d) == nil && d.Kind == "connection" {
			in.session(rec.Session, rec.Time).sessionless = true
		}
	case tape.EventClose:
		s := in.session(rec.Session, rec.Time)
		var d closeEvent
		if json.Unmarshal(rec.Data, &d) == nil {
			s.closedBy = d.By
			s.closeOutcome, s.closedAt, s.closedSeq = sessionCloseOutcome(d.By, d.Reason), rec.Time, it.Seq
		}
	case tape.EventError:
		var d errorEvent
		_ = json.Unmarshal(rec.Data, &d)
		if d.Truncated && rec.Exchange != 0 && rec.Dir != "" {
			in.expectCut(rec.Exchange, rec.Dir)
		}
		if len(d.Gap) > 0 && string(d.Gap) != "null" {
			in.rep.Tape.Gaps++
			in.gaps = append(in.gaps, it.Seq)
		}
		if d.Error == "" {
			d.Error = clip(string(rec.Data), 200)
		}
		in.proxyError(it, d.Error)
	case tape.EventWS:
		// The close a recorder sends both sides after refusing a message
		// over its limit (not an abrupt end: a peer dropped) carries the
		// refusal: the message is not in the tape.
		var d struct {
			Kind   string `json:"kind"`
			Abrupt bool   `json:"abrupt"`
			Error  string `json:"error"`
		}
		if json.Unmarshal(rec.Data, &d) == nil && d.Kind == "close" && !d.Abrupt && d.Error != "" {
			in.rep.UnrecordedMessages++
			in.proxyError(it, d.Error)
		}
	case tape.EventHTTP:
		in.httpExchange(it)
	case tape.EventStats:
		var d tape.StatsData
		if json.Unmarshal(rec.Data, &d) == nil {
			t := &in.rep.Tape
			t.Late += d.Late
			t.LateMaxNS = max(t.LateMaxNS, d.LateMaxNs)
			t.Reordered += d.Reordered
		}
	}
}

// proxyError counts an error the recorder noted in the tape (it, an
// event), listing the first ones.
func (in *Inspector) proxyError(it *Item, msg string) {
	in.rep.ProxyErrorsN++
	if len(in.rep.ProxyErrors) < in.o.maxListed {
		rec := it.Rec
		in.rep.ProxyErrors = append(in.rep.ProxyErrors, Example{Session: rec.Session, Seq: it.Seq,
			OffsetNS: rec.Time - in.origin, Detail: clip(msg, 200)})
	}
}

// clip shortens s to at most n runes, marking a cut with "…", and
// replaces control characters with "·" so that a value stays on one line.
func clip(s string, n int) string {
	clean := true
	for i := 0; i < len(s); i++ {
		// C0, DEL, and C1 (U+0080 to U+009F: C2 80 to C2 9F in UTF-8).
		if s[i] < 0x20 || s[i] == 0x7f || (s[i] == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f) {
			clean = false
			break
		}
	}
	count := utf8.RuneCountInString(s)
	if clean && count <= n {
		return s
	}
	out := make([]rune, 0, min(count, n))
	for _, r := range s {
		if count > n && len(out) == max(n-1, 0) {
			if n > 0 {
				out = append(out, '…')
			}
			break
		}
		if unicode.IsControl(r) {
			r = '·'
		}
		out = append(out, r)
	}
	return string(out)
}

// cutKey names the next message of an HTTP exchange in one direction.
type cutKey struct {
	exchange uint64
	dir      tape.Direction
}

// expectCut notes that the next message of exchange in direction dir was
// recorded cut: the HTTP recorder announces it just before it.
func (in *Inspector) expectCut(exchange uint64, dir tape.Direction) {
	if len(in.cuts) >= maxOpenExchanges {
		clear(in.cuts) // announced messages never came (a cut tape?): stay bounded
	}
	in.cuts[cutKey{exchange, dir}] = struct{}{}
}

// isCut reports whether the message rec was announced as cut, and forgets
// the announcement.
func (in *Inspector) isCut(rec *tape.Record) bool {
	if len(in.cuts) == 0 || rec.Exchange == 0 {
		return false
	}
	k := cutKey{rec.Exchange, rec.Dir}
	if _, ok := in.cuts[k]; !ok {
		return false
	}
	delete(in.cuts, k)
	return true
}

// keepDetail adds the value v makes to l, a list of s's details, while
// the list holds fewer than WithSessionDetails, the session has an entry
// of its own and all sessions keep fewer than MaxSessionDetails of l's
// kind: each kind has its bound, so that a tape full of one (error
// responses, violations) leaves room for the others, some of which are
// known only at its end (the requests never answered, the operations
// never finished).
func keepDetail[T any](in *Inspector, s *sessionState, l detailList[T], v func() T) {
	if in.o.sessionDetails == 0 || s == nil || s.folded || in.kept[l.kind] >= MaxSessionDetails {
		return
	}
	if s.details == nil {
		s.details = &SessionDetails{}
	}
	if list := l.of(s.details); len(*list) < in.o.sessionDetails {
		*list = append(*list, v())
		in.kept[l.kind]++
	}
}
