package capture

// The watch of a lean client connection for a disconnect while its
// exchange waits for the upstream or streams (http_lean.go).

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
			lc.up.c.Close()
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
