package analysis

import "github.com/mcptape/mcptape/tape"

// tapeOrigin returns the zero of a tape's offsets given the header's time
// and the first record's: the header's, unless the header has none or one
// after the first record, that is on another clock than the records (a
// tape written by hand, or by a program giving its records their own
// times while tape.Create stamped the header with the current time): then
// the first record's.
func tapeOrigin(header, first int64) int64 {
	if header == 0 || header > first {
		return first
	}
	return header
}

// tapeClock follows the times of a tape's records for every reader that
// gives offsets or a span (inspect, show, diff, the HTML report, export):
// origin is the zero of the offsets (tapeOrigin), first and last bound
// the records' times. When the header's time came after the first record
// (clockApart), the writer's stats event, stamped on the header's clock,
// does not extend the span.
type tapeClock struct {
	origin      int64
	first, last int64
	hasRecords  bool
	clockApart  bool
}

// newTapeClock returns the clock of a tape whose header has time header
// (0 when the header has none).
func newTapeClock(header int64) tapeClock {
	return tapeClock{origin: header}
}

// add notes the time of a record; the origin is settled by the first.
func (c *tapeClock) add(rec *tape.Record) {
	if !c.hasRecords {
		c.first, c.last, c.hasRecords = rec.Time, rec.Time, true
		c.clockApart = c.origin > rec.Time
		c.origin = tapeOrigin(c.origin, rec.Time)
	}
	if !c.clockApart || rec.Type != tape.TypeEvent || rec.Event != tape.EventStats {
		c.first = min(c.first, rec.Time)
		c.last = max(c.last, rec.Time)
	}
}
