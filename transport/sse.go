package transport

// Server-sent events (SSE): the framing of Streamable HTTP response streams
// and of the legacy HTTP+SSE transport. The parsing rules are those of the
// WHATWG "event stream interpretation": lines end with CRLF, LF or CR; a
// blank line ends an event; a line starting with ':' is a comment; "field:
// value" loses one space after the colon; a leading byte order mark is
// ignored; an "id" holding NUL and a "retry" that is not all digits are
// ignored. Like the line framer, [SSEFramer] is push-style (a proxy hands
// it each chunk it has just forwarded) and [SSEReader] is the pull-style
// shape for clients; both keep each event's exact bytes (Raw), so that an
// event can be forwarded or stored unchanged. [AppendSSE] writes events.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// DefaultMaxEvent is the default largest SSE event, in bytes, that a framer
// holds in memory (the same bound as DefaultMaxFrame). Longer events are
// cut and flagged Truncated.
const DefaultMaxEvent = DefaultMaxFrame

// SSEEvent is one server-sent event: the lines up to and including the blank
// line that ends it.
//
// Slices and strings handed to an emit function are valid only until it
// returns (Raw and Data reuse the framer's buffers); SSEReader returns
// events that own their memory.
type SSEEvent struct {
	Raw      []byte // the exact bytes of the event, its ending blank line included
	Type     string // value of the last "event" field; "" when there was none (the type is then "message")
	ID       string // value of the last valid "id" field
	HasID    bool   // an "id" field was present (ID may be empty: it then resets the last event id)
	Data     []byte // the "data" fields' values joined with "\n"
	HasData  bool   // at least one "data" field was present (Data may still be empty)
	Retry    int64  // the "retry" field, in milliseconds, when HasRetry
	HasRetry bool   // a valid "retry" field was present
	Comments int    // number of comment lines (":..."), keep-alives for instance

	// Truncated reports that the event was longer than the framer's maximum:
	// Raw holds its first bytes and Data as much as fitted.
	Truncated bool
	// Incomplete marks the bytes left at the end of a stream without a
	// blank line after them. Such an event is not dispatched by browsers:
	// it is only reported so that nothing goes unnoticed.
	Incomplete bool
	// Size is the full length of the event in bytes (len(Raw) unless Truncated).
	Size int64
}

// IsMessage reports whether the event carries a payload: it had data and
// the data is not empty or blank. Events without one are keep-alives
// (comments only), priming events (an id with empty data) or settings
// (retry only).
func (e *SSEEvent) IsMessage() bool {
	return len(bytes.TrimSpace(e.Data)) > 0
}

// SSEOption configures an SSEFramer or an SSEReader. A bad value makes the
// constructor fail.
type SSEOption func(*sseOptions) error

type sseOptions struct {
	max     int
	keepRaw bool
}

// WithMaxEvent bounds the bytes held for one event (default
// DefaultMaxEvent); it must be positive. Longer events are emitted cut and
// flagged Truncated; the bytes past the bound are counted, not kept.
func WithMaxEvent(n int) SSEOption {
	return func(o *sseOptions) error {
		if n <= 0 {
			return fmt.Errorf("maximum SSE event size %d: must be positive", n)
		}
		o.max = n
		return nil
	}
}

// WithoutRaw makes the framer leave SSEEvent.Raw nil, saving a copy of
// every byte, for callers that already forwarded the bytes themselves. Size
// is still counted.
func WithoutRaw() SSEOption {
	return func(o *sseOptions) error {
		o.keepRaw = false
		return nil
	}
}

// applySSEOptions sets *o to the defaults changed by opts. o points into
// the framer being made (already on the heap), so that passing it to the
// options costs no allocation of its own.
func applySSEOptions(o *sseOptions, opts []SSEOption) error {
	*o = sseOptions{max: DefaultMaxEvent, keepRaw: true}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return fmt.Errorf("transport: %w", err)
		}
	}
	return nil
}

// SSEFramer splits the bytes written to it into server-sent events and
// calls its emit function once for each, in order: every block of lines
// ended by a blank line, including blocks with no data (comments, priming
// events, lone blank lines), so that the Raw bytes of the emitted events,
// in order, are exactly the stream.
//
// One exception to the byte count: when a CRLF that ends an event is split
// between two writes, the event is emitted at the CR (its LF may never
// come), and the LF is put at the start of the next event's Raw, or lost
// if no event follows.
//
// An SSEFramer is not safe for concurrent use.
type SSEFramer struct {
	emit    func(*SSEEvent) error
	o       sseOptions
	line    []byte // the unfinished line (at most o.max bytes)
	inLine  bool   // bytes of a line have been seen and no terminator yet
	afterCR bool   // a CR ended the last chunk: an LF starting the next belongs to it
	started bool   // the first line of the stream has been handled (BOM check)
	pending bool   // the current event has at least one line
	ev      SSEEvent
	typ     []byte // event type being built
	id      []byte // id being built
	data    []byte // data being built
	raw     []byte // raw bytes of the current event (at most o.max)
	err     error  // first emit error, or errFramerClosed
}

// NewSSEFramer returns a framer that calls emit for every complete event.
// An error returned by emit stops the framer: Write returns it, and later
// calls return it again.
func NewSSEFramer(emit func(*SSEEvent) error, opts ...SSEOption) (*SSEFramer, error) {
	if emit == nil {
		return nil, errors.New("transport: SSE framer: nil emit function")
	}
	f := &SSEFramer{emit: emit}
	if err := applySSEOptions(&f.o, opts); err != nil {
		return nil, err
	}
	return f, nil
}

// Reset makes f a new framer of emit with opts, as NewSSEFramer would
// return, keeping the buffers f grew (those within the size it keeps
// between events), so that one framer can serve stream after stream
// without allocating again. On an error f is closed: Write fails.
func (f *SSEFramer) Reset(emit func(*SSEEvent) error, opts ...SSEOption) error {
	if emit == nil {
		f.err = errSSEClosed
		return errors.New("transport: SSE framer: nil emit function")
	}
	*f = SSEFramer{emit: emit, o: f.o, line: keep(f.line), typ: keep(f.typ), id: keep(f.id), data: keep(f.data), raw: keep(f.raw)}
	if err := applySSEOptions(&f.o, opts); err != nil {
		f.err = errSSEClosed
		return err
	}
	return nil
}

// keep returns b emptied for reuse, or nil when it grew past keepBuffer.
func keep(b []byte) []byte {
	if cap(b) > keepBuffer {
		return nil
	}
	return b[:0]
}

// Write frames p and emits every event p completes. It always consumes all
// of p unless emit fails.
func (f *SSEFramer) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n := 0
	for n < len(p) {
		if f.afterCR {
			// A CR ended the previous line at the end of the last chunk;
			// an LF now completes that CRLF. It is kept in Raw (so that
			// the events' bytes still add up to the stream) but does not
			// start an event by itself.
			f.afterCR = false
			if p[n] == '\n' {
				f.ev.Size++
				if f.o.keepRaw && len(f.raw) < f.o.max {
					f.raw = append(f.raw, '\n')
				}
				n++
				continue
			}
		}
		i := indexEOL(p[n:])
		if i < 0 {
			f.addRaw(p[n:])
			f.addLine(p[n:])
			return len(p), nil
		}
		end := n + i + 1
		if p[n+i] == '\r' {
			switch {
			case end == len(p):
				f.afterCR = true
			case p[end] == '\n':
				end++
			}
		}
		f.addRaw(p[n:end])
		line := p[n : n+i]
		if len(line) > f.o.max {
			line = line[:f.o.max]
			f.ev.Truncated = true
		}
		if f.inLine {
			f.addLine(line)
			line = f.line
		}
		n = end
		if err := f.endLine(line); err != nil {
			f.err = err
			return n, err
		}
	}
	return n, nil
}

// Buffered returns the bytes the framer holds for the event it is
// building (and the line it is reading): what a caller that accounts for
// memory must count as held until the next event is emitted.
func (f *SSEFramer) Buffered() int {
	return len(f.line) + len(f.data) + len(f.raw) + len(f.typ) + len(f.id)
}

// Close ends the stream. Bytes of an unfinished event are emitted as an
// event flagged Incomplete (with the fields read so far). Close returns the
// emit error, if any; later Writes fail.
func (f *SSEFramer) Close() error {
	if f.err != nil {
		if f.err == errSSEClosed {
			return nil
		}
		return f.err
	}
	var err error
	if f.inLine {
		line := f.line
		if !f.started {
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) > 0 {
			f.fields(line)
		}
	}
	if f.pending {
		f.ev.Incomplete = true
		err = f.dispatch()
	}
	f.err = errSSEClosed
	return err
}

// errSSEClosed is returned by Write after Close.
var errSSEClosed = errors.New("transport: write to closed SSE framer")

// indexEOL returns the index of the first CR or LF in p, or -1.
func indexEOL(p []byte) int {
	for i, c := range p {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

// addRaw appends bytes of the current event to Raw, up to the maximum.
func (f *SSEFramer) addRaw(b []byte) {
	f.ev.Size += int64(len(b))
	f.pending = true
	if !f.o.keepRaw {
		return
	}
	if room := f.o.max - len(f.raw); room < len(b) {
		b = b[:max(room, 0)]
		f.ev.Truncated = true
	}
	f.raw = append(f.raw, b...)
}

// addLine appends bytes of an unfinished line, up to the maximum.
func (f *SSEFramer) addLine(b []byte) {
	f.inLine = true
	if room := f.o.max - len(f.line); room < len(b) {
		b = b[:max(room, 0)]
		f.ev.Truncated = true
	}
	f.line = append(f.line, b...)
}

// endLine handles one complete line: a blank line dispatches the event.
func (f *SSEFramer) endLine(line []byte) error {
	defer func() {
		f.line, f.inLine = f.line[:0], false
		if cap(f.line) > keepBuffer {
			f.line = nil
		}
	}()
	if !f.started {
		f.started = true
		line = bytes.TrimPrefix(line, bom)
	}
	if len(line) == 0 { // a cut line keeps its first bytes: it is never empty
		return f.dispatch()
	}
	f.fields(line)
	return nil
}

var bom = []byte("\xef\xbb\xbf")

// fields applies one non-blank line to the event being built.
func (f *SSEFramer) fields(line []byte) {
	if len(line) > 0 && line[0] == ':' {
		f.ev.Comments++
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		f.typ = append(f.typ[:0], value...)
	case "data":
		if f.ev.HasData {
			f.data = f.appendData(f.data, []byte{'\n'})
		}
		f.ev.HasData = true
		f.data = f.appendData(f.data, value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			f.id = append(f.id[:0], value...)
			f.ev.HasID = true
		}
	case "retry":
		if ms, ok := parseRetry(value); ok {
			f.ev.Retry, f.ev.HasRetry = ms, true
		}
	}
}

// appendData appends b to the data buffer, up to the maximum.
func (f *SSEFramer) appendData(dst, b []byte) []byte {
	if room := f.o.max - len(dst); room < len(b) {
		b = b[:max(room, 0)]
		f.ev.Truncated = true
	}
	return append(dst, b...)
}

// parseRetry parses a retry value: ASCII digits only.
func parseRetry(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	return ms, err == nil
}

// dispatch emits the current event and starts a new one.
func (f *SSEFramer) dispatch() error {
	ev := &f.ev
	if f.o.keepRaw {
		ev.Raw = f.raw
	}
	ev.Type, ev.ID, ev.Data = eventType(f.typ), string(f.id), f.data
	err := f.emit(ev)
	f.raw, f.typ, f.id, f.data = f.raw[:0], f.typ[:0], f.id[:0], f.data[:0]
	if cap(f.raw) > keepBuffer {
		f.raw = nil
	}
	if cap(f.data) > keepBuffer {
		f.data = nil
	}
	f.ev = SSEEvent{}
	f.pending = false
	return err
}

// eventType returns the event type typ as a string, without a copy for
// the types nearly every event has (none, or "message").
func eventType(typ []byte) string {
	switch string(typ) { // compared in place: no conversion
	case "":
		return ""
	case "message":
		return "message"
	}
	return string(typ)
}

// SSEReader reads server-sent events from a stream, for clients.
type SSEReader struct {
	r      io.Reader
	framer *SSEFramer
	queue  []SSEEvent
	buf    []byte
	err    error
}

// NewSSEReader returns a reader of the events of r.
func NewSSEReader(r io.Reader, opts ...SSEOption) (*SSEReader, error) {
	sr := &SSEReader{r: r, buf: make([]byte, 32<<10)}
	f, err := NewSSEFramer(func(e *SSEEvent) error {
		c := *e
		c.Raw, c.Data = bytes.Clone(e.Raw), bytes.Clone(e.Data)
		sr.queue = append(sr.queue, c)
		return nil
	}, opts...)
	if err != nil {
		return nil, err
	}
	sr.framer = f
	return sr, nil
}

// Next returns the next event, blocks included that carry no data (see
// SSEEvent.IsMessage). At the end of the stream it returns io.EOF, or
// io.ErrUnexpectedEOF when the stream ended inside an event (that
// unfinished event is dropped, as browsers do); a read error is returned
// as is. The returned event owns its memory.
func (r *SSEReader) Next() (*SSEEvent, error) {
	for len(r.queue) == 0 {
		if r.err != nil {
			return nil, r.err
		}
		n, err := r.r.Read(r.buf)
		if n > 0 {
			r.framer.Write(r.buf[:n]) // the emit function cannot fail
		}
		switch {
		case err == io.EOF:
			r.framer.Close()
			r.err = io.EOF
			if k := len(r.queue); k > 0 && r.queue[k-1].Incomplete {
				r.queue = r.queue[:k-1]
				r.err = io.ErrUnexpectedEOF
			}
		case err != nil:
			r.err = err
		}
	}
	e := r.queue[0]
	r.queue = r.queue[1:]
	return &e, nil
}

// ErrSSEField is returned by AppendSSE for a field that cannot be written.
var ErrSSEField = errors.New("transport: SSE field holds a line break or NUL")

// AppendSSE appends e in SSE wire form to dst: "event:", "id:", "retry:"
// and "data:" lines (one per line of Data; Data's CRLF, CR and LF all end a
// line) in that order, then the blank line. Only the fields that are set
// are written; an event with neither data nor any other field is a lone
// blank line. Raw, Comments and the flags are ignored. A Type or ID that
// holds a line break (or, for ID, a NUL) cannot be written: ErrSSEField.
func AppendSSE(dst []byte, e *SSEEvent) ([]byte, error) {
	if indexEOL([]byte(e.Type)) >= 0 || indexEOL([]byte(e.ID)) >= 0 || bytes.IndexByte([]byte(e.ID), 0) >= 0 {
		return dst, ErrSSEField
	}
	if e.Type != "" {
		dst = append(append(append(dst, "event: "...), e.Type...), '\n')
	}
	if e.HasID || e.ID != "" {
		dst = append(append(append(dst, "id: "...), e.ID...), '\n')
	}
	if e.HasRetry {
		dst = strconv.AppendInt(append(dst, "retry: "...), e.Retry, 10)
		dst = append(dst, '\n')
	}
	if e.HasData || len(e.Data) > 0 {
		data := e.Data
		for {
			i := indexEOL(data)
			if i < 0 {
				dst = append(append(append(dst, "data: "...), data...), '\n')
				break
			}
			dst = append(append(append(dst, "data: "...), data[:i]...), '\n')
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			data = data[i+1:]
		}
	}
	return append(dst, '\n'), nil
}

// AppendSSEComment appends a comment block (": text" lines and a blank
// line), such as a keep-alive, to dst. Line breaks in text start new
// comment lines.
func AppendSSEComment(dst []byte, text string) []byte {
	for {
		i := indexEOL([]byte(text))
		if i < 0 {
			dst = append(append(append(dst, ": "...), text...), '\n')
			break
		}
		dst = append(append(append(dst, ": "...), text[:i]...), '\n')
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	return append(dst, '\n')
}
