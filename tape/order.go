package tape

import (
	"io"
	"sort"
	"time"
)

// Time order, read: a tape whose header says TimeOrdered (every tape the
// Writer writes, see writer_order.go) is read in file order, which is time
// order. A tape without it was written before the Writer kept time order:
// its records are in time order only within a window (the HTTP recorder
// stamped a message when it arrived and wrote it from the goroutine of its
// exchange, so a response could be written a moment before the request
// that caused it). For such a tape the Reader itself puts the records in
// time order (nextReordered): it holds the records it has read in a
// TimeOrder and returns the oldest once no record read later can be older
// than it. This is the one place that reorders records; analysis, replay,
// mock and the other readers take them as the Reader gives them.

// Reordering bounds, for tapes without Header.TimeOrdered: a record is
// held until a record ReorderWindow newer has been read, or ReorderMax
// records are held, or the tape ends.
const (
	ReorderWindow = int64(time.Second)
	ReorderMax    = 4096
)

// TimeOrder holds values sorted by their record time, values of equal
// times in the order pushed. Values almost always come in time order:
// they are appended in O(1); a late one is inserted at its place. The zero
// value is an empty queue.
type TimeOrder[T any] struct {
	q    []timed[T]
	head int
}

type timed[T any] struct {
	time int64
	v    T
}

// Len returns how many values are held.
func (o *TimeOrder[T]) Len() int { return len(o.q) - o.head }

// Push adds v, whose record time is t.
func (o *TimeOrder[T]) Push(t int64, v T) {
	n := len(o.q)
	if n == o.head || t >= o.q[n-1].time {
		o.q = append(o.q, timed[T]{t, v})
		return
	}
	live := o.q[o.head:]
	i := o.head + sort.Search(len(live), func(i int) bool { return live[i].time > t })
	o.q = append(o.q, timed[T]{})
	copy(o.q[i+1:], o.q[i:])
	o.q[i] = timed[T]{t, v}
}

// Ready reports whether the oldest value may be taken out: no record read
// later can be older than it (one ReorderWindow newer was pushed, or
// ReorderMax are held), or ended (the tape or the session ended) and
// values are held.
func (o *TimeOrder[T]) Ready(ended bool) bool {
	n := o.Len()
	return n > 0 && (ended || n >= ReorderMax || o.q[len(o.q)-1].time-o.q[o.head].time > ReorderWindow)
}

// Peek returns the k-th value from the oldest, or nil.
func (o *TimeOrder[T]) Peek(k int) *T {
	if k < 0 || o.head+k >= len(o.q) {
		return nil
	}
	return &o.q[o.head+k].v
}

// Pop takes the oldest value out. The queue must not be empty.
func (o *TimeOrder[T]) Pop() T {
	v := o.q[o.head].v
	o.q[o.head] = timed[T]{}
	o.head++
	if o.head == len(o.q) {
		o.q, o.head = o.q[:0], 0
	} else if o.head >= 1024 && o.head*2 >= len(o.q) {
		n := copy(o.q, o.q[o.head:])
		clear(o.q[n:])
		o.q, o.head = o.q[:n], 0
	}
	return v
}

// nextReordered returns the next record of a tape without TimeOrdered, in
// time order, records of equal times in file order; io.EOF once every
// record read was returned. The segments of a tape joined with cat are put
// in order each on its own, one after the other.
func (r *Reader) nextReordered() (*Record, error) {
	sg := &r.segs
	for !r.reorder.Ready(r.drained || sg.first != nil) {
		if r.drained {
			rec, err := r.end()
			if err == nil {
				r.n++
			}
			return rec, err
		}
		if sg.first != nil { // the last segment's records are all out
			r.reorder.Push(sg.first.Time, sg.first)
			sg.first = nil
			continue
		}
		rec, err := r.next()
		switch {
		case err == io.EOF:
			r.drained = true
		case err != nil:
			return nil, err
		case sg.begun: // a segment is read after the records of the last
			sg.begun, sg.first = false, rec
		default:
			r.reorder.Push(rec.Time, rec)
		}
	}
	r.n++
	return r.reorder.Pop(), nil
}
