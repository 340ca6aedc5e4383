package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/glob"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Format is an output format of Show.
type Format string

// Show formats.
const (
	// FormatText is one line per message for a terminal: relative time,
	// session, an arrow for the direction, kind, method, id, size, and on
	// responses the latency and a one-line summary.
	FormatText Format = "text"
	// FormatNDJSON is one JSON object per message or event, for jq.
	FormatNDJSON Format = "ndjson"
	// FormatRaw is the exact frames, one per line, messages only: the
	// client side of a stdio tape can be piped into a server.
	FormatRaw Format = "raw"
)

// ShowOption configures Show. A bad value is an error.
type ShowOption func(*showOptions) error

type showOptions struct {
	format     Format
	session    string
	hasSession bool
	method     *regexp.Regexp
	dir        tape.Direction
	grep       *regexp.Regexp
	from, to   *TimeSpec
}

// WithFormat selects the output format (default FormatText).
func WithFormat(f Format) ShowOption {
	return func(o *showOptions) error {
		switch f {
		case FormatText, FormatNDJSON, FormatRaw:
			o.format = f
			return nil
		}
		return fmt.Errorf("format %q: want text, ndjson or raw", f)
	}
}

// WithSession keeps only the records of one session.
func WithSession(id string) ShowOption {
	return func(o *showOptions) error {
		o.session, o.hasSession = id, true
		return nil
	}
}

// WithMethod keeps only messages whose method matches the glob pattern:
// "*" matches any run of characters (slashes included), "?" one
// character, "[...]" a class. A response matches by the method of its
// request. Events never match.
func WithMethod(pattern string) ShowOption {
	return func(o *showOptions) error {
		re, err := glob.Regexp(pattern)
		if err != nil {
			return fmt.Errorf("method pattern %q: %w", pattern, err)
		}
		o.method = re
		return nil
	}
}

// WithDir keeps only messages (and events) that travelled in dir.
func WithDir(dir tape.Direction) ShowOption {
	return func(o *showOptions) error {
		if dir != tape.ClientToServer && dir != tape.ServerToClient {
			return fmt.Errorf("direction %q: want %s or %s", dir, tape.ClientToServer, tape.ServerToClient)
		}
		o.dir = dir
		return nil
	}
}

// WithGrep keeps only records whose frame (or event payload) matches the
// regular expression (RE2 syntax).
func WithGrep(expr string) ShowOption {
	return func(o *showOptions) error {
		re, err := regexp.Compile(expr)
		if err != nil {
			return fmt.Errorf("grep %q: %w", expr, err)
		}
		o.grep = re
		return nil
	}
}

// WithFrom keeps only records at or after t.
func WithFrom(t TimeSpec) ShowOption {
	return func(o *showOptions) error { o.from = &t; return nil }
}

// WithTo keeps only records at or before t.
func WithTo(t TimeSpec) ShowOption {
	return func(o *showOptions) error { o.to = &t; return nil }
}

// TimeSpec is a point in a tape: an offset from the tape's start, or an
// absolute time.
type TimeSpec struct {
	Offset   time.Duration
	Abs      time.Time
	Absolute bool
}

// ParseTimeSpec reads a time given on the command line: an offset from
// the tape's start as a Go duration ("1.5s", "2m", "+300ms") or a number
// of seconds ("12.5"), or an absolute RFC 3339 time
// ("2026-07-28T10:00:00Z", fractions allowed).
func ParseTimeSpec(s string) (TimeSpec, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return TimeSpec{}, errors.New("empty time")
	}
	if abs, err := time.Parse(time.RFC3339Nano, t); err == nil {
		return TimeSpec{Abs: abs, Absolute: true}, nil
	}
	rel := strings.TrimPrefix(t, "+")
	if d, err := time.ParseDuration(rel); err == nil {
		return TimeSpec{Offset: d}, nil
	}
	if isNumber(rel) {
		secs, err := strconv.ParseFloat(rel, 64)
		if err != nil {
			return TimeSpec{}, fmt.Errorf("time %q: not a number of seconds", s)
		}
		if secs > 1e9 || secs < -1e9 {
			return TimeSpec{}, fmt.Errorf("time %q: out of range", s)
		}
		return TimeSpec{Offset: time.Duration(secs * 1e9)}, nil
	}
	return TimeSpec{}, fmt.Errorf("time %q: want an offset such as 1.5s or 2m, seconds, or an RFC 3339 time", s)
}

func isNumber(s string) bool {
	digits := 0
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || (c == '-' && i == 0):
		default:
			return false
		}
	}
	return digits > 0
}

// String gives t as ParseTimeSpec reads it: an offset ("1.5s") or an
// RFC 3339 time.
func (t TimeSpec) String() string {
	if t.Absolute {
		return t.Abs.Format(time.RFC3339Nano)
	}
	return t.Offset.String()
}

// checkWindow returns an error when the window from..to (either nil for
// no bound) ends before it starts: the one check of a time window, made
// when the command line is checked (origin 0, the tape's start not known
// yet: an offset and an absolute time are not compared then) and again
// once the tape's start is known.
func checkWindow(from, to *TimeSpec, origin int64) error {
	if from == nil || to == nil || (from.Absolute != to.Absolute && origin == 0) {
		return nil
	}
	if to.at(origin) < from.at(origin) {
		e := &WindowError{From: *from, To: *to}
		if from.Absolute != to.Absolute {
			e.Start = time.Unix(0, origin).UTC()
		}
		return e
	}
	return nil
}

// WindowError is the error of a time window (WithFrom, WithTo) that ends
// before it starts: a mistake on the command line, whether it is found
// before the tape is read or, for an offset and an absolute time, once the
// tape's start is known.
type WindowError struct {
	From, To TimeSpec
	// Start is the tape's start when one bound is an offset from it and
	// the other an absolute time; zero otherwise.
	Start time.Time
}

// Error says the window and, for a mixed one, where the offsets count from.
func (e *WindowError) Error() string {
	msg := fmt.Sprintf("time window from %v to %v ends before it starts", e.From, e.To)
	if !e.Start.IsZero() {
		msg += fmt.Sprintf(" (offsets count from the tape's start, %s)", e.Start.Format(time.RFC3339Nano))
	}
	return msg
}

// at returns the Unix nanoseconds of t in a tape whose origin is origin.
func (t TimeSpec) at(origin int64) int64 {
	if t.Absolute {
		return t.Abs.UnixNano()
	}
	return origin + int64(t.Offset)
}

// ShowStats says what Show did.
type ShowStats struct {
	Records int64 // records read
	Shown   int64 // lines written
	// Compacted counts frames written by FormatRaw with their newlines
	// removed (valid JSON with line breaks, as an HTTP body may be): one
	// frame per line holds, at the cost of byte-exactness for those.
	Compacted int64
	// Warning is the tape's damage warning (a *tape.TailError), if any.
	Warning error
}

// showReq is what Show keeps about a request in flight.
type showReq struct {
	method string
	name   string
	time   int64
	parts  int // stream parts of its answer seen so far
}

// Show writes the timeline of the tape at path to w. It streams: memory
// depends on the requests in flight, not on the tape's length. A file that
// is not a tape is an error wrapping tape.ErrNotTape.
func Show(ctx context.Context, path string, w io.Writer, opts ...ShowOption) (ShowStats, error) {
	r, err := tape.Open(path)
	if err != nil {
		return ShowStats{}, err
	}
	defer r.Close()
	st, err := ShowTape(ctx, r, w, opts...)
	if err != nil {
		return st, fmt.Errorf("show %s: %w", path, err)
	}
	return st, nil
}

// ShowTape writes the timeline of an opened tape to w; the caller closes r.
func ShowTape(ctx context.Context, r *tape.Reader, w io.Writer, opts ...ShowOption) (ShowStats, error) {
	var o showOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return ShowStats{}, fmt.Errorf("analysis: show: %w", err)
		}
	}
	var scanOpts []ScanOption
	if o.hasSession {
		scanOpts = append(scanOpts, OnlySession(o.session))
	}
	sc, err := NewScanner(ctx, r, scanOpts...)
	if err != nil {
		return ShowStats{}, err
	}
	defer sc.Close()
	return showItems(sc, r.Header(), w, false, opts...)
}

// itemSource yields items: a Scanner, or a follower of a growing tape.
type itemSource interface {
	Next() (*Item, error)
	Records() int64
	Warning() error
}

// showItems writes the items of src as a timeline. live (following a
// tape) flushes after every item and flags problems as they happen, with
// an Inspector fed alongside.
func showItems(src itemSource, h *tape.Header, w io.Writer, live bool, opts ...ShowOption) (ShowStats, error) {
	var st ShowStats
	o := showOptions{format: FormatText}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return st, fmt.Errorf("analysis: show: %w", err)
		}
	}
	origin := h.Time
	out := newShowWriter(w, o.format)
	var in *Inspector
	if live && o.format == FormatText {
		var err error
		if in, err = NewInspector(h); err != nil {
			return st, err
		}
		in.live = out.w
	}
	pairs := NewPairer[*showReq]()
	var from, to int64 = -1 << 63, 1<<63 - 1
	bounded := false
	for {
		it, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, err
		}
		if !bounded {
			bounded = true
			origin = tapeOrigin(origin, it.Rec.Time)
			if err := checkWindow(o.from, o.to, origin); err != nil {
				return st, fmt.Errorf("analysis: show: %w", err)
			}
			if o.from != nil {
				from = o.from.at(origin)
			}
			if o.to != nil {
				to = o.to.at(origin)
			}
		}
		if o.hasSession && it.Rec.Session != o.session {
			continue // the Scanner skips them already; a follower does not
		}
		m := line{item: it, origin: origin}
		if it.IsMessage() {
			pairLine(pairs, &m)
		}
		if o.match(&m, from, to) {
			if err := out.write(&m); err != nil {
				return st, err
			}
		}
		if in != nil {
			in.Add(it)
			if in.liveErr != nil {
				return st, fmt.Errorf("analysis: show: %w", in.liveErr)
			}
		}
		if live {
			if err := out.flush(); err != nil {
				return st, err
			}
		}
	}
	st.Records = src.Records()
	st.Warning = src.Warning()
	st.Shown, st.Compacted = out.shown, out.compacted
	if err := out.flush(); err != nil {
		return st, err
	}
	return st, nil
}

// line is one item with what pairing learned about it.
type line struct {
	item    *Item
	origin  int64
	method  string // the message's method, or its request's
	name    string // tool, prompt or resource of the request
	latency int64  // responses: time since the request, -1 when unpaired
	part    jsonrpc.StreamPart
	partN   int // streamed answers: this part's number, from 1
}

// pairLine pairs requests and responses and fills in method and latency.
func pairLine(pairs *Pairer[*showReq], m *line) {
	it := m.item
	m.method, m.latency = it.Info.Method, -1
	switch it.Info.Kind {
	case jsonrpc.KindRequest:
		req := &showReq{method: it.Info.Method, time: it.Rec.Time}
		switch req.method {
		case mToolsCall, mPromptsGet:
			req.name, _ = lookupString(it.Frame, "params", "name")
		case mResRead:
			req.name, _ = lookupString(it.Frame, "params", "uri")
		}
		m.name = req.name
		if Pairable(it.Info.ID) {
			pairs.Open(it.Rec.Session, it.Rec.Dir, it.Info.ID, req)
		}
	case jsonrpc.KindResponse, jsonrpc.KindError:
		if !Pairable(it.Info.ID) {
			return
		}
		// The parts of a streamed answer are shown under their request:
		// its method, name and the time since it, numbered.
		m.part = streamPartOf(it)
		var req *showReq
		ok := false
		if m.part == jsonrpc.PartStart || m.part == jsonrpc.PartDelta {
			req, ok = pairs.Lookup(it.Rec.Session, Opposite(it.Rec.Dir), it.Info.ID)
		} else {
			req, ok = pairs.Close(it.Rec.Session, Opposite(it.Rec.Dir), it.Info.ID)
		}
		if ok {
			m.method, m.name, m.latency = req.method, req.name, it.Rec.Time-req.time
			if m.part.Streamed() || req.parts > 0 {
				req.parts++
				m.partN = req.parts
			}
		}
	}
}

// match applies the filters.
func (o *showOptions) match(m *line, from, to int64) bool {
	it := m.item
	if t := it.Rec.Time; t < from || t > to {
		return false
	}
	if o.dir != "" && it.Rec.Dir != o.dir {
		return false
	}
	if o.method != nil {
		if !it.IsMessage() {
			return false
		}
		if it.Info.Kind == jsonrpc.KindBatch {
			if !o.batchHasMethod(it.Frame) {
				return false
			}
		} else if !o.method.MatchString(m.method) {
			return false
		}
	}
	if o.grep != nil {
		data := it.Frame
		if it.IsEvent() {
			data = it.Rec.Data
		}
		if !o.grep.Match(data) {
			return false
		}
	}
	if o.format == FormatRaw {
		return it.IsMessage() && it.Member < 0 // a batch is written whole
	}
	return true
}

// batchHasMethod reports whether a member of the batch has a method
// matching the filter (responses in a batch are not paired for this).
func (o *showOptions) batchHasMethod(frame []byte) bool {
	members, _ := jsonrpc.Split(frame)
	for _, m := range members {
		if o.method.MatchString(jsonrpc.Classify(m).Method) {
			return true
		}
	}
	return false
}

// CheckShowOptions applies opts to a scratch configuration and returns the
// first error, so that a command line can be checked before any tape is
// opened.
func CheckShowOptions(opts ...ShowOption) error {
	var o showOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return err
		}
	}
	return checkWindow(o.from, o.to, 0)
}
