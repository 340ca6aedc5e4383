package analysis

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/mcptape/mcptape/internal/jsondiff"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Diff defaults; see the options of the same names.
const (
	DefaultMaxMismatches = 100
	DefaultMaxPending    = 100000
	DefaultMaxFieldDiffs = 50
)

// DiffOption configures Diff. A bad value is an error.
type DiffOption func(*diffOptions) error

type diffOptions struct {
	jd            []jsondiff.Option
	maxMismatches int
	maxPending    int
}

// WithIgnorePaths adds paths left out of the comparison of two messages, in
// the syntax of internal/jsondiff ("result.content[*].text", "**.etag").
func WithIgnorePaths(paths ...string) DiffOption {
	return func(o *diffOptions) error {
		o.jd = append(o.jd, jsondiff.WithIgnore(paths...))
		return nil
	}
}

// WithoutDefaultIgnores compares the fields ignored by default too: ids,
// _meta, progress tokens, session and task ids, timestamps (see
// jsondiff.DefaultIgnore).
func WithoutDefaultIgnores() DiffOption {
	return func(o *diffOptions) error {
		o.jd = append(o.jd, jsondiff.WithoutDefaults())
		return nil
	}
}

// WithMaxMismatches bounds the mismatching pairs and unmatched messages
// listed in the report (default 100 of each); all are counted.
func WithMaxMismatches(n int) DiffOption {
	return func(o *diffOptions) error {
		if n < 0 {
			return fmt.Errorf("max mismatches %d: want 0 or more", n)
		}
		o.maxMismatches = n
		return nil
	}
}

// WithMaxPending bounds the messages held while waiting for their partner
// in the other tape (default 100000). Two tapes that drift further apart
// than this end the comparison with an error rather than fill memory.
func WithMaxPending(n int) DiffOption {
	return func(o *diffOptions) error {
		if n < 1 {
			return fmt.Errorf("max pending %d: want at least 1", n)
		}
		o.maxPending = n
		return nil
	}
}

// CheckDiffOptions applies opts to a scratch configuration and returns the
// first error (such as a bad ignore path), so that a command line can be
// checked before any tape is opened.
func CheckDiffOptions(opts ...DiffOption) error {
	_, _, err := diffSetup(opts)
	return err
}

// diffSetup applies opts and builds the comparer.
func diffSetup(opts []DiffOption) (diffOptions, *jsondiff.Comparer, error) {
	o := diffOptions{maxMismatches: DefaultMaxMismatches, maxPending: DefaultMaxPending}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, nil, fmt.Errorf("analysis: diff: %w", err)
		}
	}
	jd, err := jsondiff.New(append(o.jd, jsondiff.WithMaxDiffs(DefaultMaxFieldDiffs))...)
	if err != nil {
		return o, nil, fmt.Errorf("analysis: diff: %w", err)
	}
	return o, jd, nil
}

// DiffSide describes one of the two tapes of a diff.
type DiffSide struct {
	File     string `json:"file,omitempty"`
	Records  int64  `json:"records"`
	Messages int64  `json:"messages"`
	Sessions int    `json:"sessions"`
	Warning  string `json:"warning,omitempty"`
}

// MessageRef names a logical message of a session, the same in both tapes:
// the Nth message of a kind and method sent in a direction in the session
// that appeared Session-th in the tape. A response is named after its
// request (its method, its N); "error" responses count as "response".
type MessageRef struct {
	Session int    `json:"session"` // from 1, in order of first message
	Dir     string `json:"dir"`
	Kind    string `json:"kind"`
	Method  string `json:"method"` // "" for an unpaired response or an invalid frame
	N       int64  `json:"n"`      // from 1
}

// Mismatch is a message present in both tapes with different content.
type Mismatch struct {
	MessageRef
	SessionA string                `json:"session_a"`
	SessionB string                `json:"session_b"`
	RecordA  int64                 `json:"record_a"`
	RecordB  int64                 `json:"record_b"`
	OffsetA  int64                 `json:"offset_a_ns"`
	OffsetB  int64                 `json:"offset_b_ns"`
	Diffs    []jsondiff.Difference `json:"diffs"`
}

// Unmatched is a message found in one tape only.
type Unmatched struct {
	MessageRef
	Side     string `json:"side"` // "a" or "b"
	SessionN string `json:"session_name"`
	Record   int64  `json:"record"`
	OffsetNS int64  `json:"offset_ns"`
	Summary  string `json:"summary,omitempty"`
}

// DiffReport is the result of comparing two tapes.
type DiffReport struct {
	A       DiffSide `json:"a"`
	B       DiffSide `json:"b"`
	Ignored []string `json:"ignored"`
	// Compared counts the messages found in both tapes; Mismatched those
	// among them whose content differs; OnlyA and OnlyB the messages found
	// in one tape only.
	Compared   int64       `json:"compared"`
	Mismatched int64       `json:"mismatched"`
	OnlyA      int64       `json:"only_a"`
	OnlyB      int64       `json:"only_b"`
	Mismatches []Mismatch  `json:"mismatches"`
	Unmatched  []Unmatched `json:"unmatched"`
}

// Same reports whether the tapes hold the same messages.
func (r *DiffReport) Same() bool { return r.Mismatched == 0 && r.OnlyA == 0 && r.OnlyB == 0 }

// Diff compares the tapes at paths a and b message by message. See DiffTapes.
func Diff(ctx context.Context, a, b string, opts ...DiffOption) (*DiffReport, error) {
	ra, err := tape.Open(a)
	if err != nil {
		return nil, err
	}
	defer ra.Close()
	rb, err := tape.Open(b)
	if err != nil {
		return nil, err
	}
	defer rb.Close()
	rep, err := DiffTapes(ctx, ra, rb, opts...)
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", a, b, err)
	}
	rep.A.File, rep.B.File = a, b
	return rep, nil
}

// DiffTapes compares two opened tapes; the caller closes them.
//
// Sessions are paired by the order of their first message, and within a
// session the messages by direction, kind, method and rank: the 3rd
// tools/call request sent by the client in A is compared with the 3rd in B,
// and the response to it with the response to that one, whatever their ids
// and their order on the wire. Batches are compared member by member; events
// (stderr lines, HTTP metadata) are not compared.
//
// Both tapes are read at once, in step, holding only the messages whose
// partner has not been read yet: memory stays small when the tapes are alike
// and is bounded by WithMaxPending when they are not.
func DiffTapes(ctx context.Context, a, b *tape.Reader, opts ...DiffOption) (*DiffReport, error) {
	o, jd, err := diffSetup(opts)
	if err != nil {
		return nil, err
	}
	d := &differ{o: o, jd: jd, rep: &DiffReport{Ignored: jd.Ignored()}}
	sides := [2]*diffSide{newDiffSide(a), newDiffSide(b)}
	for i, r := range []*tape.Reader{a, b} {
		sc, err := NewScanner(ctx, r)
		if err != nil {
			return nil, err
		}
		defer sc.Close()
		sides[i].sc = sc
	}
	for !sides[0].done || !sides[1].done {
		for i, s := range sides {
			if s.done {
				continue
			}
			m, err := s.next()
			if err != nil {
				return nil, fmt.Errorf("tape %s: %w", "ab"[i:i+1], err)
			}
			if m == nil {
				continue
			}
			if err := d.match(i, sides, m); err != nil {
				return nil, err
			}
		}
	}
	d.finish(sides)
	return d.rep, nil
}

// diffMsg is a message waiting for its partner.
type diffMsg struct {
	ref     MessageRef
	session string
	frame   []byte
	record  int64
	offset  int64
}

// diffSide is the reading state of one tape.
type diffSide struct {
	sc       *Scanner
	clock    tapeClock
	done     bool
	sessions map[string]int
	counts   map[MessageRef]int64 // N so far per ref with N zero
	pairs    *Pairer[MessageRef]
	pending  map[MessageRef]*diffMsg
	st       DiffSide
}

func newDiffSide(r *tape.Reader) *diffSide {
	return &diffSide{clock: newTapeClock(r.Header().Time), sessions: map[string]int{}, counts: map[MessageRef]int64{},
		pairs: NewPairer[MessageRef](), pending: map[MessageRef]*diffMsg{}}
}

// next reads up to the next message to compare: nil at the end of the tape
// or for an item that is not compared.
func (s *diffSide) next() (*diffMsg, error) {
	it, err := s.sc.Next()
	if errors.Is(err, io.EOF) {
		s.done = true
		s.st.Records = s.sc.Records()
		if w := s.sc.Warning(); w != nil {
			s.st.Warning = w.Error()
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.clock.add(it.Rec)
	if !it.IsMessage() || it.Info.Kind == jsonrpc.KindBatch {
		return nil, nil
	}
	s.st.Messages++
	rec := it.Rec
	sess, ok := s.sessions[rec.Session]
	if !ok {
		sess = len(s.sessions) + 1
		s.sessions[rec.Session] = sess
		s.st.Sessions = sess
	}
	ref := MessageRef{Session: sess, Dir: string(rec.Dir)}
	info := &it.Info
	paired := false
	switch info.Kind {
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		ref.Kind, ref.Method = info.Kind.String(), info.Method
	case jsonrpc.KindResponse, jsonrpc.KindError:
		ref.Kind = "response"
		if Pairable(info.ID) {
			if req, ok := s.pairs.Close(rec.Session, Opposite(rec.Dir), info.ID); ok {
				ref.Method, ref.N, paired = req.Method, req.N, true
			}
		}
	default:
		ref.Kind = info.Kind.String()
	}
	if !paired {
		s.counts[ref]++
		ref.N = s.counts[ref]
	}
	if info.Kind == jsonrpc.KindRequest && Pairable(info.ID) {
		s.pairs.Open(rec.Session, rec.Dir, info.ID, ref)
	}
	return &diffMsg{ref: ref, session: rec.Session, frame: it.Frame, record: it.Seq, offset: rec.Time - s.clock.origin}, nil
}

// differ matches messages of the two sides and compares them.
type differ struct {
	o       diffOptions
	jd      *jsondiff.Comparer
	rep     *DiffReport
	pending int
}

// match pairs m, read from side i, with its partner or keeps it waiting.
func (d *differ) match(i int, sides [2]*diffSide, m *diffMsg) error {
	other := sides[1-i]
	p, ok := other.pending[m.ref]
	if !ok {
		if d.pending >= d.o.maxPending {
			return fmt.Errorf("more than %d messages of one tape have no partner in the other "+
				"(at %s record %d): the tapes are too far apart to compare", d.o.maxPending, "ab"[i:i+1], m.record)
		}
		sides[i].pending[m.ref] = m
		d.pending++
		return nil
	}
	delete(other.pending, m.ref)
	d.pending--
	ma, mb := p, m
	if i == 0 {
		ma, mb = m, p
	}
	d.rep.Compared++
	diffs := d.compare(ma.frame, mb.frame)
	if len(diffs) == 0 {
		return nil
	}
	d.rep.Mismatched++
	if len(d.rep.Mismatches) < d.o.maxMismatches {
		d.rep.Mismatches = append(d.rep.Mismatches, Mismatch{MessageRef: ma.ref, SessionA: ma.session, SessionB: mb.session,
			RecordA: ma.record, RecordB: mb.record, OffsetA: ma.offset, OffsetB: mb.offset, Diffs: diffs})
	}
	return nil
}

// compare compares two frames; frames that are not JSON are compared as
// bytes and shown as strings.
func (d *differ) compare(a, b []byte) []jsondiff.Difference {
	diffs, err := d.jd.Compare(a, b)
	if err == nil {
		return diffs
	}
	if bytes.Equal(a, b) {
		return nil
	}
	qa, _ := json.Marshal(string(a))
	qb, _ := json.Marshal(string(b))
	return []jsondiff.Difference{{Kind: jsondiff.Changed, Old: qa, New: qb}}
}

// finish lists what is left without a partner, oldest first, up to the
// listing bound on each side.
func (d *differ) finish(sides [2]*diffSide) {
	if d.rep.Mismatches == nil {
		d.rep.Mismatches = []Mismatch{}
	}
	d.rep.Unmatched = []Unmatched{}
	for i, s := range sides {
		left := make([]*diffMsg, 0, len(s.pending))
		for _, m := range s.pending {
			left = append(left, m)
		}
		slices.SortFunc(left, func(x, y *diffMsg) int { return cmp.Compare(x.record, y.record) })
		for _, m := range left[:min(len(left), d.o.maxMismatches)] {
			d.rep.Unmatched = append(d.rep.Unmatched, Unmatched{MessageRef: m.ref, Side: "ab"[i : i+1],
				SessionN: m.session, Record: m.record, OffsetNS: m.offset,
				Summary: Summary(m.frame, jsonrpc.Classify(m.frame), m.ref.Method)})
		}
	}
	d.rep.OnlyA, d.rep.OnlyB = int64(len(sides[0].pending)), int64(len(sides[1].pending))
	d.rep.A, d.rep.B = sides[0].st, sides[1].st
}
