package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Conn is a raw-frame client connection to one MCP server session: the layer
// under the replayer and the load generator.
//
// A Conn carries frames; it does not build or interpret MCP payloads beyond
// what the transport itself requires (the Mcp-Session-Id of the initialize
// answer, the negotiated protocol version, the 2026-07-28 headers derived
// from the body). Frames are sent byte-exactly as given, and every frame
// the server sends, on any stream, is delivered by Recv with its transport
// metadata.
//
// Four implementations exist: [DialStdio] (a child process),
// [DialHTTP] (Streamable HTTP, 2025-03-26 sessions through 2026-07-28
// stateless), [DialLegacySSE] (the 2024-11-05 HTTP+SSE transport) and
// [DialWebSocket] (one message per text frame, ws_client.go).
//
// # Data flow
//
// Send writes one frame: a stdio line, or one HTTP POST. For HTTP, the
// answer to the POST is read by the connection: a JSON body is read inside
// Send and queued as one frame; an event stream is read by a goroutine that
// queues each event's data as one frame, as the events arrive, until the
// stream ends. The optional GET stream (and the legacy /sse stream) is read
// the same way. The requests go through the connection's http.Client; a
// client made by [NewHTTPClient] sends plain-HTTP requests over its lean
// HTTP/1.1 path (http_client_lean.go: pooled keep-alive connections of
// internal/http1, the HTTP/1.1 client the recording proxy uses too, each
// used by the goroutine of its request, no goroutine hand-off) and the
// rest through net/http's Transport. For stdio one goroutine reads the
// child's output lines. Recv
// takes the queued frames in arrival order. The queue holds at most a
// bounded number of frames from streams: a stream reader waits when the
// caller stops calling Recv (frames of JSON bodies are queued by Send
// without waiting, so that a caller that sends before it receives never
// deadlocks).
//
// # Concurrency
//
//   - Send may be called from many goroutines at once, and concurrently
//     with Recv and Close. Over stdio the lines of concurrent Sends never
//     interleave; over HTTP each Send is its own POST.
//   - Recv is meant for one reading goroutine; it is safe to call from
//     several, each frame going to exactly one of them, but then the
//     arrival order is only kept per goroutine.
//   - Close may be called at any time, more than once, from any goroutine.
//     It makes a blocked Recv return [ErrClosed] at once, fails Sends in
//     progress, and ends every response stream.
type Conn interface {
	// Send sends one frame (a message or a batch) exactly as given. Over
	// stdio it returns once the line is written; over HTTP once the POST is
	// sent and the response headers have arrived (for a JSON answer, once
	// its body is read and queued). Send keeps nothing of frame once it
	// returns: the caller may reuse it. ctx governs the whole exchange:
	// cancelling it after Send returned closes that POST's response stream,
	// which is the cancellation of 2026-07-28 ([Exchange.CloseStream] does
	// the same). The returned Exchange describes the HTTP exchange.
	Send(ctx context.Context, frame []byte, opt SendOptions) (*Exchange, error)
	// Recv returns the next frame from the server, from any stream, in
	// arrival order. It returns [ErrClosed] after Close, and an error
	// wrapping [ErrServerClosed] once the server has ended the connection
	// and every frame received before that was returned. A frame already
	// queued is returned even when ctx has ended, so that Recv with an
	// ended context takes what arrived without waiting.
	Recv(ctx context.Context) (Incoming, error)
	// Close ends the connection and releases its resources. Over stdio it
	// closes the child's stdin, waits, then sends SIGTERM, waits, then
	// SIGKILL; over HTTP it ends every stream and, when the server gave a
	// session id, sends DELETE. It is idempotent and returns the same
	// result every time.
	Close() error
}

// Stream names the stream a frame arrived on.
type Stream string

const (
	// StreamStdout is the standard output of a stdio server.
	StreamStdout Stream = "stdout"
	// StreamPOST is the response to a POST (a JSON body or an event stream).
	StreamPOST Stream = "post"
	// StreamGET is the Streamable HTTP GET stream of server-initiated messages.
	StreamGET Stream = "get"
	// StreamSSE is the event stream of the legacy HTTP+SSE transport.
	StreamSSE Stream = "sse"
	// StreamWS is a WebSocket connection's text frames.
	StreamWS Stream = "ws"
)

// Incoming is one frame received from the server.
type Incoming struct {
	// Frame is the message exactly as received: a stdout line without its
	// "\n", an HTTP JSON body, or the data of one SSE event. It belongs to
	// the caller.
	Frame []byte
	// Exchange is the ID of the Exchange whose response carried the frame
	// (0 for stdio).
	Exchange uint64
	// Stream is the stream the frame arrived on.
	Stream Stream
	// EventID is the SSE last event ID when the frame was dispatched (the
	// id of its event, or of an earlier event of the same stream when it
	// had none); empty for other streams.
	EventID string
	// Time is when the frame was received.
	Time time.Time
	// Truncated reports that the frame was longer than the connection's
	// maximum frame size: Frame holds its first bytes only.
	Truncated bool
}

// SendOptions adjusts one Send.
type SendOptions struct {
	// Header holds extra request headers for this frame (HTTP only). They
	// are applied last, replacing any header of the same name the
	// connection would set: use it for Mcp-Param-* headers, which need the
	// tool's input schema, or to send recorded headers exactly.
	Header http.Header
	// Deadline, when not zero, ends the exchange at that time as a
	// deadline of ctx would (its error is context.DeadlineExceeded). Over
	// HTTP's lean path it is the I/O deadline of the connection carrying
	// the exchange: a caller bounding each request this way pays for no
	// context and no timer of its own.
	Deadline time.Time
	// Written, when not nil, is called once the whole frame has been
	// written on the connection: over stdio and WebSocket just before
	// Send returns; over HTTP once the POST, head and body, is written on
	// its TCP connection (or HTTP/2 stream), which may be long before Send
	// returns, as a server may hold its answer's headers back. A caller
	// that sends something about the frame on another connection (a
	// notifications/cancelled naming it) waits for it so as not to
	// overtake the frame. It is called at most once, on the goroutine
	// writing the frame, so it must be quick and must not block; not at
	// all when the frame could not be written. A Send that returns an
	// Exchange has called it. Over HTTP with a client of WithHTTPClient
	// whose Transport does not report httptrace's WroteRequest
	// (net/http's does), it is called only when the answer's headers
	// arrive.
	Written func()
	// NoEOL (stdio only) writes the frame without its "\n" and then
	// closes the server's stdin: the frame is the last line of a client
	// whose input ended without a newline, and the server sees it as that
	// client's server did (the bytes, then the end of its input). Every
	// later Send fails.
	NoEOL bool
	// KeepRefusal (HTTP only) leaves a JSON-RPC message in the body of
	// a non-2xx answer in the *StatusError (Body) alone, instead of also
	// queuing it for Recv: for a caller that reports the refusal itself.
	KeepRefusal bool
}

// bound returns ctx bounded by o.Deadline, and its cancel function (a
// no-op without a deadline).
func (o *SendOptions) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.Deadline.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, o.Deadline)
}

// Errors of the connections. Test them with errors.Is.
var (
	// ErrClosed is returned by Send and Recv after Close.
	ErrClosed = errors.New("transport: connection closed")
	// ErrServerClosed is wrapped by the error Recv returns once the server
	// ended the connection: a stdio server closed its output, or the legacy
	// SSE stream ended.
	ErrServerClosed = errors.New("server closed the connection")
	// ErrSessionExpired is wrapped by the *StatusError of a request sent
	// with an Mcp-Session-Id the server no longer knows: a 404, or a 400
	// whose body says the session is unknown (server-everything's answer).
	// The caller must initialize again; the connection has already
	// forgotten the session id.
	ErrSessionExpired = errors.New("session expired")
	// ErrStreamClosed is the error of an Exchange whose response stream was
	// closed by the client (Exchange.CloseStream or the Send context).
	ErrStreamClosed = errors.New("response stream closed by the client")
)

// closedChan is a closed channel: the Done channel of exchanges that are
// complete when created.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Exchange describes one request sent and its response: an HTTP exchange,
// or a stdio line (which has no response of its own).
//
// The exported fields are set before Send returns and never change after.
// Done, Err, Frames and Ended describe the response stream, which may go on
// after Send returned.
type Exchange struct {
	// ID numbers the exchanges of a connection from 1, in the order they
	// started. Incoming.Exchange refers to it.
	ID uint64
	// Method is the HTTP method ("" for stdio).
	Method string
	// Status is the HTTP status code (0 for stdio).
	Status int
	// ContentType is the response's media type, lower case, without
	// parameters ("application/json", "text/event-stream", "").
	ContentType string
	// Header holds the response headers (nil for stdio, and for the
	// answers to Send on a connection made WithoutAnswerHeaders).
	Header http.Header
	// Body holds the response body when it was not delivered as frames: a
	// non-2xx answer, or a 2xx answer that is neither JSON nor an event
	// stream (at most MaxErrorBody bytes). A non-2xx JSON body that is a
	// JSON-RPC message is also delivered by Recv.
	Body []byte
	// Sent is when the request started.
	Sent time.Time
	// Responded is when the response headers arrived (for stdio, when the
	// line was written).
	Responded time.Time

	done   chan struct{} // made by Done, nil until then (guarded by mu)
	fin    bool          // complete (guarded by mu; err, frames and ended are set before)
	err    error
	frames int
	ended  time.Time
	mu     sync.Mutex
	why    error       // why the exchange was aborted (abort), guarded by mu
	after  []func()    // AfterDone's functions, run by finish
	x      exchangeEnd // the end of an HTTP exchange (http_exchange.go), guarded by mu
	// reuseHead: a Send's exchange of a connection WithoutAnswerHeaders,
	// whose answer's head may be parsed into the memory of the last
	// answer of its keep-alive connection (see leanConn.roundTrip). Set
	// before the request.
	reuseHead bool
	// wrote is SendOptions.Written made to run once (nil: none), called by
	// the request's writer: the lean path, net/http's WroteRequest, or
	// Send once the answer's head came.
	wrote func()
}

// MaxErrorBody is the most bytes of a response body kept in Exchange.Body
// and in a StatusError.
const MaxErrorBody = 64 << 10

// Done returns a channel closed when the response is complete: its body
// read to the end, or its stream ended, failed or was closed.
func (e *Exchange) Done() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done == nil { // made on demand: most exchanges are complete before anyone waits
		if e.fin {
			e.done = closedChan
		} else {
			e.done = make(chan struct{})
		}
	}
	return e.done
}

// complete reports whether the response is complete (Done is closed);
// then err, frames and ended hold its outcome.
func (e *Exchange) complete() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fin
}

// Err returns, once Done is closed, nil when the response ended normally,
// or why it did not (ErrStreamClosed, ErrClosed, a read error).
func (e *Exchange) Err() error {
	if !e.complete() {
		return nil
	}
	return e.err
}

// Frames returns, once Done is closed, the number of frames the response
// delivered.
func (e *Exchange) Frames() int {
	if !e.complete() {
		return 0
	}
	return e.frames
}

// Ended returns, once Done is closed, when the response ended.
func (e *Exchange) Ended() time.Time {
	if !e.complete() {
		return time.Time{}
	}
	return e.ended
}

// CloseStream closes the response stream now, as a client does to cancel a
// request in the 2026-07-28 protocol (and to stop waiting for an answer a
// 2025 server will never send after notifications/cancelled). Frames not
// yet received are lost. It does nothing once the response is complete.
func (e *Exchange) CloseStream() { e.abort(ErrStreamClosed) }

// AfterDone arranges for f to run once the response is complete: at once,
// on the caller's goroutine, when it already is; otherwise on the
// goroutine that completes it, so f must be quick and must not block. It
// saves a goroutine waiting on Done.
func (e *Exchange) AfterDone(f func()) {
	e.mu.Lock()
	if e.fin {
		e.mu.Unlock()
		f()
		return
	}
	e.after = append(e.after, f)
	e.mu.Unlock()
}

// finish marks the response complete and runs the AfterDone functions. It
// is called once, by the goroutine that read the response.
func (e *Exchange) finish(err error) { e.finishAt(err, time.Now()) }

// finishAt is finish, the response having ended at t.
func (e *Exchange) finishAt(err error, t time.Time) {
	e.mu.Lock()
	e.err = err
	e.ended = t
	e.fin = true
	if e.done != nil {
		close(e.done)
	}
	after := e.after
	e.after = nil
	e.mu.Unlock()
	for _, f := range after {
		f()
	}
}

// StatusError is the error of an HTTP exchange answered with a status
// other than 2xx.
type StatusError struct {
	// Method and URL are those of the request.
	Method, URL string
	// Status is the response's status code.
	Status int
	// Body holds the first bytes of the response body (at most
	// MaxErrorBody).
	Body []byte
	// Expired reports that the status means the session expired.
	Expired bool
}

// Error returns a one-line message: method, URL, status and the start of
// the body.
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "transport: %s %s: %d %s", e.Method, e.URL, e.Status, http.StatusText(e.Status))
	if e.Expired {
		b.WriteString(" (session expired)")
	}
	if s := oneLine(e.Body, 200); s != "" {
		b.WriteString(": ")
		b.WriteString(s)
	}
	if h := e.Hint(); h != "" {
		b.WriteString(" (" + h + ")")
	}
	return b.String()
}

// Hint returns what the status probably means when the URL is likely the
// wrong one (a POST refused by a legacy HTTP+SSE server's .../sse stream,
// or a POST to a server's root, which has no MCP endpoint there), or "".
// Error ends with it in parentheses; a report that shows the status its
// own way adds it the same way.
func (e *StatusError) Hint() string {
	if e.Method != http.MethodPost {
		return ""
	}
	switch {
	case (e.Status == http.StatusMethodNotAllowed || e.Status == http.StatusNotFound) && ssePath(e.URL):
		return "the stream URL of a legacy HTTP+SSE server? it is given with --sse"
	case e.Status == http.StatusNotFound && rootPath(e.URL):
		return "the URL has no path: MCP servers usually answer at one, such as /mcp"
	}
	return ""
}

// rootPath reports whether rawURL's path is empty or "/".
func rootPath(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && (u.Path == "" || u.Path == "/")
}

// ssePath reports whether rawURL's path ends in /sse, the stream of a
// legacy HTTP+SSE server, which refuses POSTs.
func ssePath(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && strings.HasSuffix(u.Path, "/sse")
}

// Unwrap returns ErrSessionExpired when the status means the session
// expired, nil otherwise.
func (e *StatusError) Unwrap() error {
	if e.Expired {
		return ErrSessionExpired
	}
	return nil
}

// oneLine returns at most max bytes of b as printable text on one line:
// control characters and invalid UTF-8 become spaces or U+FFFD, runs of
// spaces are collapsed, and "..." marks a cut.
func oneLine(b []byte, max int) string {
	var out strings.Builder
	space := false
	for len(b) > 0 && out.Len() < max {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		switch {
		case r == ' ' || r < 0x20 || r == 0x7f:
			space = out.Len() > 0
			continue
		case r == utf8.RuneError && n == 1:
			r = utf8.RuneError
		}
		if space {
			out.WriteByte(' ')
			space = false
		}
		out.WriteRune(r)
	}
	if len(b) > 0 {
		out.WriteString("...")
	}
	return out.String()
}
