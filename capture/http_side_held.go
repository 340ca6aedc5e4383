package capture

import (
	"bytes"
	"hash/maphash"

	"github.com/mcptape/mcptape/tape"
)

// Parts ahead of the owner. A server of the LangGraph dialect sends each
// part of an answer on every open stream, and the proxy reads each stream
// on a goroutine of its own: a stream that does not own the answer may
// carry a part before the owner's copy of it reaches the recorder. Most
// of the time the owner's copy follows and the part was a copy; but when
// the owner's client leaves, the owner's copy may never reach the
// recorder (it was in flight on the owner's upstream connection as the
// proxy closed it). So a part ahead of the owner is not recorded at once
// as a copy in its stream's own session: it is held, with its record (its
// time, exchange and stream), until the owner records the same part (it
// was a copy: written in its stream's session) or the owner ends (the
// stream that holds the most parts takes over: they are written in the
// request's session). A stream's later parts of the answer wait behind
// its held ones, to keep their order; a stream that ends, an answer that
// ends, and the table's bound let what is held go to the streams' own
// sessions. The records, written a moment after their time, find their
// place in the tape (the tape.Writer keeps time order). At most
// partLogSize parts are held per stream and answer: past it, the oldest
// goes to its stream's session, as a copy.

// heldLog holds, per stream other than the owner, the parts of an answer
// it carried ahead of the owner.
type heldLog map[uint64]*heldParts

// heldParts are one stream's parts held, oldest first.
type heldParts struct {
	own   string // the stream's own session
	parts []heldPart
}

// heldPart is one part held: the hash of its bytes (partLog's), its
// record, and whether it ends the answer.
type heldPart struct {
	hash uint64
	rec  tape.Record
	ends bool
}

// has reports whether stream holds parts.
func (h heldLog) has(stream uint64) bool { return h[stream] != nil }

// hold keeps m, a part of x's stream stream with its record rec, whose
// hash is taken with l's seed; past the bound, the stream's oldest part
// goes to out, in its own session.
func (h *heldLog) hold(stream uint64, x *exchange, m []byte, rec *tape.Record, ends bool, l *partLog, out *[]tape.Record) {
	if *h == nil {
		*h = make(heldLog, 1)
	}
	hp := (*h)[stream]
	if hp == nil {
		hp = &heldParts{own: x.session}
		(*h)[stream] = hp
	}
	r := *rec
	r.Frame, r.Exchange = bytes.Clone(m), x.id
	hp.parts = append(hp.parts, heldPart{hash: maphash.Bytes(l.seed, m), rec: r, ends: ends})
	if len(hp.parts) > partLogSize {
		hp.parts[0].rec.Session = hp.own
		*out = append(*out, hp.parts[0].rec)
		hp.parts = append(hp.parts[:0], hp.parts[1:]...)
	}
}

// settle lets go, to their streams' sessions, the held parts that are
// copies of parts l recorded (each stream from its oldest on).
func (h heldLog) settle(l *partLog, out *[]tape.Record) {
	for stream, hp := range h {
		n := 0
		for n < len(hp.parts) && l.copied(stream, hp.parts[n].hash) {
			hp.parts[n].rec.Session = hp.own
			*out = append(*out, hp.parts[n].rec)
			n++
		}
		if hp.parts = hp.parts[n:]; len(hp.parts) == 0 {
			delete(h, stream)
		}
	}
}

// drop lets the parts stream held go to its own session (it ended).
func (h heldLog) drop(stream uint64, out *[]tape.Record) {
	hp := h[stream]
	if hp == nil {
		return
	}
	for _, p := range hp.parts {
		p.rec.Session = hp.own
		*out = append(*out, p.rec)
	}
	delete(h, stream)
}

// flush lets every held part go to its stream's own session.
func (h *heldLog) flush(out *[]tape.Record) {
	for stream := range *h {
		h.drop(stream, out)
	}
	*h = nil
}

// longest returns the stream that holds the most parts (of equal ones,
// the oldest exchange), 0 when none holds any.
func (h heldLog) longest() uint64 {
	var best uint64
	for stream, hp := range h {
		if b := h[best]; best == 0 || len(hp.parts) > len(b.parts) || (len(hp.parts) == len(b.parts) && stream < best) {
			best = stream
		}
	}
	return best
}

// takeOver records the parts stream held in session, the request's, as
// parts l recorded (stream now owns the answer), and reports whether one
// of them ended the answer.
func (h heldLog) takeOver(stream uint64, session string, l *partLog, out *[]tape.Record) bool {
	hp := h[stream]
	delete(h, stream)
	ends := false
	for _, p := range hp.parts {
		l.add(p.rec.Frame)
		p.rec.Session = session
		*out = append(*out, p.rec)
		ends = ends || p.ends
	}
	delete(l.pos, stream)
	return ends
}

// writeHeld writes the held records let go.
func (p *HTTPProxy) writeHeld(out []tape.Record) {
	for i := range out {
		p.write(&out[i])
	}
}
