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
// rare and short. Once a batch is cut it cannot change: a record older
// than the newest record already cut (late by more than the time since
// the last cut, up to the flush interval) is written with that newest
// time instead of its own, so that its place in the file and its time
// agree; such records are counted (Stats.Late, the largest shift in
// Stats.LateMax) and are rare.

// lineAt is one line of the batch being filled: its time (0 for a record
// without one: it takes the time of the line before it) and where it
// begins in Writer.cur.
type lineAt struct {
	time int64
	off  int
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
		return
	}
	if t == 0 {
		if n > 0 {
			t = w.lines[n-1].time
		}
		w.lines = append(w.lines, lineAt{t, off})
		return
	}
	if n == 0 || t >= w.lines[n-1].time {
		w.lines = append(w.lines, lineAt{t, off})
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
	w.lines[i] = lineAt{t, at}
	for j := i + 1; j <= n; j++ {
		w.lines[j].off += size
	}
	w.st.Reordered++
}

// cutOrderLocked notes that the batch is cut: its newest time is the
// floor of every later record. w.mu is held.
func (w *Writer) cutOrderLocked() {
	if n := len(w.lines); n > 0 {
		w.floor = max(w.floor, w.lines[n-1].time)
	}
	w.lines = w.lines[:0]
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
