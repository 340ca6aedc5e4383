package tape

import "sort"

// Time order, written: the Writer guarantees that the records of a tape
// it writes come in non-decreasing time (records with a time; a record
// written with Time 0 has none and stays where it was written), and says
// so in the header (Header.TimeOrdered). Readers then read the file in
// order, with no reordering stage.
//
// Why it is needed: a recorder stamps a record when its bytes cross the
// proxy and hands it to Write afterwards, from the goroutine of its
// connection or exchange; between the two, another goroutine may write a
// record stamped later. On a recording of 16 concurrent Streamable HTTP
// sessions (mcptape load through mcptape record, 68,000 records, on a
// loaded two-core machine) 1.2 % of the records came after a newer one,
// by 0.12 ms at the median, 48 ms at the 99th percentile and 63 ms at
// most. The stdio recorder's two pumps can do it too, by less.
//
// How: the Writer keeps the batch it is filling sorted. A record is
// encoded at the end of the batch; when it is older than the batch's
// newest, its line is moved to its place (after every line of the same or
// an earlier time), which costs a search and a move of the lines after it,
// rare and short. When the batch is cut (every flush interval, or at
// FlushBytes), the records stamped within the last flush interval stay
// for the next batch, so that a record stamped up to a flush interval
// before it is written still finds its place; they go out with the next
// cut whatever their time, so a record reaches the file within two flush
// intervals (Flush and Close write everything at once). Once a batch is
// cut it cannot change: a record older than the newest record already cut
// (written later than that after its stamp) is written with that newest
// time instead of its own, so that its place in the file and its time
// agree; such records are counted (Stats.Late, the largest shift in
// Stats.LateMax).

// lineAt is one line of the batch being filled: its time (0 for a record
// without one: it takes the time of the line before it), where it begins
// in Writer.cur, and whether it was held back at a cut already.
type lineAt struct {
	time int64
	off  int
	held bool
}

// orderTime returns the time to write r with: its own, or floor for a
// record older than what was already cut (counted). w.mu is held.
func (w *Writer) orderTime(t int64) int64 {
	if t == 0 || t >= w.floor || w.o.callOrder {
		return t
	}
	w.st.Late++
	w.st.LateMax = max(w.st.LateMax, w.floor-t)
	return w.floor
}

// placeLocked moves the line just appended at cur[off:] to its place in
// time order among the lines of the batch, and notes it. w.mu is held.
func (w *Writer) placeLocked(t int64, off int) {
	n := len(w.lines)
	if w.o.callOrder {
		w.lines = append(w.lines, lineAt{time: t, off: off})
		return
	}
	if t == 0 {
		if n > 0 {
			t = w.lines[n-1].time
		}
		w.lines = append(w.lines, lineAt{time: t, off: off})
		return
	}
	if n == 0 || t >= w.lines[n-1].time {
		w.lines = append(w.lines, lineAt{time: t, off: off})
		return
	}
	i := sort.Search(n, func(i int) bool { return w.lines[i].time > t })
	at := w.lines[i].off
	size := len(w.cur) - off
	w.tmp = append(w.tmp[:0], w.cur[off:]...)
	copy(w.cur[at+size:], w.cur[at:off])
	copy(w.cur[at:], w.tmp)
	if cap(w.tmp) > 64<<10 {
		w.tmp = nil
	}
	w.lines = append(w.lines, lineAt{})
	copy(w.lines[i+1:], w.lines[i:n])
	w.lines[i] = lineAt{time: t, off: at}
	for j := i + 1; j <= n; j++ {
		w.lines[j].off += size
	}
	w.st.Reordered++
}

// holdBackLocked returns how many of the batch's last lines to keep for
// the next batch at a cut: those stamped within the last flush interval,
// unless they were kept once already or they would fill half a batch.
// w.mu is held.
func (w *Writer) holdBackLocked() int {
	if w.o.callOrder {
		return 0
	}
	cutoff := w.o.now().UnixNano() - int64(w.o.flushInterval)
	n := len(w.lines)
	out := sort.Search(n, func(i int) bool { return w.lines[i].time > cutoff })
	for i := n - 1; i >= out; i-- {
		if w.lines[i].held {
			out = i + 1
			break
		}
	}
	if out < n && len(w.cur)-w.lines[out].off > w.o.flushBytes/2 {
		return 0
	}
	return n - out
}

// cutOrderLocked notes that the first n lines of the batch are cut: their
// newest time is the floor of every later record; the others are kept,
// held. It returns the time of the first line cut (0 when none has one).
// w.mu is held.
func (w *Writer) cutOrderLocked(n int) int64 {
	first := int64(0)
	for _, l := range w.lines[:n] {
		if l.time != 0 {
			first = l.time
			break
		}
	}
	if !w.o.callOrder {
		w.floor = max(w.floor, w.lines[n-1].time)
	}
	k := copy(w.lines, w.lines[n:])
	if k > 0 {
		base := w.lines[0].off
		for i := range w.lines[:k] {
			w.lines[i].off -= base
			w.lines[i].held = true
		}
	}
	w.lines = w.lines[:k]
	return first
}

// newestLocked returns the newest record time written so far. w.mu is held.
func (w *Writer) newestLocked() int64 {
	if n := len(w.lines); n > 0 {
		return max(w.floor, w.lines[n-1].time)
	}
	return w.floor
}

// continueFrom makes w's records come after prev's in time (a Rotator's
// next tape): prev's newest record time is w's floor.
func (w *Writer) continueFrom(prev *Writer) {
	prev.mu.Lock()
	t := prev.newestLocked()
	prev.mu.Unlock()
	w.mu.Lock()
	w.floor = max(w.floor, t)
	w.mu.Unlock()
}
