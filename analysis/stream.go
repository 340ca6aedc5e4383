// Package analysis reads tapes offline: it summarises them (Inspect), lists
// their messages as a timeline (Show), and gives other offline tools (diff,
// export, report) the same building blocks.
//
// # Data flow
//
// A [Scanner] streams a tape: a read-ahead goroutine takes records off the
// [tape.Reader] (decompression and record parsing) and classifies each
// message frame with [jsonrpc.Classify], while the caller's goroutine
// splits batches into members and does its analysis. Each step yields one [Item]: a message (a whole frame or one
// member of a batch) or an event record. Inspect reads with
// tape.Reader.NextClassifiedMembers, which parses the records the Writer writes
// by their known prefixes, lets Classify's validating pass find where each
// frame ends, and copies no frame; it reuses the Records once the
// Inspector is done with them.
//
// Inspect keeps both cores busy: the tape.Reader decompresses frames ahead
// on a goroutine of its own (tape.Reader.DecodeAhead); the Scanner's
// read-ahead goroutine parses and classifies records, listing the members
// of params and result (jsonrpc.ClassifyMembers) and finding the few the
// Inspector reads (fieldSet) while the frame is in its core's cache; the
// caller's goroutine runs the Inspector. As the caller finishes with
// records, the Scanner tells the Reader (tape.Reader.ReleaseShared),
// which then
// decompresses new frames into the bytes of released ones instead of
// allocating: the garbage collector runs a few times per tape, not every
// few frames.
//
// Consumers keep state only for what is in flight. A [Pairer] holds the
// caller's data for each request until its response arrives, keyed on
// session, direction and id, so a response is matched to its request in
// O(1) and forgotten at once. [Inspector] builds a [Report] from the items
// with HDR histograms for latencies and bounded tables for everything
// else; [Show] writes a timeline as it reads. Memory therefore depends on
// the number of requests in flight and the size of the largest record, not
// on the length of the tape: a tape of ten million messages is inspected
// in a few megabytes.
//
// Sessions may interleave in a tape (HTTP recordings hold many). To work on
// one session at a time, list them with [Sessions] and scan once per
// session with [OnlySession]; each pass streams.
//
// Items come in time order, as the tape.Reader gives them: in file order
// for a tape whose header says time_ordered (every tape written since
// the tape Writer keeps time order), put in order by the Reader for an
// older tape (see package tape, order.go). The Scanner reorders nothing.
//
// A tape cut short (a killed recorder) or damaged is read up to the damage:
// the Scanner ends with io.EOF and [Scanner.Warning] returns the reader's
// *tape.TailError, which names how many records were read.
//
// # Decisions where the protocol is silent
//
//   - Latency is measured from a request's record to its response's, on the
//     recorder's clock. A multi round-trip request (input_required, then a
//     retry with a new id, the same method and name, and inputResponses or
//     requestState) is one operation, timed from the first round to the
//     final answer. A task-augmented request is timed from the request to
//     the tasks/result answer (or the first terminal tasks/get status);
//     its polls are timed as requests of their own too.
//   - A cancelled request that gets no answer is not "unanswered": the
//     protocol asks the receiver not to answer. Over HTTP, a client closing
//     the response stream of an unanswered request counts as a cancel.
//   - "progress after the response" is told from "unknown token" by
//     remembering the tokens of the last DefaultRecent answered requests;
//     id-reused-after-answer by remembering their ids likewise.
//   - cancelled-notification-2026-http: on 2026-07-28 Streamable HTTP a
//     request is cancelled by closing its stream, not by a notification.
//   - request-before-initialize is reported once per session; a session
//     whose requests carry a 2026-07-28 _meta version has no handshake.
//   - missing-session-header: once any response of a recording set
//     Mcp-Session-Id, every later HTTP request without one is reported,
//     except an exchange whose response assigns one and an initialize
//     (which carries none even when the server refuses it).
//   - A request whose HTTP exchange the server ends with a 4xx or 5xx
//     status and no JSON-RPC answer was answered by that status
//     (Report.Refused), not left unanswered; an error whose id is null,
//     on an exchange with exactly one request in flight, answers it.
//   - Sessionless HTTP (no Mcp-Session-Id) is recorded one session per
//     connection; its handshake is checked per client, known by its
//     User-Agent (see deferHandshake).
//   - Names (methods, tools, error messages) are counted up to
//     DefaultMaxDistinct distinct values, then under "(other)"; sessions
//     are listed up to DefaultMaxSessions, then only counted.
package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Item is one thing read from a tape: a message or an event.
//
// A batch frame yields one Item for the whole array (Info.Kind ==
// KindBatch, Batch = number of members, Member = -1) followed by one Item
// per member (Batch = number of members, Member = its index). Every other
// message has Batch 0 and Member -1. For events, Frame is nil and Info is
// the zero value.
type Item struct {
	// Rec is the record the item came from; members of a batch share it.
	Rec *tape.Record
	// Seq is the record's number in the tape file, from 1 (the header is
	// not counted), as the tape.Reader returns them: in time order (for
	// a tape written before records were written in time order, the
	// Reader's order, not the file's).
	Seq int64
	// Frame is the message: Rec.Frame, or a sub-slice of it for a member.
	Frame []byte
	// Info is Frame classified.
	Info jsonrpc.Info
	// Batch is the number of members of the batch this item is or belongs
	// to; 0 when it is not part of a batch.
	Batch int
	// Member is the index of this member in its batch, -1 otherwise.
	Member int

	// fields, when not nil, says where the members of the frame's params
	// or result the Inspector reads are (with sharedFrames).
	fields *fieldSet
}

// IsMessage reports whether the item is a message (not an event).
func (it *Item) IsMessage() bool { return it.Rec.Type == tape.TypeMessage }

// IsEvent reports whether the item is an event record.
func (it *Item) IsEvent() bool { return it.Rec.Type == tape.TypeEvent }

// ScanOption configures a Scanner.
type ScanOption func(*scanOptions) error

type scanOptions struct {
	session    string
	hasSession bool
	chunk      int
	chunkBytes int
	shared     bool // read with tape.Reader.NextShared: frames alias the reader's buffers
}

// sharedFrames makes the Scanner read records with
// tape.Reader.NextClassifiedMembers: no copy of each frame (a frame kept keeps
// its decompressed tape frame, about 1 MiB, in memory), and Records reused
// once the next item is asked for. For consumers that keep neither
// (Inspect, the OTLP export).
func sharedFrames() ScanOption {
	return func(o *scanOptions) error {
		o.shared = true
		return nil
	}
}

// OnlySession makes the Scanner yield only the records of the named
// session (records of other sessions are read and skipped).
func OnlySession(name string) ScanOption {
	return func(o *scanOptions) error {
		o.session, o.hasSession = name, true
		return nil
	}
}

// Read-ahead bounds: records are handed from the reading goroutine in
// chunks of at most this many records or frame bytes, and at most
// readAheadChunks chunks wait at a time. Four chunks (2,048 records) keep
// both cores busier than two did when the decompressing, the reading and
// the analysing goroutines take turns (inspect of the 1 M-message bench
// tape: 1.85-1.90 cores used instead of 1.75-1.83, wall time -6 % median
// over 12 alternating runs); eight or more cost CPU, the records being
// further out of the cache when the Inspector reaches them.
const (
	defaultChunk      = 512
	defaultChunkBytes = 1 << 20
	readAheadChunks   = 4
)

// chunk is a slice of records read ahead, or the end of reading.
type chunk struct {
	recs []*slot
	err  error // io.EOF at the clean or damaged end, or a read error
	n    int64 // the chunk's number, from 0
	last int64 // number of the last record read for it (some may be skipped)
}

// slot is where the read-ahead goroutine puts a record (with
// sharedFrames; the tape.Reader allocates records otherwise), its number
// in the tape and its classification: an Item with Rec, Seq and Info set
// (with sharedFrames, the whole Item Next yields for it, and where the
// members of its params or result the Inspector reads are: the caller's
// goroutine copies nothing).
type slot struct {
	rec    tape.Record
	item   Item
	fields fieldSet
	block  *slotBlock // the block holding the slot
}

// slotBlock is a chunk's slots. A block goes back to the read-ahead
// goroutine once every record in it has been yielded and its item used
// (the caller's next call to Next): without sharedFrames, Next's Item
// holds a copy of the info; a slot's Record and Item are handed out only
// with sharedFrames, whose caller keeps neither past its next call.
type slotBlock struct {
	slots   []slot
	pending int   // records not done with; written by the reader before sending, then by Next only
	chunk   int64 // number of the chunk it was sent with, from 0
}

// Scanner streams the items of a tape. Create it with NewScanner, call Next
// until it returns io.EOF, then check Warning; always Close it. A Scanner is
// not safe for concurrent use.
type Scanner struct {
	r      *tape.Reader
	o      scanOptions
	ctx    context.Context
	chunks chan chunk
	free   chan []*slot
	cancel context.CancelFunc
	done   chan struct{}

	cur    []*slot // current chunk
	blocks chan *slotBlock
	// With sharedFrames, the records the caller is done with are told
	// to the reading goroutine, which tells the tape.Reader
	// (ReleaseShared): chunks in file order, and released, the number of
	// the last record of the chunks done with so far.
	chunkLast []int64 // last record of each chunk not yet released, from chunk chunkBase
	chunkDone []bool
	chunkBase int64
	released  atomic.Int64
	held      *slotBlock   // block of the last item yielded
	pos       int          // next record in cur
	yielded   int64        // records yielded
	touched   jsonrpc.Kind // what touchAhead read, so that the reads stay
	item      Item
	rec       *tape.Record // record whose batch members are being yielded
	members   [][]byte
	member    int
	err       error // sticky end
}

// NewScanner starts reading r in a goroutine of its own. The goroutine
// stops at the end of the tape, when ctx ends, or on Close. The caller
// keeps ownership of r (close it after the Scanner).
func NewScanner(ctx context.Context, r *tape.Reader, opts ...ScanOption) (*Scanner, error) {
	o := scanOptions{chunk: defaultChunk, chunkBytes: defaultChunkBytes}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("analysis: scan option: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Scanner{
		r: r, o: o, ctx: ctx, cancel: cancel,
		chunks: make(chan chunk, readAheadChunks),
		free:   make(chan []*slot, readAheadChunks+2),
		blocks: make(chan *slotBlock, readAheadChunks+2),
		done:   make(chan struct{}),
	}
	go s.readAhead(ctx)
	return s, nil
}

// readAhead reads records in chunks until the end, an error or ctx ends.
func (s *Scanner) readAhead(ctx context.Context) {
	defer close(s.done)
	defer close(s.chunks)
	var seq, chunks int64
	var members []jsonrpc.Member // of the record being read, for fill
	for {
		if s.o.shared {
			s.r.ReleaseShared(s.released.Load())
		}
		var recs []*slot
		select {
		case recs = <-s.free:
			clear(recs)
			recs = recs[:0]
		default:
			recs = make([]*slot, 0, s.o.chunk)
		}
		var (
			size int
			err  error
		)
		var block *slotBlock
		select {
		case block = <-s.blocks:
		default:
			block = &slotBlock{slots: make([]slot, s.o.chunk)}
			for i := range block.slots {
				block.slots[i].block = block
			}
		}
		for len(recs) < s.o.chunk && size < s.o.chunkBytes {
			sl := &block.slots[len(recs)]
			rec := &sl.rec
			if s.o.shared {
				members, err = s.r.NextClassifiedMembers(rec, &sl.item.Info, members) // reads and classifies in one pass
				if err == nil && rec.Type == tape.TypeMessage {
					sl.fields.fill(rec.Frame, &sl.item.Info, members)
				}
			} else {
				rec, err = s.r.Next()
			}
			if err != nil {
				break
			}
			seq++
			if s.o.hasSession && rec.Session != s.o.session {
				continue
			}
			if s.o.shared { // NextClassifiedMembers classified it: the Item is ready
				sl.item.Rec, sl.item.Seq, sl.item.Frame, sl.item.Batch, sl.item.Member, sl.item.fields = rec, seq, nil, 0, -1, nil
				if rec.Type == tape.TypeMessage {
					sl.item.Frame, sl.item.fields = rec.Frame, &sl.fields
				}
			} else {
				sl.item.Rec, sl.item.Seq, sl.item.Info = rec, seq, jsonrpc.Info{}
				if rec.Type == tape.TypeMessage {
					sl.item.Info = jsonrpc.Classify(rec.Frame)
				}
			}
			recs = append(recs, sl)
			size += len(rec.Frame) + len(rec.Data)
		}
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		block.pending, block.chunk = len(recs), chunks
		chunks++
		select {
		case s.chunks <- chunk{recs: recs, err: err, n: block.chunk, last: seq}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// Next returns the next item, or io.EOF at the end of the tape (also after
// a damaged tail: see Warning). Another error means the tape could not be
// read or the context ended. The Item is reused by the next call; the
// Record it points to is the caller's to keep (except with the internal
// sharedFrames option, where it is reused too).
func (s *Scanner) Next() (*Item, error) {
	if s.rec != nil && s.member < len(s.members) {
		s.emitMember()
		return &s.item, nil
	}
	s.rec = nil
	if b := s.held; b != nil { // the caller is done with the last item
		s.held = nil
		if b.pending--; b.pending == 0 {
			s.chunkReleased(b.chunk)
			select {
			case s.blocks <- b:
			default:
			}
		}
	}
	sl, err := s.read()
	if err != nil {
		return nil, err // io.EOF, a read error or the context
	}
	s.touchAhead()
	rec := sl.item.Rec
	s.held = sl.block
	s.yielded++
	if s.o.shared && (rec.Type != tape.TypeMessage || sl.item.Info.Kind != jsonrpc.KindBatch) {
		// The reading goroutine made the Item in the slot, which stays
		// the caller's until its next call: nothing to copy.
		return &sl.item, nil
	}
	s.item = Item{Rec: rec, Seq: sl.item.Seq, Member: -1}
	if rec.Type != tape.TypeMessage {
		return &s.item, nil
	}
	s.item.Frame = rec.Frame
	s.item.Info = sl.item.Info
	if s.o.shared {
		s.item.fields = &sl.fields
	}
	if s.item.Info.Kind == jsonrpc.KindBatch {
		s.members, _ = jsonrpc.AppendSplit(s.members[:0], rec.Frame) // Classify validated it
		s.item.Batch = len(s.members)
		s.rec, s.member = rec, 0
	}
	return &s.item, nil
}

// read returns the next record in file order.
func (s *Scanner) read() (*slot, error) {
	for s.pos >= len(s.cur) {
		if s.err != nil {
			return nil, s.err
		}
		if s.cur != nil {
			select {
			case s.free <- s.cur:
			default:
			}
			s.cur = nil
		}
		c, ok := <-s.chunks
		if !ok { // the reader stopped early: the context ended
			if s.err = s.ctx.Err(); s.err == nil {
				s.err = io.EOF
			}
			return nil, s.err
		}
		s.cur, s.pos = c.recs, 0
		if c.err != nil {
			s.err = c.err
		}
		if s.o.shared {
			s.chunkLast = append(s.chunkLast, c.last)
			s.chunkDone = append(s.chunkDone, false)
			if len(c.recs) == 0 { // nothing for the caller to be done with
				s.chunkReleased(c.n)
			}
		}
	}
	r := s.cur[s.pos] // left in place: readAhead clears the chunk before reusing it
	s.pos++
	return r, nil
}

// chunkReleased notes that the caller is done with the records of chunk n,
// and passes on how far, in file order, it is done with all records.
func (s *Scanner) chunkReleased(n int64) {
	if !s.o.shared {
		return
	}
	s.chunkDone[n-s.chunkBase] = true
	k := 0
	for k < len(s.chunkDone) && s.chunkDone[k] {
		k++
	}
	if k == 0 {
		return
	}
	s.released.Store(s.chunkLast[k-1])
	s.chunkLast = s.chunkLast[:copy(s.chunkLast, s.chunkLast[k:])]
	s.chunkDone = s.chunkDone[:copy(s.chunkDone, s.chunkDone[k:])]
	s.chunkBase += int64(k)
}

// emitMember fills s.item with the next batch member.
func (s *Scanner) emitMember() {
	m := s.members[s.member]
	s.item = Item{Rec: s.rec, Seq: s.item.Seq, Frame: m, Info: jsonrpc.Classify(m), Batch: len(s.members), Member: s.member}
	s.member++
}

// Records returns how many records Next has yielded so far (batch members
// count once, with their record). With OnlySession, records of other
// sessions are not counted.
func (s *Scanner) Records() int64 { return s.yielded }

// Warning returns nil, or after Next returned io.EOF, the reader's
// *tape.TailError when the tape did not end cleanly.
func (s *Scanner) Warning() error {
	if !errors.Is(s.err, io.EOF) || s.pos < len(s.cur) { // not at the end yet
		return nil
	}
	return s.r.Warning()
}

// Close stops the read-ahead goroutine and waits for it. It does not close
// the tape.Reader. It is idempotent.
func (s *Scanner) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// SessionSummary describes one session of a tape, as listed by Sessions.
type SessionSummary struct {
	// ID is the session's name in the tape ("" for records outside any
	// session).
	ID string `json:"id"`
	// First and Last are the times of its first and last records (Unix ns).
	First int64 `json:"first"`
	Last  int64 `json:"last"`
	// Records counts its records; Messages those that are messages.
	Records  int64 `json:"records"`
	Messages int64 `json:"messages"`
}

// Sessions reads the tape at path once and lists its sessions in the order
// they first appear. Its memory grows with the number of sessions only. A
// damaged tail is returned as the warning (a *tape.TailError), with the
// sessions read up to it.
func Sessions(ctx context.Context, path string) (list []SessionSummary, warning error, err error) {
	r, err := tape.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	index := map[string]int{}
	var rec tape.Record // only its strings are kept, and they are copies
	for n := 0; ; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		err := r.NextShared(&rec)
		if err == io.EOF {
			return list, r.Warning(), nil
		}
		if err != nil {
			return nil, nil, err
		}
		i, ok := index[rec.Session]
		if !ok {
			i = len(list)
			index[rec.Session] = i
			list = append(list, SessionSummary{ID: rec.Session, First: rec.Time})
		}
		s := &list[i]
		s.Records++
		s.Last = max(s.Last, rec.Time)
		if rec.Type == tape.TypeMessage {
			s.Messages++
		}
	}
}
