package capture

import (
	"io"
	"time"
)

// Streaming responses on the lean path (leanConn.copyResponse): the wait
// of a head for the first event, and when the chunks reach the recorder.
//
// Recording a streaming response waits while more of it is already there. A chunk of an event stream goes to the client as soon
// as it is read; handing it to the recorder (parsing its events, encoding
// the records, and for the first one the "response" event with both
// header sets) takes longer than the server needs to send the next bytes.
// Done at once, it delayed them: most of all the end of a POST's stream,
// whose last event and terminating chunk come in two writes, so that the
// client, which cannot send its next request before that end, waited for
// the recorder. The chunks are therefore kept (keptChunks) and handed
// over when a read of the upstream connection would wait
// (rawio.Conn.SetIdle), when the response ends or fails, or when
// maxKept bytes are kept: what waits goes out first, nothing waits for a
// silent upstream, and each event keeps the time its chunk went out. (A
// compressed stream is not kept: its decoder's goroutine records it.)

// maxKept bounds the bytes of a streaming response kept from the recorder.
const maxKept = 64 << 10

// idleHook is what an upstream connection that can run a function before
// its reads wait offers (rawio.Conn).
type idleHook interface{ SetIdle(f func()) }

// keptChunks are the chunks of a streaming response that reached the
// client and not the recorder yet, each with when it went out.
type keptChunks struct {
	x    *exchange // whose chunks they are
	buf  []byte
	ends []int
	at   []time.Time
}

// add keeps b, which went out at at.
func (k *keptChunks) add(b []byte, at time.Time) {
	k.buf = append(k.buf, b...)
	k.ends = append(k.ends, len(k.buf))
	k.at = append(k.at, at)
}

// hand gives the exchange's held "response" event and the kept chunks to
// its recorder, in order, and empties k.
func (k *keptChunks) hand() {
	x := k.x
	if x == nil {
		return
	}
	x.releaseResponse()
	if len(k.ends) == 0 {
		return
	}
	start := 0
	for i, end := range k.ends {
		x.forwardedAt(k.buf[start:end], nil, k.at[i])
		start = end
	}
	if cap(k.buf) > 2*maxKept {
		k.buf = nil
	}
	k.buf, k.ends, k.at = k.buf[:0], k.ends[:0], k.at[:0]
}

// waitFirstBytes holds the head of a streaming response up to headerDelay
// for the first body bytes, so that both usually leave in one write; the
// head of a stream that stays silent is flushed alone.
func (lc *leanConn) waitFirstBytes(x *exchange, up *upstreamConn) {
	if up == nil || up.BR.Buffered() > 0 {
		return
	}
	up.NC.SetReadDeadline(time.Now().Add(headerDelay))
	_, err := up.BR.Peek(1)
	up.NC.SetReadDeadline(time.Time{})
	if err != nil {
		x.forwarded(nil, lc.bw.Flush())
	}
}

// holding reports whether body has bytes of its own to return before it
// reads again: a legacy endpoint rewriter that holds some.
func holding(body io.Reader) bool {
	e, ok := body.(*endpointRewriter)
	return ok && (!e.done || len(e.held) > 0 || e.err != nil)
}
