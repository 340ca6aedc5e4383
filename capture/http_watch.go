package capture

// The watch of a lean client connection for a disconnect while its
// exchange waits for the upstream or streams (http_lean.go), and the
// timing of its wait for the next request.

import (
	"context"
	"errors"
	"os"
	"time"
)

// arm lets the client connection be watched for a disconnect while the
// exchange waits for the upstream or streams (nothing else reads from the
// client then): at once, or once the exchange has lasted watchDelay (the
// server's watch ticker starts it). A client that goes away cancels the
// exchange and closes its upstream connection.
func (lc *leanConn) arm(now bool) {
	lc.mu.Lock()
	lc.armed = true
	lc.mu.Unlock()
	if now {
		lc.startWatch()
		return
	}
	lc.busy.Store(time.Now().UnixNano())
}

// startWatch starts the watch unless the exchange ended or it runs.
func (lc *leanConn) startWatch() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
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
// ticker cut the one that ran: its read deadline is then in the past.
// (lc.readBy is -1 once cut, 0 when no wait runs.)
func (lc *leanConn) setReadBy(at int64) (cut bool) {
	lc.mu.Lock()
	cut = lc.readBy < 0
	lc.readBy = at
	lc.mu.Unlock()
	return cut
}

// expireWait cuts the wait for a request if it has run past its time
// (now, by the server's clock): the read it is blocked in fails with
// os.ErrDeadlineExceeded, as a read deadline would have it.
func (lc *leanConn) expireWait(now int64) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.readBy > 0 && lc.readBy <= now {
		lc.readBy = -1
		lc.c.SetReadDeadline(aLongTimeAgo)
	}
}
