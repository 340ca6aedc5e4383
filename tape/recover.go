package tape

// Recovery from write errors (WithRecovery): a Writer that cannot write a
// frame (a full disk, an I/O error) cuts the partial frame off its file,
// drops the batch and counts its records, and goes on accepting records.
// The first frame it writes again begins with a gap marker, an "error"
// event whose data says how many records are missing and between which
// times, so that the tape stays readable to its end and says where it has
// a hole.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcptape/mcptape/internal/english"
)

// GapData is the payload of the "error" event a recovering Writer writes
// when writing works again after a failure: {"error": "...", "gap": {...}}.
type GapData struct {
	Error string  `json:"error"`
	Gap   GapInfo `json:"gap"`
}

// GapInfo describes a gap in a tape.
type GapInfo struct {
	Lost  int64  `json:"lost"`  // records accepted by Write and not written
	From  int64  `json:"from"`  // when the first write failed, Unix ns
	To    int64  `json:"to"`    // when writing worked again, Unix ns
	Cause string `json:"cause"` // the first write error
}

// Gap is what a recovering Writer reports to its WithRecovery hook: once
// when a write first fails (Resumed false: Cause set, Lost the records of
// that batch) and once when writing works again (Resumed true, Lost the
// total).
type Gap struct {
	Resumed bool
	Lost    int64
	Cause   error
	From    time.Time
}

// WithRecovery makes a Writer made by Create survive write errors: a batch
// that cannot be written is dropped and counted (Stats.Lost), the partial
// frame is cut off the file, Write keeps accepting records, and once a
// frame can be written again it begins with a gap marker (GapData). report
// (which may be nil) hears of each outage when it starts and when it ends;
// it runs on the Writer's goroutine and must not call the Writer. Without
// this option the first write error stops the Writer.
func WithRecovery(report func(Gap)) Option {
	return func(o *options) error {
		if report == nil {
			report = func(Gap) {}
		}
		o.onGap = report
		return nil
	}
}

// gapState is the flusher's view of the file: how long its good part is,
// and the outage being bridged, if any.
type gapState struct {
	good   int64 // bytes of whole frames in the file
	active bool
	lost   int64
	from   time.Time
	cause  error
}

// truncater is what recovery needs of the destination.
type truncater interface {
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
}

// writeRecovering compresses batch (n records) into out and writes it,
// preceded by a gap marker when an outage is being bridged. On a failure
// the file is cut back to its good length and the batch counted lost.
func (w *Writer) writeRecovering(batch []byte, n, first int64, out []byte) ([]byte, bool, error) {
	g := &w.gap
	gapped := false
	if g.active {
		// Cut whatever a failed write left, then lead with the marker.
		if err := w.cutBack(); err != nil {
			return w.failed(n, err, out)
		}
		now := w.o.now()
		line, err := gapLine(now, first, g)
		if err != nil {
			return out, false, err
		}
		out = w.enc.EncodeAll(append(line, batch...), out[:0])
		gapped = true
	} else {
		out = w.enc.EncodeAll(batch, out[:0])
	}
	if _, err := w.dst.Write(out); err != nil {
		w.cutBack() // best effort: retried before the next frame
		return w.failed(n, err, out)
	}
	g.good += int64(len(out))
	if gapped {
		w.o.onGap(Gap{Resumed: true, Lost: g.lost, Cause: g.cause, From: g.from})
		*g = gapState{good: g.good}
	}
	return out, gapped, nil
}

// failed notes a batch of n records lost to err.
func (w *Writer) failed(n int64, err error, out []byte) ([]byte, bool, error) {
	g := &w.gap
	g.lost += n
	if !g.active {
		g.active, g.from, g.cause = true, w.o.now(), err
		w.o.onGap(Gap{Lost: n, Cause: w.wrap(err), From: g.from})
	}
	return out, false, err
}

// cutBack truncates the file to its whole frames and puts the write
// offset there.
func (w *Writer) cutBack() error {
	t, ok := w.dst.(truncater)
	if !ok {
		return errors.New("destination cannot be truncated")
	}
	if err := t.Truncate(w.gap.good); err != nil {
		return err
	}
	_, err := t.Seek(w.gap.good, io.SeekStart)
	return err
}

// gapLine encodes the gap marker for the outage g, ended at now, put
// before a batch whose first record has time first. The marker's record
// time is first (now when 0), not now: written when the batch is, after
// the records of the batch were stamped, the marker keeps the tape in time
// order where it stands, between the records before the outage and those
// after it; GapInfo.To says when the outage ended.
func gapLine(now time.Time, first int64, g *gapState) ([]byte, error) {
	info := GapInfo{Lost: g.lost, From: g.from.UnixNano(), To: now.UnixNano(), Cause: g.cause.Error()}
	data, err := json.Marshal(GapData{
		Error: fmt.Sprintf("tape gap: %s not recorded from %s to %s: %v", english.Count(info.Lost, "record"),
			g.from.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano), g.cause),
		Gap: info,
	})
	if err != nil {
		return nil, err
	}
	t := first
	if t == 0 {
		t = now.UnixNano()
	}
	r := Record{Type: TypeEvent, Time: t, Event: EventError, Data: data}
	return appendRecord(nil, &r, frameJSON, data), nil
}
