package capture

// The bodies of an exchange, as the tape keeps them: which exchanges are
// MCP (their bodies are messages) and which are plain HTTP (their bodies
// are notes, redacted), response bodies kept whole or decoded within the
// decode budget, and the announcement of a message recorded cut.

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// mcpPath reports whether a request for path, with no session, may be an
// MCP exchange by its path alone. When the upstream URL names an endpoint
// (a path other than "/"), only that path may (a trailing slash aside);
// when it does not, every path may but the OAuth and discovery ones:
// /.well-known/..., and the default endpoints the 2025-03-26 spec falls
// back to on the server's origin (/authorize, /token, /register) with
// /revoke and /introspect.
func (p *HTTPProxy) mcpPath(path string) bool {
	if up := strings.TrimSuffix(p.up.Path, "/"); up != "" {
		return strings.TrimSuffix(path, "/") == up
	}
	if strings.HasPrefix(path, "/.well-known/") {
		return false
	}
	switch strings.TrimSuffix(path, "/") {
	case "/authorize", "/token", "/register", "/revoke", "/introspect":
		return false
	}
	return true
}

// plainExchange decides, once, whether the exchange is plain HTTP rather
// than MCP (x.mu held): it is unless the request named a session or came
// by an MCP path (x.mcp), the response is an event stream or assigns a
// session, or the request body (reqBody, decoded) is meant as JSON-RPC.
// Plain exchanges are the OAuth and discovery endpoints an MCP server may
// serve on its origin (/register, /token, /authorize, /.well-known/...):
// their bodies go, redacted, in the "end" event, not in messages.
func (x *exchange) plainExchange(reqBody []byte) bool {
	if !x.plainSet {
		x.plainSet = true
		x.plain = !x.mcp && !x.sse && headerValue(x.respHeader, "Mcp-Session-Id") == "" && !looksJSONRPC(reqBody)
	}
	return x.plain
}

// cappedFrame says that a frame was cut at the frame limit (WithMaxBody).
const cappedFrame = "max-frame"

// cutNote is the payload of the "error" event written just before a
// message recorded cut, so that a reader knows, before it reads the
// message, that the next one of the exchange in that direction is
// incomplete (and not invalid JSON-RPC).
type cutNote struct {
	Error     string `json:"error"`
	Truncated bool   `json:"truncated"`      // always true
	Kept      int    `json:"kept"`           // bytes recorded
	Size      int64  `json:"size,omitempty"` // the whole frame's bytes, when known
	Limit     string `json:"limit"`          // the bound reached: cappedFrame, cappedBody or cappedBudget
}

// noteCut records the "error" event that announces a message cut.
func (x *exchange) noteCut(t time.Time, dir tape.Direction, n *cutNote) {
	n.Truncated = true
	x.p.st.cut.Add(1)
	x.record(tape.Record{Type: tape.TypeEvent, Time: t.UnixNano(), Dir: dir, Event: tape.EventError, Data: marshalData(n), Stream: x.stream})
}

// plainBody records a chunk of the response body, decoded, whose write
// to the client began at sent: the events it completes are timed then,
// and so is a whole body whose last chunk it is.
func (x *exchange) plainBody(b []byte, sent time.Time) {
	if x.framer != nil {
		x.sentAt = sent
		x.framer.Write(b) // onEvent never fails
		x.sentAt = time.Time{}
	} else {
		x.bodyBytes(b)
		x.bodySent = sent
	}
}

// bodyBytes records a chunk of a non-SSE response body: it is kept (up to
// the maximum) and recorded whole when the exchange ends.
func (x *exchange) bodyBytes(b []byte) {
	if room := x.p.o.maxBody - len(x.body); len(b) > room {
		b, x.bodyCut = b[:max(room, 0)], cappedFrame
	}
	x.body = append(x.body, b...)
}

// decodedBody keeps a chunk of a decoded non-SSE response body, within
// the exchange's share of the decode budget, and reports whether it wants
// more.
func (x *exchange) decodedBody(b []byte) bool {
	got := x.hold.take(len(b))
	x.body = append(x.body, b[:got]...)
	if got < len(b) {
		x.bodyCut = x.hold.capped
		return false
	}
	return true
}

// decodedEvents frames a chunk of a decoded event stream, holding what the
// framer keeps out of the decode budget, and reports whether it wants
// more: a stream that finds the budget spent is no longer recorded.
func (x *exchange) decodedEvents(b []byte) bool {
	if got := x.hold.take(len(b)); got < len(b) {
		x.hold.release()
		x.fail(x.p.o.now(), "decoded event stream no longer recorded after %d bytes: %s; forwarded whole", x.bodySize, x.hold.reason())
		return false
	}
	x.framer.Write(b) // onEvent never fails
	x.hold.keep(x.framer.Buffered())
	return true
}

// recordBody records a whole non-SSE response body: as messages when it
// is JSON, on an MCP exchange, and either a success or JSON-RPC (an
// OAuth error on the MCP endpoint is not); else (a plain exchange's body,
// an error page) in the "end" event, redacted.
func (x *exchange) recordBody(t time.Time, ev *HTTPEvent, plain bool) {
	mt, _, _ := mime.ParseMediaType(x.ctype)
	b := bytes.TrimSpace(x.body)
	isJSON := isJSONType(mt) || (len(b) > 0 && (b[0] == '{' || b[0] == '['))
	if isJSON && !plain && (x.status/100 == 2 || looksJSONRPC(b)) {
		switch x.bodyCut {
		case "":
		case cappedFrame:
			x.noteCut(t, tape.ServerToClient, &cutNote{Error: fmt.Sprintf("response body longer than %d bytes: recorded cut, forwarded whole", len(x.body)),
				Kept: len(x.body), Limit: cappedFrame})
		default:
			x.noteCut(t, tape.ServerToClient, &cutNote{Error: fmt.Sprintf("response body decoded past %d bytes: recorded cut, forwarded whole (%s)", len(x.body), x.hold.reason()),
				Kept: len(x.body), Limit: x.bodyCut})
		}
		n, _ := x.recordFrame(tape.ServerToClient, x.body, "", t)
		x.messages += n
		return
	}
	ev.Body = x.p.o.redact.bodyNote(x.ctype, x.body)
}
