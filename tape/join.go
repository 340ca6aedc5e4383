package tape

// Joined reading: the tapes of a rotated recording, or of several
// recordings, read as one tape.

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/internal/english"
)

// joinBatch is the size of the frames a joined Reader's producer writes.
const joinBatch = 1 << 20

// Exchange numbers of the Nth recording read with others are offset by
// N<<joinShift in a joined read, and by N<<segmentShift in a tape that
// holds several (Reader): apart in both, also when a joined tape is one of
// those, as long as recorders count fewer than 1<<40 exchanges and a join
// has fewer than 64 recordings; and below 1<<53 (exact in a JavaScript
// number, as HAR readers hold them) with fewer than 128 tapes in a file.
const (
	joinShift    = 40
	segmentShift = 46
)

// Recording returns the number of the recording an exchange number
// belongs to in a joined read, or in a tape holding several joined with
// cat: the exchanges of one recording share it, those of two recordings
// do not (within the bounds above). A tape read alone is one recording.
func Recording(exchange uint64) uint64 { return exchange >> joinShift }

// apart keeps the records of one recording apart from those of the other
// recordings read with it: its session ids become "LABEL/ID", and its
// exchange numbers are offset by off. The zero apart changes nothing. The
// joined read of several tapes (OpenJoined) and a tape that holds several
// (Reader.startSegment) both use it.
type apart struct {
	label string
	off   uint64
	// The last session id renamed and its new name: records of one
	// session come in runs, and a name made once is not made again.
	from, to string
}

// apply renames rec's session and offsets its exchange number.
func (a *apart) apply(rec *Record) {
	if a.label == "" {
		return
	}
	if rec.Session != "" {
		if rec.Session != a.from {
			a.from, a.to = rec.Session, a.label+"/"+rec.Session
		}
		rec.Session = a.to
	}
	if rec.Exchange != 0 {
		rec.Exchange += a.off
	}
}

// OpenJoined opens several tapes and reads them as one. Tapes of one
// rotated recording (same Header.Segment.Series) are read one after the
// other in number order; a missing number, and a tape's damaged tail, give
// an "error" event where they are, and reading goes on with the next tape.
// Their "stats" events are summed into one, the last record (see
// StatsData.add), marked as made by the join (StatsData.Tapes); a
// malformed one is left out. When the tapes come from more than
// one recording (several proxies of one server), their records are merged
// in time order and kept apart (see apart): each session id becomes
// "P/ID", P being the recording's label (its host, or "rN" when hosts
// repeat or are unknown), and each exchange number is offset by N<<40, N
// being its number in the order of their start. The header
// is the first recording's (its host cleared when the recordings' differ).
// A tape that holds several (joined with cat) keeps them apart itself
// the same way (see Reader); the join then prefixes its own label.
//
// A single path opens as Open does. The returned Reader works like any
// other; Close releases every file.
func OpenJoined(paths []string, opts ...ReaderOption) (*Reader, error) {
	switch len(paths) {
	case 0:
		return nil, errors.New("tape: no tape to open")
	case 1:
		return Open(paths[0], opts...)
	}
	var recs []*recording
	bySeries := map[string]*recording{}
	closeAll := func() {
		for _, g := range recs {
			g.close()
		}
	}
	for _, p := range paths {
		r, err := Open(p, opts...)
		if err != nil {
			closeAll()
			return nil, err
		}
		pt := &part{path: p, r: r}
		h := r.Header()
		if s := h.Segment; s != nil {
			if g := bySeries[s.Series]; g != nil {
				g.parts = append(g.parts, pt)
				continue
			}
		}
		g := &recording{hdr: h, parts: []*part{pt}}
		if h.Segment != nil {
			bySeries[h.Segment.Series] = g
		}
		recs = append(recs, g)
	}
	for _, g := range recs {
		slices.SortStableFunc(g.parts, func(a, b *part) int { return cmp.Compare(a.seq(), b.seq()) })
	}
	slices.SortStableFunc(recs, func(a, b *recording) int { return cmp.Compare(a.parts[0].r.Header().Time, b.parts[0].r.Header().Time) })
	labelRecordings(recs)
	h := *recs[0].parts[0].r.Header()
	for _, g := range recs[1:] {
		if g.hdr.Host != h.Host {
			h.Host = ""
		}
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer closeAll()
		pw.CloseWithError(produceJoined(pw, &h, recs))
	}()
	name := fmt.Sprintf("%s (+%s)", paths[0], english.Count(len(paths)-1, "tape"))
	r, err := newReader(name, pr, opts)
	if err != nil {
		pr.Close()
		<-done
		return nil, err
	}
	r.file = joinCloser{pr: pr, done: done}
	return r, nil
}

// joinCloser ends a joined Reader's producer.
type joinCloser struct {
	pr   *io.PipeReader
	done chan struct{}
}

func (c joinCloser) Close() error {
	c.pr.Close()
	<-c.done
	return nil
}

// part is one tape of a recording.
type part struct {
	path string
	r    *Reader
}

func (p *part) seq() int {
	if s := p.r.Header().Segment; s != nil {
		return s.Seq
	}
	return 0
}

// recording is the tapes of one recording, read in order.
type recording struct {
	hdr   *Header
	apart apart // zero when it is the only recording
	parts []*part
	i     int     // part being read
	head  *Record // next record, nil when none read yet
	eof   bool
	last  int64      // time of the last record returned
	stats *StatsData // the sum of its tapes' stats events, nil when none was read
}

func (g *recording) close() {
	for _, p := range g.parts {
		p.r.Close()
	}
}

// labelRecordings names each recording when there are several.
func labelRecordings(recs []*recording) {
	if len(recs) < 2 {
		return
	}
	hosts := map[string]int{}
	for _, g := range recs {
		hosts[g.hdr.Host]++
	}
	for i, g := range recs {
		label := "r" + strconv.Itoa(i+1)
		if g.hdr.Host != "" && hosts[g.hdr.Host] == 1 {
			label = g.hdr.Host
		}
		g.apart = apart{label: label, off: uint64(i+1) << joinShift}
	}
}

// next returns the recording's next record, or nil at its end.
func (g *recording) next() (*Record, error) {
	for g.i < len(g.parts) {
		p := g.parts[g.i]
		rec, err := p.r.Next()
		if err == io.EOF {
			warn := p.r.Warning()
			g.i++
			if warn != nil {
				return g.note(g.noteTime(p), fmt.Sprintf("%s: %v", p.path, warn)), nil
			}
			if g.i < len(g.parts) {
				if prev, nxt := p.seq(), g.parts[g.i].seq(); prev > 0 && nxt > prev+1 {
					return g.note(g.noteTime(p), fmt.Sprintf("tapes %d to %d of this recording are missing (deleted, or not given)", prev+1, nxt-1)), nil
				}
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.path, err)
		}
		if rec.Type == TypeEvent && rec.Event == EventStats {
			// The writer's counts of one tape: summed, for the end.
			addStats(&g.stats, rec)
			continue
		}
		g.apart.apply(rec)
		g.last = max(g.last, rec.Time)
		return rec, nil
	}
	return nil, nil
}

// noteTime is the time of a note about p, read to its end: that of the
// last record before it (its tape's start when none was), so that the
// note's time agrees with its place.
func (g *recording) noteTime(p *part) int64 { return max(g.last, p.r.Header().Time) }

// note is an "error" event joined into the stream, a gap marker: records
// of the recording are missing at t (a damaged tape's tail, missing
// tapes), how many is not known.
func (g *recording) note(t int64, msg string) *Record {
	type gap struct {
		From int64 `json:"from"`
		To   int64 `json:"to"`
	}
	data, _ := json.Marshal(struct {
		Error string `json:"error"`
		Gap   gap    `json:"gap"`
	}{msg, gap{t, t}})
	return &Record{Type: TypeEvent, Time: t, Event: EventError, Data: data}
}

// produceJoined writes the joined tape to w.
func produceJoined(w io.Writer, h *Header, recs []*recording) error {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	defer enc.Close()
	line, err := appendHeader(nil, h)
	if err != nil {
		return err
	}
	var out []byte
	emit := func(batch []byte) error {
		out = enc.EncodeAll(batch, out[:0])
		_, err := w.Write(out)
		return err
	}
	if err := emit(line); err != nil {
		return err
	}
	var batch []byte
	var last int64
	add := func(rec *Record) error {
		data, err := checkRecord(rec)
		if err != nil {
			return err
		}
		kind := frameJSON
		if rec.Type == TypeMessage {
			kind = storage(rec.Frame)
		}
		batch = appendRecord(batch, rec, kind, data)
		last = max(last, rec.Time)
		if len(batch) >= joinBatch {
			if err := emit(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
		return nil
	}
	for {
		g, err := earliest(recs)
		if err != nil {
			return err
		}
		if g == nil {
			break
		}
		rec := g.head
		g.head = nil
		if err := add(rec); err != nil {
			return err
		}
	}
	if st := joinedStats(recs); st != nil {
		if err := add(statsEvent(st, last)); err != nil {
			return err
		}
	}
	if len(batch) > 0 {
		return emit(batch)
	}
	return nil
}

// joinedStats returns the sum of the recordings' stats, nil when no tape
// had a stats event.
func joinedStats(recs []*recording) *StatsData {
	var sum *StatsData
	for _, g := range recs {
		if g.stats != nil {
			if sum == nil {
				sum = new(StatsData)
			}
			sum.add(g.stats)
		}
	}
	return sum
}

// addStats adds the counts of the stats event rec, one tape's (or a
// joined read's), to *sum, allocated at the first; a malformed event is
// left out. The joined read of several tapes (recording.next) and a tape
// that holds several (segments.holdStats) both sum them with it.
func addStats(sum **StatsData, rec *Record) {
	var st StatsData
	if json.Unmarshal(rec.Data, &st) != nil {
		return
	}
	if *sum == nil {
		*sum = new(StatsData)
	}
	(*sum).add(&st)
}

// statsEvent returns the "stats" event of the summed counts st, the last
// record of a read of several tapes, at time t.
func statsEvent(st *StatsData, t int64) *Record {
	data, _ := json.Marshal(st) // integers only: cannot fail
	return &Record{Type: TypeEvent, Time: t, Event: EventStats, Data: data}
}

// add adds the counts of o, another tape's, to s: the sums of the
// counts, the larger of the highest ones (PeakQueued, LateMaxNs).
func (s *StatsData) add(o *StatsData) {
	s.Records += o.Records
	s.Messages += o.Messages
	s.Bytes += o.Bytes
	s.Frames += o.Frames
	s.Compressed += o.Compressed
	s.PeakQueued = max(s.PeakQueued, o.PeakQueued)
	s.Waits += o.Waits
	s.WaitNs += o.WaitNs
	s.Lost += o.Lost
	s.Gaps += o.Gaps
	s.Reordered += o.Reordered
	s.Late += o.Late
	s.LateMaxNs = max(s.LateMaxNs, o.LateMaxNs)
	s.Tapes += max(o.Tapes, 1) // a recorded stats event is one tape's
}

// earliest fills each recording's head and returns the one whose head
// comes first in time (nil when all are read).
func earliest(recs []*recording) (*recording, error) {
	var best *recording
	for _, g := range recs {
		if g.head == nil && !g.eof {
			rec, err := g.next()
			if err != nil {
				return nil, err
			}
			g.head, g.eof = rec, rec == nil
		}
		if g.head != nil && (best == nil || g.head.Time < best.head.Time) {
			best = g
		}
	}
	return best, nil
}
