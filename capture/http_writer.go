package capture

import (
	"net/http"
	"sync"
	"time"
)

// headerDelay is how long response headers that came alone wait for the
// first body bytes before they are flushed by themselves. Headers and the
// first event then usually leave in one write (one syscall and one read on
// the client instead of two each); a stream that stays silent gets its
// headers this much later. Events are never held back.
const headerDelay = time.Millisecond

// exchangeWriter forwards the response to the client, then hands a copy of
// each chunk, once written (and, for a streaming response, flushed), to
// the recorder. A streaming response is an event stream or a body of
// unknown length; others (a JSON body with its length) are left to
// net/http's buffering and recorded whole at their end anyway.
//
// The ReverseProxy flushes the headers at once from a timer goroutine of
// its own; the first such flush is deferred by headerDelay (see there).
// mu serialises the deferred flush with the handler's writes.
type exchangeWriter struct {
	rw http.ResponseWriter
	rc *http.ResponseController
	x  *exchange

	mu    sync.Mutex
	wrote bool        // body bytes were written
	timer *time.Timer // the deferred header flush
	done  bool        // the handler returned: rw must not be touched
}

func (w *exchangeWriter) Header() http.Header { return w.rw.Header() }

func (w *exchangeWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rw.WriteHeader(code)
}

func (w *exchangeWriter) Write(b []byte) (int, error) {
	at := w.x.p.o.now() // before the client can have the bytes
	w.mu.Lock()
	w.wrote = true
	n, err := w.rw.Write(b)
	if err == nil && w.x.streaming {
		err = w.rc.Flush()
	}
	w.mu.Unlock()
	w.x.forwardedAt(b[:n], err, at)
	return n, err
}

// forwardedAt is forwarded for bytes that began to go out at at.
func (x *exchange) forwardedAt(b []byte, err error, at time.Time) {
	if len(b) > 0 {
		x.lastOut = at
		if x.decoder == nil { // else the decoder's goroutine records them, later
			x.sentAt = at
			defer func() { x.sentAt = time.Time{} }()
		}
	}
	x.forwarded(b, err)
}

// forwarded hands response bytes that reached the client (b) to the
// recorder, and notes a failed write to the client (err).
func (x *exchange) forwarded(b []byte, err error) {
	if err != nil && x.writeErr == nil {
		x.writeErr = err
	}
	if len(b) > 0 && x.failErr == nil && x.sinkOn {
		x.bodySize += int64(len(b))
		if x.sink != nil {
			x.sink(b)
		} else {
			x.plainBody(b)
		}
	}
}

// FlushError flushes the response to the client; before any body bytes,
// the flush is deferred by headerDelay.
func (w *exchangeWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wrote || w.done {
		return nil // Write flushed already
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(headerDelay, w.flushHeaders)
	}
	return nil
}

// flushHeaders flushes headers still waiting for a body.
func (w *exchangeWriter) flushHeaders() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wrote && !w.done {
		w.rc.Flush()
	}
}

// close stops the deferred flush; the handler is returning.
func (w *exchangeWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// Unwrap gives http.ResponseController the client's writer (hijacking for
// protocol upgrades, deadlines).
func (w *exchangeWriter) Unwrap() http.ResponseWriter { return w.rw }
