package tape

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/jsonstr"
	"github.com/mcptape/mcptape/internal/privfile"
	"github.com/mcptape/mcptape/jsonrpc"
)

// ErrClosed is returned by Write and Flush after Close.
var ErrClosed = errors.New("tape: writer closed")

// Stats counts what a Writer did. Records, Messages and Bytes count what
// Write accepted; Frames and Compressed count what reached the destination.
type Stats struct {
	Records    int64         // records accepted by Write (header and stats records included)
	Messages   int64         // of which message records
	Bytes      int64         // uncompressed bytes of the accepted records' lines
	Frames     int64         // zstd frames written to the destination
	Compressed int64         // bytes written to the destination
	Queued     int64         // encoded bytes held in memory, not yet written
	PeakQueued int64         // highest Queued seen
	Waits      int64         // times a Write had to wait because MaxQueued was reached
	WaitTime   time.Duration // total time Writes spent waiting
	Lost       int64         // records accepted but not written: a write failed (WithRecovery)
	Gaps       int64         // gap markers written after writing worked again (WithRecovery)
	Reordered  int64         // records moved before records written earlier, to keep time order
	Late       int64         // records written with a later time than their own, to keep time order
	LateMax    int64         // the largest such shift, in nanoseconds
	Err        error         // the write error that stopped the writer, if any
}

// StatsData is the payload of the "stats" event Close writes last.
type StatsData struct {
	Records    int64 `json:"records"`
	Messages   int64 `json:"messages"`
	Bytes      int64 `json:"bytes"`
	Frames     int64 `json:"frames"`
	Compressed int64 `json:"compressed"`
	PeakQueued int64 `json:"peak_queued"`
	Waits      int64 `json:"waits"`
	WaitNs     int64 `json:"wait_ns"`
	Lost       int64 `json:"lost,omitempty"`        // records not written (WithRecovery)
	Gaps       int64 `json:"gaps,omitempty"`        // gap markers written (WithRecovery)
	Reordered  int64 `json:"reordered,omitempty"`   // records moved to their place in time order
	Late       int64 `json:"late,omitempty"`        // records written with a later time than their own
	LateMaxNs  int64 `json:"late_max_ns,omitempty"` // the largest such shift
	// Tapes is set only on the stats event a joined read makes
	// (OpenJoined): how many tapes' stats events it sums. No writer
	// records it, so it tells that event from a recorded one.
	Tapes int64 `json:"tapes,omitempty"`
}

// Writer writes a tape. Write encodes a record into the current batch; a
// goroutine of its own compresses each batch into an independent zstd frame
// and writes it, so Write never waits on the destination, except when
// MaxQueued bytes are already held: then Write waits until the goroutine
// has written enough (backpressure: records are never dropped). Every wait
// is counted in Stats. A record larger than MaxQueued is still accepted,
// once nothing else is queued, so memory is bounded by MaxQueued plus the
// largest record plus the compressed frame being written.
//
// The records come out in time order, whatever the order of the Writes:
// see writer_order.go; the header says so (Header.TimeOrdered).
//
// All methods are safe for concurrent use.
type Writer struct {
	name string    // path, for errors; "" when writing to an io.Writer
	dst  io.Writer // where frames go
	file *os.File  // set by Create: synced and closed by Close
	o    options
	enc  *zstd.Encoder // used by the flusher only

	kick chan struct{} // wakes the flusher when a batch is cut (capacity 1)
	quit chan struct{} // closed by Close
	done chan struct{} // closed when the flusher has exited

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	cur     []byte        // batch being filled
	curN    int64         // records in cur
	pending [][]byte      // cut batches the flusher has not taken yet
	pendN   []int64       // records in each pending batch
	pendT   []int64       // time of the first record of each pending batch (0: none)
	lines   []lineAt      // lines of cur, in time order
	floor   int64         // newest record time of the batches cut
	tmp     []byte        // a line being moved to its place
	free    [][]byte      // written batch buffers, for reuse
	cutSeq  uint64        // batches cut so far
	doneSeq uint64        // batches written (or dropped after an error)
	changed chan struct{} // closed and replaced when queued shrinks, doneSeq grows or err is set
	closed  bool
	err     error // first write error
	st      Stats

	gap gapState // the flusher's: an outage being bridged (WithRecovery)
}

// Create creates (or truncates, unless WithExclusive) the tape file at path
// with mode 0600 and writes the header, synchronously, as the first frame;
// see NewWriter.
func Create(path string, h Header, opts ...Option) (*Writer, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	create := privfile.Create // 0600 even if it existed with another mode
	if o.exclusive {
		create = privfile.CreateNew
	}
	f, err := create(path)
	if err != nil {
		return nil, fmt.Errorf("tape: create: %w", err)
	}
	w, err := newWriter(path, f, h, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	return w, nil
}

// NewWriter starts a tape on dst and writes the header record, synchronously,
// as the first frame. The header's Format and Tool are filled in when zero
// (a different Format is an error), and Time when zero from the clock.
// Close does not close dst.
func NewWriter(dst io.Writer, h Header, opts ...Option) (*Writer, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.onGap != nil {
		return nil, errors.New("tape: option: WithRecovery needs a file (Create): a failed frame is cut off the file")
	}
	return newWriter("", dst, h, o)
}

func newWriter(name string, dst io.Writer, h Header, o options) (*Writer, error) {
	w := &Writer{name: name, dst: dst, o: o,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		changed: make(chan struct{})}
	switch h.Format {
	case 0:
		h.Format = FormatVersion
	case FormatVersion:
	default:
		return nil, w.wrap(fmt.Errorf("header format %d: this writer writes format %d", h.Format, FormatVersion))
	}
	if h.Tool == "" {
		h.Tool = ToolName
	}
	if h.Time == 0 {
		h.Time = o.now().UnixNano()
	}
	h.TimeOrdered = !o.callOrder
	line, err := appendHeader(nil, &h)
	if err != nil {
		return nil, w.wrap(err)
	}
	w.enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(o.level), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(encoderWindow(o.flushBytes)))
	if err != nil {
		return nil, w.wrap(err)
	}
	frame := w.enc.EncodeAll(line, nil)
	if _, err := dst.Write(frame); err != nil {
		w.enc.Close()
		return nil, w.wrap(err)
	}
	w.st = Stats{Records: 1, Bytes: int64(len(line)), Frames: 1, Compressed: int64(len(frame))}
	w.gap.good = int64(len(frame))
	go w.flusher()
	return w, nil
}

// encoderWindow is the zstd window for batches of flushBytes: frames are
// independent and hold about flushBytes (plus at most one record), so a
// longer window would only cost memory (the encoder keeps two windows of
// history). It is the power of two at or above flushBytes, between 1 MiB
// and 8 MiB (the zstd default).
func encoderWindow(flushBytes int) int {
	w := minEncoderWindow
	for w < flushBytes && w < maxEncoderWindow {
		w *= 2
	}
	return w
}

// wrap prefixes err with the tape's path.
func (w *Writer) wrap(err error) error {
	if w.name == "" {
		return fmt.Errorf("tape: %w", err)
	}
	return fmt.Errorf("tape %s: %w", w.name, err)
}

// Write adds r to the tape; see WriteContext.
func (w *Writer) Write(r *Record) error {
	return w.WriteContext(context.Background(), r)
}

// WriteContext adds r to the tape. It encodes r at once, so the caller may
// reuse r and its slices when it returns; it does no disk I/O. The caller
// sets r.Time (zero is written as no time). r.Type must be TypeMessage or
// TypeEvent (an event needs an Event name and, if any, JSON Data).
//
// It waits while MaxQueued bytes are held (see Writer), until ctx is done:
// then the record is not written and ctx's error is returned. After a write
// error every call returns that error; after Close, ErrClosed.
func (w *Writer) WriteContext(ctx context.Context, r *Record) error {
	data, err := checkRecord(r)
	if err != nil {
		return w.wrap(err)
	}
	var kind frameKind
	if r.Type == TypeMessage {
		kind = storage(r.Frame) // outside the lock: the costly part
	}
	return w.add(ctx, r, kind, data)
}

// WriteClassified is Write for a message record (r.Type must be
// TypeMessage) that also returns what jsonrpc.Classify says of r.Frame.
// To decide how to store a frame the Writer must know whether it is valid
// JSON; here Classify's one validating pass tells it, so a caller that
// needs the classification too (a capture proxy flagging invalid frames)
// does not parse the frame twice. The record is stored exactly as Write
// stores it, and info is Classify's even when the record is not written.
func (w *Writer) WriteClassified(r *Record) (info jsonrpc.Info, err error) {
	if r.Type != TypeMessage {
		return info, w.wrap(fmt.Errorf("%w: WriteClassified takes a message record, not %q", errBadRecord, r.Type))
	}
	info = jsonrpc.Classify(r.Frame) // outside the lock, as in WriteContext
	kind := storeAs(r.Frame, classifyValid(r.Frame, info.Violations&jsonrpc.ViolationInvalidJSON == 0))
	return info, w.add(context.Background(), r, kind, nil)
}

// add appends checked record r, stored as kind with event data data, once
// there is room (see waitRoom).
func (w *Writer) add(ctx context.Context, r *Record, kind frameKind, data json.RawMessage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.waitRoom(ctx); err != nil {
		return err
	}
	w.appendLocked(r, kind, data)
	return nil
}

// storage decides how a message frame is stored: as classify says, except
// that text whose escaped form would be longer than its base64 form (many
// control bytes: up to 6 bytes each) is stored as base64. A frame of n
// bytes therefore never takes more than base64's 4*ceil(n/3) bytes in its
// line, which MaxRecordFor relies on.
func storage(frame []byte) frameKind {
	return storeAs(frame, classify(frame))
}

// storeAs is storage for a frame that classify (or classifyValid) gave
// kind.
func storeAs(frame []byte, kind frameKind) frameKind {
	if kind == frameText && jsonstr.QuotedLen(frame) > base64.StdEncoding.EncodedLen(len(frame)) {
		return frameB64
	}
	return kind
}

// waitRoom waits, with w.mu held (released while waiting), until a record
// may be queued. It returns the writer's state error or ctx's error.
func (w *Writer) waitRoom(ctx context.Context) error {
	var start time.Time
	defer func() {
		if !start.IsZero() {
			w.st.WaitTime += time.Since(start)
		}
	}()
	for {
		switch {
		case w.closed:
			return ErrClosed
		case w.err != nil:
			return w.wrap(w.err)
		case w.st.Queued < int64(w.o.maxQueued) || w.st.Queued == 0:
			return nil
		}
		if start.IsZero() {
			start = time.Now()
			w.st.Waits++
			w.cutLocked(false) // make sure what is queued is on its way out
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
			w.mu.Lock()
		case <-ctx.Done():
			w.mu.Lock()
			return ctx.Err()
		}
	}
}

// appendLocked encodes r into the current batch; w.mu is held.
func (w *Writer) appendLocked(r *Record, kind frameKind, data json.RawMessage) {
	if w.cur == nil {
		w.cur = w.newBatchLocked()
	}
	n := len(w.cur)
	t := w.orderTime(r.Time)
	if t != r.Time {
		c := *r
		c.Time = t
		r = &c
	}
	w.cur = appendRecord(w.cur, r, kind, data)
	w.placeLocked(t, n)
	size := int64(len(w.cur) - n)
	w.curN++
	w.st.Records++
	if r.Type == TypeMessage {
		w.st.Messages++
	}
	w.st.Bytes += size
	w.st.Queued += size
	w.st.PeakQueued = max(w.st.PeakQueued, w.st.Queued)
	if len(w.cur) >= w.o.flushBytes {
		w.cutLocked(true)
	}
}

// newBatchLocked returns an empty batch buffer; w.mu is held.
func (w *Writer) newBatchLocked() []byte {
	if n := len(w.free); n > 0 {
		b := w.free[n-1][:0]
		w.free = w.free[:n-1]
		return b
	}
	return make([]byte, 0, min(w.o.flushBytes+w.o.flushBytes/4, 4<<20)) // sized for a full batch: no growing and copying
}

// cutLocked hands the current batch to the flusher; w.mu is held. With
// hold, the records stamped within the last flush interval stay for the
// next batch (see holdBackLocked).
func (w *Writer) cutLocked(hold bool) {
	if len(w.cur) == 0 {
		return
	}
	keep := 0
	if hold {
		keep = w.holdBackLocked()
	}
	n := len(w.lines) - keep
	if n == 0 { // all held: they go out at the next cut whatever their time
		for i := range w.lines {
			w.lines[i].held = true
		}
		return
	}
	batch := w.cur
	w.cur = nil
	if keep > 0 { // the held lines go on in a buffer of their own
		split := w.lines[n].off
		w.cur = append(w.newBatchLocked(), batch[split:]...)
		batch = batch[:split]
	}
	w.pending = append(w.pending, batch)
	w.pendN = append(w.pendN, int64(n))
	w.pendT = append(w.pendT, w.cutOrderLocked(n))
	w.curN = int64(keep)
	w.cutSeq++
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// notifyLocked wakes everyone waiting on w.changed; w.mu is held.
func (w *Writer) notifyLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// flusher is the writer's goroutine: it cuts the batch every flush
// interval, and compresses and writes cut batches in order.
func (w *Writer) flusher() {
	defer close(w.done)
	tick := time.NewTicker(w.o.flushInterval)
	defer tick.Stop()
	var out []byte
	for {
		quit := false
		select {
		case <-w.kick:
		case <-tick.C:
			w.mu.Lock()
			w.cutLocked(true)
			w.mu.Unlock()
		case <-w.quit:
			quit = true
			w.mu.Lock()
			w.cutLocked(false)
			w.mu.Unlock()
		}
		out = w.writePending(out)
		if quit {
			return
		}
	}
}

// writePending compresses and writes every pending batch; out is a reusable
// buffer for the compressed frame, returned for the next call.
func (w *Writer) writePending(out []byte) []byte {
	for {
		w.mu.Lock()
		if len(w.pending) == 0 {
			w.mu.Unlock()
			return out
		}
		batch, n, first := w.pending[0], w.pendN[0], w.pendT[0]
		w.pending[0] = nil
		w.pending, w.pendN, w.pendT = w.pending[1:], w.pendN[1:], w.pendT[1:]
		failed := w.err != nil
		w.mu.Unlock()

		var err error
		var gapped bool // the frame written began with a gap marker
		if !failed {
			if w.o.onGap != nil {
				out, gapped, err = w.writeRecovering(batch, n, first, out)
			} else {
				out = w.enc.EncodeAll(batch, out[:0])
				_, err = w.dst.Write(out)
			}
		}

		w.mu.Lock()
		w.st.Queued -= int64(len(batch))
		w.doneSeq++
		if gapped {
			w.st.Gaps++
		}
		switch {
		case failed:
		case err != nil && w.o.onGap != nil:
			w.st.Lost += n
		default:
			if err != nil {
				w.err = fmt.Errorf("write: %w", err)
				w.st.Err = w.wrap(w.err)
			} else {
				w.st.Frames++
				w.st.Compressed += int64(len(out))
			}
		}
		if cap(batch) <= 2*w.o.flushBytes && len(w.free) < 4 {
			w.free = append(w.free, batch[:0])
		}
		w.notifyLocked()
		w.mu.Unlock()
		if cap(out) > 4*w.o.flushBytes {
			out = nil // do not keep a huge frame's buffer
		}
	}
}

// Flush cuts the current batch and waits until every record accepted so far
// is written to the destination (it does not fsync), or ctx is done.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.cutLocked(false)
	target := w.cutSeq
	for {
		if w.err != nil {
			err := w.wrap(w.err)
			w.mu.Unlock()
			return err
		}
		if w.doneSeq >= target {
			w.mu.Unlock()
			return nil
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		w.mu.Lock()
	}
}

// Close appends a final "stats" event (StatsData, counted before it),
// writes everything queued, syncs and closes the file when the Writer came
// from Create, and stops the writer's goroutine. Writes waiting for room
// return ErrClosed. Close is idempotent: later calls return the first
// result.
func (w *Writer) Close() error {
	w.closeOnce.Do(func() { w.closeErr = w.close() })
	return w.closeErr
}

func (w *Writer) close() error {
	w.mu.Lock()
	w.closed = true
	if w.err == nil {
		st := w.st
		data, err := json.Marshal(StatsData{Records: st.Records, Messages: st.Messages, Bytes: st.Bytes,
			Frames: st.Frames, Compressed: st.Compressed, PeakQueued: st.PeakQueued,
			Waits: st.Waits, WaitNs: int64(st.WaitTime), Lost: st.Lost, Gaps: st.Gaps,
			Reordered: st.Reordered, Late: st.Late, LateMaxNs: st.LateMax})
		if err == nil {
			// Last in time too: a clock behind the records' is not late.
			r := Record{Type: TypeEvent, Time: max(w.o.now().UnixNano(), w.newestLocked()), Event: EventStats, Data: data}
			w.appendLocked(&r, frameJSON, data)
		}
	}
	w.notifyLocked() // wake waiting Writes: they return ErrClosed
	w.mu.Unlock()

	close(w.quit)
	<-w.done
	w.enc.Close()

	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		err = w.wrap(err)
	} else if w.gap.active { // the flusher has exited: its state is ours
		err = w.wrap(fmt.Errorf("%s not recorded since %s: %w", english.Count(w.gap.lost, "record"), w.gap.from.UTC().Format(time.RFC3339), w.gap.cause))
	}
	if w.file != nil {
		// Only a regular file is synced: a device (-o /dev/null) or a
		// pipe cannot be (EINVAL), and holds nothing to make durable.
		if fi, serr := w.file.Stat(); serr == nil && fi.Mode().IsRegular() {
			if serr := w.file.Sync(); serr != nil && err == nil {
				err = w.wrap(fmt.Errorf("sync: %w", serr))
			}
		}
		if cerr := w.file.Close(); cerr != nil && err == nil {
			err = w.wrap(fmt.Errorf("close: %w", cerr))
		}
	}
	return err
}

// Stats returns the writer's counters so far.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st
}
