package tape

// Segments: a tape that holds several. zstd frames concatenate, so
// `cat a.jsonl.zst b.jsonl.zst > c.jsonl.zst` is a valid stream whose
// second tape begins with a header line in the middle. The Reader reads
// such a file as the joined read of its tapes (OpenJoined) keeps
// recordings apart, with the same apart: each tape after the first
// starts a segment whose session ids and exchange numbers are renamed, so
// that ids restarting in the second tape are not taken for ids reused in
// one session.

import "strconv"

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
}

// keepApart is called with every record parsed after the tape's header:
// a header starts a segment and is not returned (ok false, as OpenJoined
// returns only the first header); any other record is renamed by the
// current segment's apart.
func (r *Reader) keepApart(rec *Record) (ok bool) {
	if rec.Type != TypeHeader {
		r.segs.cur.apply(rec)
		return true
	}
	r.startSegment(rec.Header)
	return false
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
