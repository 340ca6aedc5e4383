package mock

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/tape"
)

// ErrMismatch is wrapped by the error of a strict run that met a request
// matching no recorded one.
var ErrMismatch = errors.New("a request matches no recorded request")

// ErrDisconnected is wrapped by the error of a run ended by
// Faults.DisconnectAfter.
var ErrDisconnected = errors.New("disconnected on purpose (--disconnect-after)")

// Mock answers live clients from one recorded session. It is safe for
// concurrent use by several connections (Conn), which share its matching
// state: a key recorded twice answers its first recorded answer to the
// first asker, whichever connection that is.
type Mock struct {
	x *Index
	o *options

	mu    sync.Mutex
	asked map[string]int // key -> live requests it answered
	rng   *rand.Rand
	rep   Report
	conns int
	// claimed counts the answers claimed (claim): sent or being sent.
	claimed int

	done    chan struct{}
	doneErr error
}

// New returns a Mock of the recorded sessions (see NewIndex for how
// several make one pool).
func New(sessions []*replay.Session, opts ...Option) (*Mock, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	x, err := NewIndex(sessions, o.match)
	if err != nil {
		return nil, err
	}
	m := &Mock{x: x, o: o, asked: map[string]int{}, done: make(chan struct{})}
	f := o.faults
	if f.ErrorRate > 0 || f.DropRate > 0 || f.Jitter > 0 {
		m.rng = rand.New(rand.NewSource(f.Seed)) //nolint:gosec // fault draws, not secrets
	}
	m.rep.Session = x.id
	m.rep.Recorded = x.Requests()
	return m, nil
}

// Index returns the mock's matching index.
func (m *Mock) Index() *Index { return m.x }

// Done is closed when the run must end: a strict mismatch, or the
// disconnect fault. Err then tells why.
func (m *Mock) Done() <-chan struct{} { return m.done }

// Err returns why Done was closed (nil while it is open).
func (m *Mock) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.doneErr
}

// finish closes Done with err, once. mu is held.
func (m *Mock) finish(err error) {
	if m.doneErr != nil {
		return
	}
	m.doneErr = err
	close(m.done)
}

// choose returns the recorded request that answers r, or nil and why none
// does. It counts the request in the report.
func (m *Mock) choose(r *request) (*entry, string) {
	key := r.key(m.o.match)
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.x.byKey[key]
	if len(list) == 0 {
		why := m.x.closest(r)
		m.rep.Unmatched = append(m.rep.Unmatched, Unmatched{Request: r.describe(), Why: why})
		if m.o.strict {
			m.finish(fmt.Errorf("%w: %s: %s", ErrMismatch, r.describe(), why))
		}
		return nil, why
	}
	n := m.asked[key]
	m.asked[key] = n + 1
	switch {
	case n < len(list):
	case m.o.cycle:
		n %= len(list)
	default:
		n = len(list) - 1
	}
	e := list[n]
	e.asked++
	return e, ""
}

// fault is what happens to one request's answer.
type fault struct {
	drop, fail bool
	delay      time.Duration
}

// draw decides the fault of the next request.
func (m *Mock) draw() fault {
	f := m.o.faults
	out := fault{delay: f.Delay}
	if m.rng == nil {
		return out
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.rng.Float64()
	out.drop = p < f.DropRate
	out.fail = !out.drop && p < f.DropRate+f.ErrorRate
	if f.Jitter > 0 {
		out.delay += time.Duration(m.rng.Int63n(int64(f.Jitter) + 1))
	}
	if out.drop {
		m.rep.Dropped++
	}
	if out.fail {
		m.rep.Failed++
	}
	return out
}

// claim takes the right to send one answer: false once the run has
// ended, or once the disconnect fault's answers are all claimed (answers
// played at the same moment must not overshoot it).
func (m *Mock) claim() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.doneErr != nil {
		return false
	}
	if n := m.o.faults.DisconnectAfter; n > 0 && m.claimed >= n {
		return false
	}
	m.claimed++
	return true
}

// answered ends a claim: the answer was sent or not. A request matched is
// counted here, once answered (not when the disconnect, a send error or
// the client's cancel came first), and the run ends when the disconnect
// fault says so.
func (m *Mock) answered(sent bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !sent {
		m.claimed--
		return
	}
	m.rep.Matched++
	if n := m.o.faults.DisconnectAfter; n > 0 && m.rep.Matched >= n {
		m.finish(fmt.Errorf("%w: after %s", ErrDisconnected, english.Count(n, "answer")))
	}
}

// note adds a remark to the report.
func (m *Mock) note(format string, a ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.rep.Notes) < maxNotes {
		m.rep.Notes = append(m.rep.Notes, fmt.Sprintf(format, a...))
	}
}

// maxNotes bounds the notes of a report.
const maxNotes = 50

// closest names the recorded request nearest to r and why it does not
// match.
func (x *Index) closest(r *request) string {
	var best *entry
	var bestDiffs []string
	bestN := -1
	for _, e := range x.entries {
		if e.req.method != r.method {
			continue
		}
		rec, err := parseRequest(e.frame)
		if err != nil { // not reached: the index parsed it
			continue
		}
		all := differences(rec.params, r.params, 1000)
		if bestN < 0 || len(all) < bestN {
			best, bestN, bestDiffs = e, len(all), all
		}
	}
	if best == nil {
		return fmt.Sprintf("no recorded request has method %q (recorded: %s)", r.method, strings.Join(x.methods(), ", "))
	}
	why := strings.Join(firstN(bestDiffs, 3), "; ")
	if why == "" {
		why = "the " + x.match.String() + " keys differ"
	}
	if len(bestDiffs) > 3 {
		why += "; " + english.Count(len(bestDiffs)-3, "more difference")
	}
	return fmt.Sprintf("closest recorded request is %s: %s", best.describe(), why)
}

// describe names a recorded request with the number of its record in the
// tape, as inspect and show number records: "record 4, tools/call "roll"".
func (e *entry) describe() string {
	if e.record == 0 {
		return e.req.describe()
	}
	return fmt.Sprintf("record %d, %s", e.record, e.req.describe())
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Report is what a mock run served.
type Report struct {
	// Session is the recorded sessions' ids, comma-separated; Recorded
	// their client requests.
	Session  string `json:"session"`
	Recorded int    `json:"recorded"`
	// Matched counts the live requests answered from the recording (an
	// injected error included): a request matched but not answered, cut
	// by the disconnect fault, dropped (Dropped) or cancelled, is not.
	Matched int `json:"matched"`
	// Unmatched lists the live requests no recorded request matched.
	Unmatched []Unmatched `json:"unmatched,omitempty"`
	// NeverAsked lists the recorded requests no live request matched.
	NeverAsked []string `json:"never_asked,omitempty"`
	// Failed and Dropped count the injected faults.
	Failed  int `json:"failed,omitempty"`
	Dropped int `json:"dropped,omitempty"`
	// Notes are remarks: version negotiation, answers to unknown ids...
	Notes []string `json:"notes,omitempty"`
}

// Unmatched is one live request that no recorded request matched.
type Unmatched struct {
	Request string `json:"request"`
	Why     string `json:"why"`
}

// Report returns what the mock has served so far.
func (m *Mock) Report() Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rep
	r.Unmatched = append([]Unmatched(nil), r.Unmatched...)
	r.Notes = append([]string(nil), r.Notes...)
	r.NeverAsked = nil
	for _, e := range m.x.entries {
		if e.asked == 0 {
			r.NeverAsked = append(r.NeverAsked, e.describe())
		}
	}
	return r
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w interface{ Write([]byte) (int, error) }) error {
	var b strings.Builder
	fmt.Fprintf(&b, "mock of %s: %s matched, %d unmatched; %d of %d %s never asked\n",
		sessionsText(r.Session), english.Count(r.Matched, "request"), len(r.Unmatched), len(r.NeverAsked), r.Recorded, english.Noun(r.Recorded, "recorded request"))
	for _, u := range r.Unmatched {
		fmt.Fprintf(&b, "  unmatched: %s: %s\n", u.Request, u.Why)
	}
	for _, n := range firstN(r.NeverAsked, 20) {
		fmt.Fprintf(&b, "  never asked: %s\n", n)
	}
	if len(r.NeverAsked) > 20 {
		fmt.Fprintf(&b, "  ... %d more never asked\n", len(r.NeverAsked)-20)
	}
	if r.Failed > 0 || r.Dropped > 0 {
		fmt.Fprintf(&b, "  faults: %d answered with an error, %d dropped\n", r.Failed, r.Dropped)
	}
	notes := append([]string(nil), r.Notes...)
	sort.Strings(notes)
	for _, n := range notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	_, err := w.Write([]byte(b.String()))
	return err
}

// record writes a frame to the output tape, when there is one.
func (m *Mock) record(session string, dir tape.Direction, frame []byte, exchange uint64) {
	if m.o.out == nil {
		return
	}
	rec := &tape.Record{Type: tape.TypeMessage, Time: time.Now().UnixNano(), Session: session, Dir: dir,
		Frame: append([]byte(nil), frame...), Exchange: exchange}
	if err := m.o.out.Write(rec); err != nil {
		m.note("writing the output tape: %v", err)
	}
}

// nextConn returns a fresh session name for the output tape.
func (m *Mock) nextConn() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conns++
	return fmt.Sprintf("mock-%d", m.conns)
}

// sessionsText names the served sessions for the report.
func sessionsText(ids string) string {
	if n := strings.Count(ids, ", ") + 1; n > 1 {
		return english.Count(n, "session")
	}
	return fmt.Sprintf("session %q", ids)
}
