package tape

// Segments: a tape that holds several. zstd frames concatenate, so
// `cat a.jsonl.zst b.jsonl.zst > c.jsonl.zst` is a valid stream whose
// second tape begins with a header line in the middle. The Reader reads
// such a file as the joined read of its tapes (OpenJoined) keeps
// recordings apart, with the same apart: each tape after the first
// starts a segment whose session ids and exchange numbers are renamed, so
// that ids restarting in the second tape are not taken for ids reused in
// one session. Its tapes' "stats" events are held back and summed into
// one, the last record, marked as a joined read's (StatsData.Tapes), as
// OpenJoined ends (unless WithFileOrder: a live tail keeps each where it
// is, its end record).

import (
	"io"
	"strconv"
)

// segments is what a Reader knows of the recordings in its tape.
type segments struct {
	cur apart // of the segment being read; zero for the first recording
	// Recordings begun so far (1 once the first header is read), and each
	// rotated recording's apart by series: the next tape of a rotation,
	// joined with cat, continues its sessions as OpenJoined does.
	n      int
	series map[string]apart
	// With records held for time order (Reader.reorder): begun says a
	// segment began, and first is its first record, held until the last
	// segment's records are all returned.
	begun bool
	first *Record
	// The "stats" events read, held back to the end (endStats): their
	// number, the last one, its time (the newest) and their sum
	// (addStats); last is the time of the newest other record read.
	statsN   int
	statsRec *Record
	statsAt  int64
	stats    *StatsData
	last     int64
}

// keepApart is called with every record parsed after the tape's header:
// a header starts a segment and is not returned (ok false, as OpenJoined
// returns only the first header); a "stats" event is held back for the
// end (ok false; see endStats), unless WithFileOrder; any other record is
// renamed by the current segment's apart.
func (r *Reader) keepApart(rec *Record) (ok bool) {
	switch {
	case rec.Type == TypeHeader:
		r.startSegment(rec.Header)
		return false
	case rec.Type == TypeEvent && rec.Event == EventStats && !r.o.fileOrder:
		sg := &r.segs
		sg.statsN++
		sg.statsRec, sg.statsAt = rec, max(sg.statsAt, rec.Time)
		addStats(&sg.stats, rec)
		return false
	}
	r.segs.apply(rec)
	return true
}

// apply renames rec by the current segment's apart, noting its time.
func (sg *segments) apply(rec *Record) {
	sg.last = max(sg.last, rec.Time)
	sg.cur.apply(rec)
}

// heldStats reports whether endStats has a record to return.
func (sg *segments) heldStats() bool {
	return (sg.statsN == 1 && sg.series == nil) || (sg.statsN > 0 && sg.stats != nil)
}

// endStats returns the "stats" event held back, once, at the tape's end:
// the recorded one as it is when the file holds one tape; otherwise the
// sum of the tapes' (a malformed one left out), marked as a joined read's
// and timed as OpenJoined times it (the newest record), since the file is
// read as their joined read; nil when there is none (left).
func (sg *segments) endStats() *Record {
	if !sg.heldStats() {
		return nil
	}
	rec := sg.statsRec
	if sg.statsN > 1 || sg.series != nil {
		t := sg.last
		if t == 0 {
			t = sg.statsAt
		}
		rec = statsEvent(sg.stats, t)
	}
	sg.statsN, sg.statsRec, sg.stats = 0, nil, nil
	return rec
}

// end is what the Reader returns once the tape is read: the "stats"
// event held back (endStats), then io.EOF.
func (r *Reader) end() (*Record, error) {
	if rec := r.segs.endStats(); rec != nil {
		return rec, nil
	}
	return nil, io.EOF
}

// startSegment begins the segment of the tape whose header h was read in
// the middle of the stream.
func (r *Reader) startSegment(h *Header) {
	sg := &r.segs
	sg.begun = r.reorder != nil
	if sg.series == nil {
		sg.n, sg.series = 1, map[string]apart{}
		if s := r.hdr.Segment; s != nil {
			sg.series[s.Series] = apart{}
		}
	}
	if s := h.Segment; s != nil {
		if a, ok := sg.series[s.Series]; ok {
			sg.cur = a
			return
		}
	}
	sg.n++
	sg.cur = apart{label: "r" + strconv.Itoa(sg.n), off: uint64(sg.n) << segmentShift}
	if s := h.Segment; s != nil {
		sg.series[s.Series] = sg.cur
	}
	// A tape written before time_ordered existed is put in time order
	// from here on, as it would be read alone (with nothing held yet).
	if !h.TimeOrdered && r.reorder == nil && !r.o.fileOrder {
		r.reorder = new(TimeOrder[*Record])
	}
}
