package capture

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// SSENote is the payload of "sse" events: an SSE event that carried no
// message, or, for one that did, the fields beyond its data and id.
type SSENote struct {
	// Kind is "priming" (an id with no or blank data), "comment"
	// (comment lines only: keep-alives), "retry" (a retry setting only),
	// "endpoint" (the legacy transport's endpoint event), "empty" (blank
	// data only) or "message" (a message event with a retry, comments, or
	// a type other than "message").
	Kind     string `json:"kind"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	RetryMs  *int64 `json:"retry_ms,omitempty"`
	Comments int    `json:"comments,omitempty"`
	Data     string `json:"data,omitempty"`     // endpoint: the URL the client got
	Original string `json:"original,omitempty"` // endpoint: the URL the upstream sent, when the proxy rewrote it
}

// onEvent records one SSE event of the response stream, after it reached
// the client.
func (x *exchange) onEvent(ev *transport.SSEEvent) error {
	now := x.sentAt
	if now.IsZero() {
		now = x.p.o.now()
	}
	x.events++
	x.comments += ev.Comments
	if ev.HasID {
		x.lastID = ev.ID
	}
	isMsg := ev.IsMessage()
	// Until a stream's first message or endpoint event settles its
	// session, its other events are held (see exchange.record); a stream
	// that sends nothing else for maxHeldEvents events is not legacy.
	if x.legacy && !ev.Incomplete && (isMsg || ev.Type == "endpoint" || len(x.held) >= maxHeldEvents) {
		x.mu.Lock()
		if ev.Type == "endpoint" {
			if sid := legacySessionID(queryOf(string(ev.Data))); sid != "" {
				x.stream = StreamSSE
				x.setSession(sid, kindLegacy, "endpoint")
			}
		}
		x.legacy = false
		x.resolvePendingLocked()
		x.mu.Unlock()
	}
	// The note escapes (x.note takes any): a message event that needs none,
	// nearly every one, must return before it is made.
	var kind string
	switch {
	case ev.Incomplete:
		if ev.Size > 0 && (ev.HasData || ev.HasID || ev.Type != "") {
			x.fail(now, "the stream ended inside an SSE event: %d bytes never dispatched", ev.Size)
		}
		return nil
	case ev.Type == "endpoint":
		x.note(now, EventSSE, &SSENote{Kind: "endpoint", ID: ev.ID, RetryMs: retryOf(ev), Comments: ev.Comments,
			Data: string(ev.Data), Original: x.endpoint})
		return nil
	case isMsg:
		if ev.Truncated {
			limit := cappedFrame
			if x.decoder != nil {
				limit = cappedBody
			}
			x.noteCut(now, tape.ServerToClient, &cutNote{Error: fmt.Sprintf("SSE event of %d bytes recorded cut, forwarded whole", ev.Size),
				Kept: len(ev.Data), Size: ev.Size, Limit: limit})
		}
		n, _ := x.recordFrame(tape.ServerToClient, ev.Data, ev.ID, now)
		x.messages += n
		if !ev.HasRetry && ev.Comments == 0 && (ev.Type == "" || ev.Type == "message") {
			return nil
		}
		x.note(now, EventSSE, &SSENote{Kind: "message", Type: ev.Type, RetryMs: retryOf(ev), Comments: ev.Comments})
		return nil
	case ev.HasID:
		kind = "priming"
	case ev.HasRetry:
		kind = "retry"
	case ev.Comments > 0:
		kind = "comment"
	case ev.HasData:
		kind = "empty"
	default:
		return nil // a lone blank line
	}
	x.note(now, EventSSE, &SSENote{Kind: kind, ID: ev.ID, Type: ev.Type, RetryMs: retryOf(ev), Comments: ev.Comments})
	return nil
}

// retryOf returns the retry field of ev for its note, nil when it has none.
func retryOf(ev *transport.SSEEvent) *int64 {
	if !ev.HasRetry {
		return nil
	}
	return &ev.Retry
}

// maxHeldEvents bounds the records held while a GET event stream's session
// is unknown.
const maxHeldEvents = 64

// queryOf returns the raw query of a URL reference, or "".
func queryOf(ref string) string {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return ""
	}
	return u.RawQuery
}

// maxEndpointHold bounds the bytes an endpointRewriter holds back while it
// waits for the first event of a stream.
const maxEndpointHold = 64 << 10

// endpointRewriter sits on the body of a GET event stream that may be a
// legacy HTTP+SSE stream. It holds the stream back until its first event
// with data is complete; if that is an "endpoint" event naming the upstream
// by absolute URL, it rewrites the URL to name the proxy, so that the
// client's POSTs come back through it. From then on, bytes pass through.
// A relative endpoint (what the TypeScript SDK sends) needs no rewriting:
// paths are the same on the proxy.
type endpointRewriter struct {
	rc     io.ReadCloser
	x      *exchange
	framer *transport.SSEFramer
	held   []byte // bytes read and not yet returned
	pos    int    // bytes of held covered by the events framed so far
	done   bool   // decided: pass through
	err    error  // read error, returned once held is drained
}

func (e *endpointRewriter) Read(p []byte) (int, error) {
	if e.framer == nil {
		e.framer, _ = transport.NewSSEFramer(e.event, transport.WithoutRaw()) // valid options
	}
	for {
		switch {
		case e.done && len(e.held) > 0:
			n := copy(p, e.held)
			e.held = e.held[n:]
			return n, nil
		case e.done && e.err != nil:
			return 0, e.err
		case e.done:
			return e.rc.Read(p)
		}
		n, err := e.rc.Read(p)
		if n > 0 {
			e.held = append(e.held, p[:n]...)
			e.framer.Write(p[:n]) // e.event never fails
			if len(e.held) > maxEndpointHold {
				e.done = true
			}
		}
		if err != nil {
			e.err, e.done = err, true
		}
	}
}

func (e *endpointRewriter) Close() error { return e.rc.Close() }

// event looks at one event of the held prefix.
func (e *endpointRewriter) event(ev *transport.SSEEvent) error {
	start := e.pos
	e.pos += int(ev.Size)
	if e.done || !(ev.IsMessage() || ev.Type == "endpoint") {
		return nil
	}
	e.done = true
	if ev.Type != "endpoint" {
		return nil
	}
	data, ok := e.x.rewriteEndpoint(string(ev.Data))
	if !ok {
		return nil
	}
	raw, err := transport.AppendSSE(nil, &transport.SSEEvent{Type: ev.Type, ID: ev.ID, HasID: ev.HasID,
		Retry: ev.Retry, HasRetry: ev.HasRetry, Data: []byte(data), HasData: true})
	if err != nil {
		return nil
	}
	e.x.endpoint = string(ev.Data)
	e.held = slices.Concat(e.held[:start], raw, e.held[e.pos:])
	return nil
}

// rewriteEndpoint returns the endpoint URL the client must get for data,
// and whether it differs: an absolute URL on the upstream's host is moved
// to the host the client reached the proxy by; anything else is kept.
func (x *exchange) rewriteEndpoint(data string) (string, bool) {
	s := strings.TrimSpace(data)
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "", false
	}
	if !sameHost(u, x.p.up) {
		x.p.o.warnf("legacy endpoint %s is not on the upstream's host: the client's messages to it bypass the recorder", RedactURL(s))
		return "", false
	}
	host := x.host
	if host == "" {
		host = x.p.up.Host
	}
	scheme := "http"
	if x.tls {
		scheme = "https"
	}
	rest := s[len(u.Scheme)+len("://"):]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[i:]
	} else {
		rest = ""
	}
	return scheme + "://" + host + rest, true
}

// sameHost reports whether a and b name the same host and port (default
// ports filled in).
func sameHost(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if u.Scheme == "https" {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}
