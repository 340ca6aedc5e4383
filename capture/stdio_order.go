package capture

import (
	"sync"
	"sync/atomic"
	"time"
)

// Ordering the two directions in the tape.
//
// The c2s and s2c pumps each forward a chunk first and record its frames
// afterwards, on their own goroutines. Without coordination the s2c pump
// could record a response before the c2s pump has recorded the request that
// caused it (it was forwarded, answered and read back while the c2s pump
// was still on its way to the tape), and likewise for a server's request
// answered by the client. Each pump therefore keeps a progress (below) that
// the other one reads:
//
//  1. A pump reads a chunk, stamps it (every record framed from it carries
//     that time) and notes the other pump's forwarded count as the chunk's
//     target; then it bumps its own forwarded count, forwards the chunk,
//     frames it, and bumps its recorded count once every frame of the chunk
//     was handed to the tape. Each direction is one goroutine handing
//     frames to the tape in stream order, so the tape keeps frame order
//     within a direction.
//  2. Before handing the first frame of a chunk to the tape, a pump waits
//     until the other pump's recorded count reaches the target. A chunk
//     that completes no frame (the middle of a 64 MiB line) waits for
//     nothing, and nothing ever waits for the other direction's unfinished
//     line.
//
// Why this puts cause before effect: a peer can only answer bytes it has
// received, so the bump for the chunk that completed the request (made
// before forwarding it) precedes the read of the answer, and the target
// noted after that read covers it. (A peer that parses incrementally and
// answers a message before its newline arrives, when the newline comes in
// a later chunk, can still be recorded answered first: a frame only exists
// once its newline is read.)
//
// Why it cannot deadlock:
//   - The waits are not circular. Say A waits, for its chunk a, until B
//     records chunk b. A noted b after B bumped b, and B noted its own
//     target before that bump, so before A bumped a: B's target is at most
//     a-1, which A recorded before reading chunk a. So B never waits for A
//     while A waits for B.
//   - The pump waited for may be blocked in the tape's Write (queue full).
//     That waits only for the tape's flusher and the disk, never for a
//     pump, and the waiting pump would block in its own Write anyway: the
//     tape's back-pressure, not a cycle.
//   - The pump waited for may be blocked forwarding: its reader is not
//     reading, perhaps because it waits for us (a server that stops reading
//     stdin while its stdout is full; a client that finishes writing before
//     it reads). Into a pollable pipe (the child's stdin; the client's
//     stdout when it is a pipe, see stdio_rawio.go) a pump writes itself
//     (pump.forwardRaw): before waiting for room it records what it wrote
//     so far and says it is parked, which ends the wait exactly. Into any
//     other io.Writer there is no such signal, so the wait gives way once
//     that write has lasted orderWriteWait: a blocked write costs one such
//     delay, after which the answers it may cause can be recorded out of
//     order.
//   - Whatever else happens, a wait ends after orderMaxWait (a tape stalled
//     that long: our own Write then waits as long anyway).
//
// Forwarding is never delayed by the wait: a chunk is forwarded before its
// frames are recorded, and the next chunk is read once they are, as
// without ordering. Waits that gave way are counted and reported (Debugf).
const (
	orderWriteWait = 250 * time.Millisecond
	orderMaxWait   = time.Second
)

// progress is how far one pump has come, for the other pump to wait on.
// Counts are chunk sequence numbers starting at 1.
type progress struct {
	fwd   atomic.Int64 // last chunk whose forwarding began
	rec   atomic.Int64 // last chunk whose frames were all handed to the tape
	since atomic.Int64 // when the forward write in progress began (Unix ns); 0 when none is
	// parked is set while the forward write waits for its reader with
	// every byte it wrote so far recorded (see pump.forwardRaw).
	parked atomic.Bool

	mu      sync.Mutex
	changed chan struct{} // closed at the next recorded; nil when nobody waits
}

// forwarding marks the start of forwarding the next chunk, read at now
// (Unix ns), and returns its sequence number. since is set first, so that a
// waiter that sees the new count also sees the write in progress.
func (g *progress) forwarding(now int64) int64 {
	g.since.Store(now)
	return g.fwd.Add(1)
}

// forwarded marks the end of the forward write (or a pause in it, while
// what it wrote so far is recorded).
func (g *progress) forwarded() { g.since.Store(0) }

// park says that the forward write waits for its reader and that every
// byte it wrote so far was recorded; unpark, that it goes on writing.
func (g *progress) park() {
	g.parked.Store(true)
	g.wake()
}

func (g *progress) unpark(now int64) {
	g.since.Store(now)
	g.parked.Store(false)
}

// recorded marks chunk seq as recorded and wakes the waiter, if any.
func (g *progress) recorded(seq int64) {
	g.rec.Store(seq)
	g.wake()
}

// wake wakes the waiter, if any.
func (g *progress) wake() {
	g.mu.Lock()
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
	g.mu.Unlock()
}

// waitRecorded waits until chunk target is recorded, within the bounds
// described above. It reports whether the target was reached.
func (g *progress) waitRecorded(target int64) bool {
	if g.rec.Load() >= target {
		return true
	}
	limit := time.Now().Add(orderMaxWait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		g.mu.Lock()
		// Parked on the target chunk: all it forwarded is recorded, the
		// rest has not reached the peer.
		if g.rec.Load() >= target || (g.parked.Load() && g.fwd.Load() == target) {
			g.mu.Unlock()
			return true
		}
		deadline := limit
		if s := g.since.Load(); s != 0 && g.fwd.Load() == target {
			if d := time.Unix(0, s).Add(orderWriteWait); d.Before(deadline) {
				deadline = d
			}
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			g.mu.Unlock()
			return false
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		ch := g.changed
		g.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ch:
		case <-timer.C:
		}
	}
}
