package transport

import (
	"sync"
	"time"
)

// LandGrace is how long, at most, a message about a request sent on its
// own goroutine (a notifications/cancelled naming it, the closing of its
// stream) waits, once the request is written, for its answer's headers:
// the proof that the server holds the request. The write alone does not
// prove it over HTTP: the message goes on another connection, and the
// server, or a proxy between (mcptape record), reads each connection on
// its own goroutine, so a cancel sent the moment the call was written
// could still be read first. Most servers answer with headers at once;
// this bounds the wait for those that hold them back until the answer is
// ready.
const LandGrace = 20 * time.Millisecond

// A Landing follows a frame sent on its own goroutine, for what refers
// to it later not to overtake it: the frame has landed once its Send
// returned (the answer's headers came, or it failed), or LandGrace after
// it was written on its connection. Pass Wrote as the Send's
// SendOptions.Written and call Sent, once, when the Send returns.
type Landing struct {
	written  chan struct{}
	landed   chan struct{}
	returned chan struct{}
	land     func() // closes landed, once
}

// NewLanding returns a Landing for a frame about to be sent.
func NewLanding() *Landing {
	l := &Landing{written: make(chan struct{}), landed: make(chan struct{}), returned: make(chan struct{})}
	l.land = sync.OnceFunc(func() { close(l.landed) })
	return l
}

// Wrote is the frame's SendOptions.Written: it is written; it lands
// LandGrace later at the latest.
func (l *Landing) Wrote() {
	close(l.written)
	time.AfterFunc(LandGrace, l.land)
}

// Sent notes that the frame's Send returned: it has landed. It is called
// once.
func (l *Landing) Sent() {
	close(l.returned)
	l.land()
}

// Written is closed once the frame is written on its connection.
func (l *Landing) Written() <-chan struct{} { return l.written }

// Landed is closed once the frame has landed.
func (l *Landing) Landed() <-chan struct{} { return l.landed }

// Returned is closed once the frame's Send returned (Sent): over HTTP,
// once its answer's headers came or it failed. Something that needs the
// answer's stream itself, not only the frame landed, waits for it.
func (l *Landing) Returned() <-chan struct{} { return l.returned }
