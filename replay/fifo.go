package replay

// fifo is a first-in first-out queue over one slice, which it reuses: the
// taken head is cleared (for the garbage collector) and the rest moved to
// the front once it is at least half of the slice.
type fifo[T any] struct {
	q    []T
	head int
}

func (f *fifo[T]) len() int { return len(f.q) - f.head }

func (f *fifo[T]) push(v T) { f.q = append(f.q, v) }

// peek returns the i-th item from the head.
func (f *fifo[T]) peek(i int) *T { return &f.q[f.head+i] }

// pop takes the head out; the queue must not be empty.
func (f *fifo[T]) pop() T {
	var zero T
	v := f.q[f.head]
	f.q[f.head] = zero
	f.head++
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	} else if f.head >= 1024 && 2*f.head >= len(f.q) {
		n := copy(f.q, f.q[f.head:])
		clear(f.q[n:])
		f.q, f.head = f.q[:n], 0
	}
	return v
}
