package tape

import (
	"sort"
	"time"
)

// Records of a tape are in time order only within a window: the HTTP
// recorder stamps a message when it arrives and writes it from the
// goroutine of its exchange, so a response can be written a moment before
// the request that caused it; the stdio recorder writes in time order. A
// reader that needs time order (analysis, replay) holds records in a
// TimeOrder and takes them out once it is Ready: this is the one place
// that decides how far records may be out of order.

// Reordering bounds: a record is held until a record ReorderWindow newer
// has been read, or ReorderMax records are held, or the tape ends.
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
