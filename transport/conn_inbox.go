package transport

import (
	"context"
	"sync"
)

// streamQueueLimit is how many received frames may wait for Recv before the
// goroutines that read streams wait for room.
const streamQueueLimit = 1024

// inbox is the queue between the readers of a connection's streams and
// Recv. Frames keep their arrival order. put never waits (it is used by
// Send for JSON bodies); putWait waits while the queue holds limit frames
// (it is used by stream readers, so that a caller that stops calling Recv
// stops the streams instead of growing memory without bound).
type inbox struct {
	mu      sync.Mutex
	q       []Incoming
	head    int
	limit   int
	room    chan struct{} // closed when room frees up; nil when nobody waits
	end     error         // no more frames: returned once q is drained
	stopped bool          // shut: Recv fails at once

	ready chan struct{} // capacity 1: something changed
	stop  chan struct{} // closed by shut
}

func newInbox(limit int) *inbox {
	return &inbox{limit: limit, ready: make(chan struct{}, 1), stop: make(chan struct{})}
}

// signal wakes one waiting receiver, if any.
func (b *inbox) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// appendLocked adds in to the queue, compacting it first when its front is
// consumed and it is full.
func (b *inbox) appendLocked(in Incoming) {
	if b.head > 0 && len(b.q) == cap(b.q) {
		n := copy(b.q, b.q[b.head:])
		clear(b.q[n:])
		b.q = b.q[:n]
		b.head = 0
	}
	b.q = append(b.q, in)
}

// put queues in without waiting. It reports false when the inbox no longer
// accepts frames.
func (b *inbox) put(in Incoming) bool {
	b.mu.Lock()
	if b.stopped || b.end != nil {
		b.mu.Unlock()
		return false
	}
	b.appendLocked(in)
	b.mu.Unlock()
	b.signal()
	return true
}

// putWait queues in, waiting while the queue is full. It fails with
// ErrClosed after shut, or with ctx's cause.
func (b *inbox) putWait(ctx context.Context, in Incoming) error {
	for {
		b.mu.Lock()
		if b.stopped || b.end != nil {
			b.mu.Unlock()
			return ErrClosed
		}
		if len(b.q)-b.head < b.limit {
			b.appendLocked(in)
			b.mu.Unlock()
			b.signal()
			return nil
		}
		if b.room == nil {
			b.room = make(chan struct{})
		}
		room := b.room
		b.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-b.stop:
			return ErrClosed
		}
	}
}

// get returns the next frame, waiting for one. After finish it returns the
// frames still queued, then the end error; after shut it returns ErrClosed
// at once.
func (b *inbox) get(ctx context.Context) (Incoming, error) {
	for {
		b.mu.Lock()
		if b.stopped {
			b.mu.Unlock()
			return Incoming{}, ErrClosed
		}
		if b.head < len(b.q) {
			in := b.q[b.head]
			b.q[b.head] = Incoming{}
			b.head++
			if b.head == len(b.q) {
				b.q, b.head = b.q[:0], 0
			}
			more := b.head < len(b.q)
			if b.room != nil && len(b.q)-b.head < b.limit {
				close(b.room)
				b.room = nil
			}
			b.mu.Unlock()
			if more {
				b.signal() // another receiver may be waiting
			}
			return in, nil
		}
		if b.end != nil {
			err := b.end
			b.mu.Unlock()
			b.signal()
			return Incoming{}, err
		}
		if err := ctx.Err(); err != nil {
			// nothing queued and ctx ended: no wait (a caller taking
			// what is queued with an ended context pays no select)
			b.mu.Unlock()
			return Incoming{}, err
		}
		b.mu.Unlock()
		select {
		case <-b.ready:
		case <-ctx.Done():
			return Incoming{}, ctx.Err()
		case <-b.stop:
			return Incoming{}, ErrClosed
		}
	}
}

// finish records that no more frames will come; get returns err once the
// queued frames are taken. Only the first call counts.
func (b *inbox) finish(err error) {
	b.mu.Lock()
	if b.end == nil {
		b.end = err
	}
	b.mu.Unlock()
	b.signal()
}

// shut makes every get and putWait fail with ErrClosed at once and drops
// the queued frames. It is idempotent.
func (b *inbox) shut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.stopped = true
	b.q, b.head = nil, 0
	close(b.stop)
}
