// The end of an exchange: how the upstream's body ended, an upstream that
// gave no response, and the exchange's last records.

package capture

import (
	"errors"
	"io"
	"net"

	"github.com/mcptape/mcptape/tape"
)

// upstreamBody notes how the upstream's response body ended.
type upstreamBody struct {
	rc io.ReadCloser
	x  *exchange
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.x.upEOF = true
	case err != nil && b.x.upErr == nil:
		b.x.upErr = err
	}
	return n, err
}

func (b *upstreamBody) Close() error { return b.rc.Close() }

// upstreamFailed records an upstream request that got no response. One
// that the proxy's shutdown cut is no failure of the upstream: it counts
// none and records no "error" event (the exchange's end says what
// happened), and no 502 goes out (see cutByShutdown).
func (x *exchange) upstreamFailed(err error) {
	now := x.p.o.now()
	x.failErr = err
	if x.clientGone() {
		return // the client abandoned the request: finish says so, no error
	}
	cut := x.cutByShutdown()
	if !cut {
		x.p.st.upstreamErrs.Add(1)
	}
	x.mu.Lock()
	if x.reqSize == 0 && !x.reqDone && x.tee != nil && isDialError(err) {
		// The transport never touched the body (it reads through the
		// tee): read it here so that the tape still holds the message
		// the upstream never got.
		x.mu.Unlock()
		io.Copy(io.Discard, io.LimitReader(x.tee, int64(x.p.o.maxBody)+1))
		x.mu.Lock()
	}
	if !x.sessionKnown {
		x.setSession(x.conn.session, kindConnection, "connection")
	}
	x.recordRequestLocked(true)
	x.mu.Unlock()
	if !cut {
		x.fail(now, "upstream %s: %v", RedactURL(x.p.up.String()), err)
	}
}

// cutByShutdown reports whether the proxy's shutdown (Close, once Serve's
// grace is up) cancelled the exchange. An exchange cut before the
// upstream answered gets no response: its connection is closed, as the
// client sees it, and the tape records no status. (The cause is not
// checked: on the net/http path, Serve closing the client's connection
// may cancel the request before the proxy's own cancel reaches it; as
// for clientGone, what ends after the shutdown began is the shutdown's.)
func (x *exchange) cutByShutdown() bool {
	return x.p.closing.Err() != nil && x.ctx != nil && x.ctx.Err() != nil
}

// clientGone reports whether the client abandoned the exchange.
func (x *exchange) clientGone() bool {
	return x.clientCtx.Err() != nil && x.p.closing.Err() == nil
}

// isDialError reports whether err happened while connecting.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// finish records the end of the exchange, after the ReverseProxy returned
// or aborted.
func (x *exchange) finish() {
	if x.decoder != nil {
		if err := x.decoder.close(); err != nil && x.failErr == nil {
			x.fail(x.p.o.now(), "response body: %v", err)
		}
	}
	if x.framer != nil {
		x.framer.Close() // emits an unfinished event as Incomplete
	}
	end := x.p.o.now()
	x.mu.Lock()
	x.resolvePendingLocked()
	x.recordRequestLocked(true)
	batch, reqSize, reqNote := x.batch, x.reqSize, x.reqNote
	plain := x.plainExchange(nil)
	x.mu.Unlock()

	ev := &HTTPEvent{Phase: "end", Method: x.method, Path: x.path, Conn: x.conn.id, Status: x.status,
		DurationNs: end.Sub(x.start).Nanoseconds(), RequestBytes: reqSize, ResponseBytes: x.bodySize,
		Batch: batch, Events: x.events, Comments: x.comments, LastEventID: x.lastID, RequestBody: reqNote}
	if !x.gotResp {
		ev.Host, ev.RequestHeaders = x.host, x.p.o.redact.headers(x.reqHeader)
	}
	if x.gotResp && !x.sse && len(x.body) > 0 {
		at := end
		if !x.bodySent.IsZero() {
			at = x.bodySent // see forwarded
		}
		x.recordBody(at, ev, plain)
	}
	ev.Messages = x.messages
	ev.ClosedBy, ev.Error = x.closer()
	if x.failErr != nil && ev.ClosedBy == ClosedByProxy && !x.cutByShutdown() {
		ev.Status = failStatus(x.failErr) // the error response sent
	}
	x.hold.release()
	x.body = nil
	x.sideDone() // http_side.go
	x.httpEvent(end, ev)
	x.endSession(ev.ClosedBy)
	if x.streaming {
		x.p.st.streams.Add(-1)
	}
	x.observeExchange(end, ev.Status, reqSize) // http_observe.go
	x.p.st.ended.Add(1)
}

// closer tells who ended the exchange, and the error if it failed.
func (x *exchange) closer() (string, string) {
	switch {
	case x.p.closing.Err() != nil && x.ctx.Err() != nil && !x.upEOF:
		if !x.gotResp {
			return ClosedByProxy, tape.ShutdownCutError
		}
		return ClosedByProxy, tape.ShutdownCutResponseError
	case x.failErr != nil && x.clientGone():
		return ClosedByClient, "client closed the request before the response"
	case x.failErr != nil:
		return ClosedByProxy, x.failErr.Error()
	case x.upEOF && x.writeErr == nil:
		return ClosedByServer, ""
	case x.clientGone() || x.writeErr != nil:
		return ClosedByClient, ""
	case x.upErr != nil:
		x.p.st.upstreamErrs.Add(1)
		x.fail(x.p.o.now(), "upstream response broke off: %v", x.upErr)
		return ClosedByServer, x.upErr.Error()
	}
	return ClosedByServer, ""
}
