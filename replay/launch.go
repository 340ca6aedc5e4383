package replay

import (
	"context"
	"fmt"
	"time"
)

// launchGrace is how long, at most, a message about a request sent on its
// own goroutine (a cancel naming it, the closing of its stream) waits
// after the request's POST was written for the POST's answer headers, the
// proof that the server holds the request. The write alone does not prove
// it: the message goes on another connection, and the server, or a proxy
// between (mcptape record), reads each connection on its own goroutine,
// so a cancel sent the moment the call was written could still be read
// first. Most servers answer with headers at once; this bounds the wait
// for those that hold them back until the answer is ready. loadgen's
// cancelLandGrace is the same figure.
const launchGrace = 20 * time.Millisecond

// launch follows the Send of a frame of requests sent on its own
// goroutine (sendAsync), for what refers to them later not to overtake
// it.
type launch struct {
	written chan struct{} // closed once the frame is written on its connection
	wroteAt time.Time     // when; set before written is closed
	done    chan struct{} // closed when Send returned
}

func newLaunch() *launch {
	return &launch{written: make(chan struct{}), done: make(chan struct{})}
}

// wrote is the frame's transport.SendOptions.Written: called at most once,
// on the goroutine writing the frame.
func (l *launch) wrote() {
	l.wroteAt = time.Now()
	close(l.written)
}

// awaitLaunched waits until the request with recorded id key, if it was
// sent on its own goroutine, is known to have reached the server: until
// its Send returned (the answer's headers came, or it failed), or its POST
// was written and launchGrace has passed since. A POST slow to leave (a
// connection to dial, a loaded machine) is waited for up to the timeout
// (then a note says so): the request would be missing by then anyway.
func (r *runner) awaitLaunched(ctx context.Context, key string) {
	r.mu.Lock()
	l := r.launched[key]
	r.mu.Unlock()
	if l == nil {
		return
	}
	limit := time.NewTimer(r.o.timeout)
	defer limit.Stop()
	select {
	case <-l.done:
		return
	case <-l.written:
	case <-limit.C:
		r.mu.Lock()
		r.addNote(fmt.Sprintf("the POST of %s was not written within %v: the message naming it went anyway", r.requestDesc(key), r.o.timeout))
		r.mu.Unlock()
		return
	case <-ctx.Done():
		return
	}
	grace := time.NewTimer(time.Until(l.wroteAt.Add(launchGrace)))
	defer grace.Stop()
	select {
	case <-l.done:
	case <-grace.C:
	case <-ctx.Done():
	}
}
