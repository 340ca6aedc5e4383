package tape

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/internal/english"
)

// ErrNotTape is wrapped by the errors of Open and NewReader when the input
// is not a tape.
var ErrNotTape = errors.New("not a tape")

// TailError is the warning a Reader gives after io.EOF when the tape did
// not end cleanly: its last frame was cut (the usual trace of a killed
// writer), a frame was corrupt, or a line was not a valid record. Reading
// stopped there; Records records had been returned.
type TailError struct {
	Name    string // file name, "" for NewReader
	Records int64  // records returned by Next before the damage
	Err     error  // what was wrong, and where
}

// Error says "[name: ]tape cut after N records: what and where".
func (e *TailError) Error() string {
	prefix := ""
	if e.Name != "" {
		prefix = e.Name + ": "
	}
	return fmt.Sprintf("%stape cut after %s: %v", prefix, english.Count(e.Records, "record"), e.Err)
}

// Unwrap returns Err.
func (e *TailError) Unwrap() error { return e.Err }

// Reader reads a tape as a stream: its memory depends on the largest frame
// and record, not on the file size.
//
// Frames are taken whole off the input and decompressed with their content
// checksum checked before any of their records is returned, so a corrupt
// frame gives no records, only the warning. A frame that may decompress to
// more than min(MaxRecord, 64 MiB) (not written by Writer unless a record
// is that big, but the zstd command writes one frame per file) is decoded
// as a stream from there on, with memory bounded by MaxRecord; its records
// are returned before its checksum is seen.
//
// DecodeAhead makes a Reader decompress the frames to come on goroutines of
// its own while its caller works on the records of the current one;
// ReleaseShared then lets it reuse the bytes of records NextShared handed
// out. What a Reader returns is the same either way.
//
// A file that holds several tapes (joined with cat) is read one tape after
// the other, a header in the middle starting a segment whose sessions and
// exchanges are kept apart from the earlier tapes' as OpenJoined keeps
// recordings apart, and whose "stats" events end it as one, their sum, as
// OpenJoined's do (segment.go).
//
// A Reader is not safe for concurrent use.
type Reader struct {
	name   string
	file   io.Closer
	src    *errReader
	br     *bufio.Reader
	o      readerOptions
	dec    *zstd.Decoder // DecodeAll of whole frames
	stream *zstd.Decoder // set once a frame was too big for DecodeAll
	ahead  *ahead        // set by DecodeAhead
	// Buffers records handed out by NextShared alias, in the order they
	// were left, with the number of the last such record; kept once
	// ReleaseShared was called, for decode-ahead to reuse.
	retired  []retiredBuf
	tracking bool
	raw      []byte // compressed frame
	buf      []byte // decompressed bytes; unread ones are buf[pos:]
	pos      int
	scan     int // buf[pos:pos+scan] is known to hold no '\n'
	p        lineParser
	shared   bool // NextShared or NextClassified handed out slices of buf

	frames int64 // frames read
	off    int64 // input offset of the next frame
	lines  int64 // lines read
	n      int64 // records returned by Next
	// reorder holds the records read and not returned yet of a tape
	// without Header.TimeOrdered (nil for the others); drained is set
	// once the last was read.
	reorder *TimeOrder[*Record]
	drained bool
	hdr     *Header
	segs    segments // the tapes after the first in a tape joined with cat
	warn    *TailError
	err     error // an I/O error of the source, returned by Next
	done    bool

	scanned int64 // bytes searched for '\n' so far; tests check it stays linear
	bufPeak int   // largest capacity of buf so far; tests check the record limit bounds it
}

// errReader remembers the first error of its reader other than io.EOF.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// Open opens the tape file at path and reads its header. A file that is
// not a tape gives a one-line error naming the file and what it holds.
func Open(path string, opts ...ReaderOption) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	r, err := newReader(path, f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// ReadHeader reads at most headerProbe bytes of a file, and decompresses
// them with a window (and memory) of at most headerWindow: the Writer puts
// the header alone in the first frame, a few hundred bytes, and the zstd
// command, which may have recompressed a tape as one frame, uses a window
// of up to 8 MiB unless told otherwise.
const (
	headerProbe  = 1 << 20
	headerWindow = 8 << 20
)

// ReadHeader returns the header of the tape at path, reading only the
// start of the file (at most 1 MiB, with memory bounded too): a cheap
// test of whether a file is a tape, and whose. A file that is not a tape
// gives the error Open gives, which wraps ErrNotTape; one whose header
// does not fit in that start too.
func ReadHeader(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	defer f.Close()
	r, err := newReader(path, io.LimitReader(f, headerProbe), []ReaderOption{WithMaxRecord(headerWindow)})
	if err != nil {
		return nil, err
	}
	r.Close()
	return r.hdr, nil
}

// NewReader reads a tape from src and checks its header.
func NewReader(src io.Reader, opts ...ReaderOption) (*Reader, error) {
	return newReader("", src, opts)
}

func newReader(name string, src io.Reader, opts []ReaderOption) (*Reader, error) {
	o := readerOptions{maxRecord: DefaultMaxRecord}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("tape: option: %w", err)
		}
	}
	r := &Reader{name: name, o: o, src: &errReader{r: src}}
	r.br = bufio.NewReaderSize(r.src, 64<<10)
	fail := func(format string, args ...any) (*Reader, error) {
		r.Close()
		where := "tape"
		if name != "" {
			where = name
		}
		return nil, fmt.Errorf("%s: %w: %s", where, ErrNotTape, fmt.Sprintf(format, args...))
	}
	head, err := r.br.Peek(4)
	switch {
	case len(head) == 0 && err == io.EOF:
		return fail("empty file")
	case r.src.err != nil:
		return nil, r.wrap(r.src.err)
	case len(head) < 4 || !bytes.Equal(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return fail("%s", describe(r.br))
	}
	r.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(uint64(r.memLimit())))
	if err != nil {
		return nil, r.wrap(err)
	}
	rec, err := r.next()
	switch {
	case err != nil && r.err != nil:
		r.Close()
		return nil, r.err
	case err != nil && r.warn != nil:
		return fail("no header record: %v", r.warn.Err)
	case err != nil:
		return fail("no header record (no data)")
	case rec.Type != TypeHeader:
		return fail("first record is of type %q, not a header", rec.Type)
	case rec.Header.Format < 1:
		return fail("header without a format version")
	case rec.Header.Format > FormatVersion:
		r.Close()
		return nil, r.wrap(fmt.Errorf("tape format %d is newer than this reader's (%d)", rec.Header.Format, FormatVersion))
	}
	r.hdr = rec.Header
	if !r.hdr.TimeOrdered && !r.o.fileOrder {
		r.reorder = new(TimeOrder[*Record])
	}
	return r, nil
}

// describe names what the input holds instead of a tape, from the bytes
// already read: a growing file (show --follow) may never have 16.
func describe(br *bufio.Reader) string {
	head, _ := br.Peek(min(16, br.Buffered()))
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip data, not zstd"
	case isText(head):
		return fmt.Sprintf("not zstd data (starts with %q)", head)
	default:
		return fmt.Sprintf("not zstd data (starts with % x)", head)
	}
}

func isText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && !isSpace(c)) || c == 0x7f {
			return false
		}
	}
	return true
}

func (r *Reader) wrap(err error) error {
	if r.name == "" {
		return fmt.Errorf("tape: %w", err)
	}
	return fmt.Errorf("%s: %w", r.name, err)
}

// memLimit is the largest frame checked whole in memory.
func (r *Reader) memLimit() int { return min(r.o.maxRecord, memFrameLimit) }

// Header returns the tape's header.
func (r *Reader) Header() *Header { return r.hdr }

// Records returns how many records Next has returned (the header, read by
// Open/NewReader, is not counted).
func (r *Reader) Records() int64 { return r.n }

// Warning returns nil, or after Next returned io.EOF, a *TailError when the
// tape did not end cleanly.
func (r *Reader) Warning() error {
	if r.warn == nil {
		return nil
	}
	return r.warn
}

// Next returns the next record, or io.EOF at the end of the tape, including
// after a damaged tail (see Warning). It returns another error only when
// the source fails to read. The Record and its slices belong to the caller.
//
// Records come in time order (see order.go): in file order for a tape
// whose header says TimeOrdered, put in order within ReorderWindow for an
// older tape. So do the records of NextShared and NextClassified.
func (r *Reader) Next() (*Record, error) {
	if r.reorder != nil {
		return r.nextReordered()
	}
	rec, err := r.next()
	if err == nil && r.reorder != nil { // a segment of an older tape began
		r.reorder.Push(rec.Time, rec)
		return r.nextReordered()
	}
	if err == io.EOF {
		rec, err = r.end()
	}
	if err == nil {
		r.n++
	}
	return rec, err
}

func (r *Reader) next() (*Record, error) {
	for {
		line, err := r.line()
		if err != nil {
			return nil, err
		}
		if rec, ok := r.parseLine(line); ok {
			return rec, nil
		}
	}
}

// line returns the next line of the tape without its '\n' (a last line
// may have none), or io.EOF at the end (also after a damaged tail), or the
// source's read error. The line aliases r.buf.
func (r *Reader) line() ([]byte, error) {
	for {
		if r.err != nil {
			return nil, r.err
		}
		if r.done {
			return nil, io.EOF
		}
		// Search only the bytes not searched before: a long line arriving
		// in many chunks is then scanned once, not once per chunk.
		from := r.pos + r.scan
		if i := bytes.IndexByte(r.buf[from:], '\n'); i >= 0 {
			r.scanned += int64(i + 1)
			line := r.buf[r.pos : from+i]
			r.pos, r.scan = from+i+1, 0
			return line, nil
		}
		r.scanned += int64(len(r.buf) - from)
		r.scan = len(r.buf) - r.pos
		if len(r.buf)-r.pos > r.o.maxRecord {
			r.stop(fmt.Errorf("line %d: longer than %d bytes", r.lines+1, r.o.maxRecord))
			continue
		}
		// A line that cannot become a record is refused before more of
		// it is decompressed: a crafted frame of a gigabyte without a
		// newline would otherwise be held up to the record limit.
		if r.scan > 0 && !recordStart(r.buf[r.pos:]) {
			r.stop(fmt.Errorf("line %d: invalid record: starts with %s, not a JSON object", r.lines+1, quotePrefix(r.buf[r.pos:])))
			continue
		}
		err := r.fill()
		r.bufPeak = max(r.bufPeak, cap(r.buf))
		if err == io.EOF {
			r.done = true
			if rest := r.buf[r.pos:]; len(rest) > 0 { // a last line without '\n'
				r.pos, r.scan = len(r.buf), 0
				return rest, nil
			}
			continue
		}
		if err != nil {
			if r.src.err != nil {
				r.err = r.wrap(fmt.Errorf("read: %w", r.src.err))
				continue
			}
			r.stop(err)
		}
	}
}

// recordStart reports whether b, the start of a line, can still become a
// record: white space only, or a JSON object's '{' followed by white space,
// a key's '"' or '}'.
func recordStart(b []byte) bool {
	i := skipWS(b, 0)
	if i == len(b) {
		return true
	}
	if b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	return i == len(b) || b[i] == '"' || b[i] == '}'
}

// quotePrefix quotes the first bytes of b for an error message.
func quotePrefix(b []byte) string {
	const n = 16
	if len(b) > n {
		return fmt.Sprintf("%q...", b[:n])
	}
	return fmt.Sprintf("%q", b)
}

// parseLine parses one line; blank lines are skipped (ok false), as is a
// header after the first, which starts a segment (see keepApart), and an
// invalid one stops reading with a warning.
func (r *Reader) parseLine(line []byte) (*Record, bool) {
	r.lines++
	if skipWS(line, 0) == len(line) {
		return nil, false
	}
	rec, err := r.p.parse(line)
	if err != nil {
		r.stop(fmt.Errorf("line %d: invalid record: %w", r.lines, err))
		return nil, false
	}
	if r.hdr != nil && !r.keepApart(rec) {
		return nil, false
	}
	return rec, true
}

// stop ends reading with a warning.
func (r *Reader) stop(err error) {
	r.warn = &TailError{Name: r.name, Records: r.n, Err: err}
	if r.reorder != nil { // those held are returned before the warning
		r.warn.Records += int64(r.reorder.Len())
		if r.segs.first != nil {
			r.warn.Records++
		}
	}
	if r.segs.heldStats() { // returned before the warning too
		r.warn.Records++
	}
	r.done = true
	r.buf, r.pos, r.scan = nil, 0, 0
}

// fill appends more decompressed bytes to the unread part of r.buf: the next
// whole frame, or a chunk of the stream once streaming. It returns io.EOF at
// the clean end of the input.
func (r *Reader) fill() error {
	private := !r.shared
	if r.shared { // records alias r.buf: never write over it again
		r.retire(r.buf)
		// DecodeAll or grow allocates the room for what comes next.
		r.buf, r.pos, r.shared = bytes.Clone(r.buf[r.pos:]), 0, false
	} else if r.pos > 0 { // keep only the unread part
		n := copy(r.buf, r.buf[r.pos:])
		r.buf, r.pos = r.buf[:n], 0
	}
	if r.stream != nil {
		return r.fillStream()
	}
	if r.ahead != nil {
		return r.fillAhead(private)
	}
	for {
		var (
			info frameInfo
			err  error
		)
		r.raw, info, err = readFrame(r.br, r.raw[:0], uint64(r.memLimit()))
		switch {
		case err == io.EOF:
			return io.EOF
		case err == errTooBig:
			return r.startStream()
		case err != nil:
			return fmt.Errorf("frame %d at byte %d: %w", r.frames+1, r.off, err)
		}
		r.frames++
		at := r.off
		r.off += int64(len(r.raw)) + info.skipped
		if info.skipped > 0 {
			continue
		}
		if cap(r.buf) > 16<<20 && uint64(len(r.buf))+info.maxOut < 1<<20 {
			r.buf = append([]byte(nil), r.buf...) // drop a big frame's buffer
		}
		r.buf, err = r.dec.DecodeAll(r.raw, r.buf)
		if err != nil {
			return fmt.Errorf("frame %d at byte %d: %w", r.frames, at, err)
		}
		if cap(r.raw) > 16<<20 {
			r.raw = nil
		}
		return nil
	}
}

// startStream switches to stream decoding, starting with the frame whose
// beginning readFrame left in r.raw.
func (r *Reader) startStream() error {
	head := bytes.Clone(r.raw)
	r.raw = nil
	var err error
	r.stream, err = zstd.NewReader(io.MultiReader(bytes.NewReader(head), r.br),
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(uint64(max(r.o.maxRecord, zstd.MinWindowSize))),
		zstd.WithDecoderMaxMemory(uint64(r.o.maxRecord)))
	if err != nil {
		return fmt.Errorf("frame %d at byte %d: %w", r.frames+1, r.off, err)
	}
	r.frames++
	return r.fillStream()
}

// streamChunk is how many decompressed bytes fillStream asks for at once.
const streamChunk = 256 << 10

// fillStream appends one chunk of the decompressed stream to r.buf, which
// never grows past the record limit plus one chunk: line refuses a longer
// line before the next fill.
func (r *Reader) fillStream() error {
	r.buf = growCapped(r.buf, streamChunk, r.o.maxRecord+streamChunk)
	n, err := r.stream.Read(r.buf[len(r.buf):cap(r.buf)])
	r.buf = r.buf[:len(r.buf)+n]
	switch {
	case n > 0:
		return nil
	case err == io.EOF:
		return io.EOF
	case err == nil:
		return nil
	case errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded):
		err = fmt.Errorf("needs more memory than the limit of %d bytes: %w", r.o.maxRecord, err)
	}
	return fmt.Errorf("zstd stream from frame %d at byte %d: %w", r.frames, r.off, err)
}

// Close releases the Reader and closes the file Open opened. It is
// idempotent.
func (r *Reader) Close() error {
	if r.ahead != nil {
		r.ahead.close()
	}
	if r.dec != nil {
		r.dec.Close()
		r.dec = nil
	}
	if r.stream != nil {
		r.stream.Close()
		r.stream = nil
	}
	r.done = true
	if r.file != nil {
		err := r.file.Close()
		r.file = nil
		if err != nil {
			return r.wrap(err)
		}
	}
	return nil
}
