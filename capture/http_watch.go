package capture

// The watch of a lean client connection for a disconnect while its
// exchange waits for the upstream or streams (http_lean.go), the timing
// of its wait for the next request, and the server's watch loop that
// does both.

import (
	"context"
	"errors"
	"math"
	"os"
	"time"
)

// arm lets the client connection be watched for a disconnect while the
// exchange waits for the upstream or streams (nothing else reads from the
// client then): at once, or once the exchange has lasted watchDelay (the
// server's watch loop starts it). A client that goes away cancels the
// exchange and closes its upstream connection.
func (lc *leanConn) arm(now bool) {
	lc.mu.Lock()
	lc.armed = true
	lc.mu.Unlock()
	if now {
		lc.startWatch()
		return
	}
	t := max(lc.srv.clock(), 1)
	lc.busy.Store(t)
	lc.srv.need(t + int64(watchDelay))
}

// startWatch starts the watch unless the exchange ended or it runs.
func (lc *leanConn) startWatch() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.startWatchLocked()
}

// startWatchLocked is startWatch; lc.mu is held.
func (lc *leanConn) startWatchLocked() {
	if !lc.armed || lc.watchC != nil {
		return
	}
	lc.watchC = make(chan struct{})
	go lc.watch(lc.watchC)
}

// watch waits for the client's next bytes: a request sent early stays
// buffered; an end or error means the client went away.
func (lc *leanConn) watch(done chan struct{}) {
	defer close(done)
	_, err := lc.br.Peek(1)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		return
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.armed {
		lc.gone = true
		lc.aborted = true
		if lc.up != nil {
			lc.up.Close()
		}
		lc.mu.Unlock()
		lc.cancel(context.Canceled)
		lc.mu.Lock()
	}
}

// disarm ends the watch; the connection's reader is free again.
func (lc *leanConn) disarm() {
	lc.busy.Store(0)
	lc.mu.Lock()
	lc.armed = false
	done := lc.watchC
	lc.watchC = nil
	lc.mu.Unlock()
	if done != nil {
		lc.c.SetReadDeadline(aLongTimeAgo)
		<-done
		lc.c.SetReadDeadline(time.Time{})
	}
}

// clientGone reports whether the watch saw the client go away.
func (lc *leanConn) clientGone() bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.gone
}

// setReadBy starts (at > 0, the server's clock time past which it is cut)
// or ends (0) the wait for a request, and reports whether the watch
// loop cut the one that ran: its read deadline is then in the past.
// (lc.readBy is -1 once cut, 0 when no wait runs.)
func (lc *leanConn) setReadBy(at int64) (cut bool) {
	lc.mu.Lock()
	cut = lc.readBy < 0
	lc.readBy = at
	lc.mu.Unlock()
	if at > 0 {
		lc.srv.need(at)
	}
	return cut
}

// sweep does what is due on the connection at now (the server's clock):
// it starts the watch of an exchange that has lasted watchDelay, and cuts
// a wait for a request that has run past its time (the read it is
// blocked in fails with os.ErrDeadlineExceeded, as a read deadline would
// have it). It returns when something is due next, math.MaxInt64 for
// never; with act false it only tells (something due already: now or
// earlier).
func (lc *leanConn) sweep(now int64, act bool) (next int64) {
	next = math.MaxInt64
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if b := lc.busy.Load(); b != 0 && lc.armed && lc.watchC == nil {
		switch due := b + int64(watchDelay); {
		case due > now:
			next = due
		case act:
			lc.startWatchLocked()
		default:
			next = due
		}
	}
	if lc.readBy > 0 {
		switch {
		case lc.readBy > now:
			next = min(next, lc.readBy)
		case act:
			lc.readBy = -1
			lc.c.SetReadDeadline(aLongTimeAgo)
		default:
			next = min(next, lc.readBy)
		}
	}
	return next
}

// The watch loop starts the watch of the connections whose exchange has
// lasted watchDelay, and cuts the waits for a request that have lasted
// their time (leanIdleTimeout, or the head timeout), by the server's
// clock. It sleeps until the first of those is due, so that an idle proxy,
// idle keep-alive connections included, does not wake (a ticker of
// watchDelay woke it 40 times a second); a connection that needs it
// earlier than it sleeps (an exchange starts waiting, a wait for a
// request starts) wakes it (need). What that costs an exchange is an
// atomic load: while exchanges run, the loop wakes every watchDelay or
// sooner, and their needs come later than that.
//
// need and the loop meet without a lock: need writes the connection's
// state, then reads wakeAt; the loop writes wakeAt, then reads every
// connection's state again. One of them sees the other's write (Go's
// atomics are sequentially consistent, and the state is read under the
// connection's mutex), so no need is missed.

// watchLoop runs the watch loop until stop is closed.
func (s *leanServer) watchLoop(stop <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		next := s.sweepAll(true)
		s.wakeAt.Store(next)
		if s.sweepAll(false) < next {
			continue // a need came during the sweep
		}
		if next < math.MaxInt64 {
			timer.Reset(time.Duration(next - s.clock()))
		}
		select {
		case <-stop:
			timer.Stop()
			return
		case <-timer.C:
		case <-s.wake:
			timer.Stop()
		}
	}
}

// sweepAll sweeps every connection (act: do what is due) and returns when
// something is due next, math.MaxInt64 for never.
func (s *leanServer) sweepAll(act bool) int64 {
	if act && s.p.o.watchHook != nil {
		s.p.o.watchHook()
	}
	now := s.clock()
	next := int64(math.MaxInt64)
	s.mu.Lock()
	for lc := range s.conns {
		next = min(next, lc.sweep(now, act))
	}
	s.mu.Unlock()
	return next
}

// need wakes the watch loop if it sleeps past at (the server's clock),
// when something is due on a connection.
func (s *leanServer) need(at int64) {
	if at < s.wakeAt.Load() {
		select {
		case s.wake <- struct{}{}:
		default: // a wake is pending
		}
	}
}
