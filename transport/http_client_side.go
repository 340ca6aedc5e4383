package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcptape/mcptape/jsonrpc"
)

// The side stream: the HTTP dialect of the LangGraph MCP server's
// documentation POSTs JSON-RPC to the endpoint, gets plain JSON back (or
// 202 for a request it answers later) with no session, and reads the
// server's messages from an EventSource on another path
// (new EventSource('/mcp/stream')). Such a server cannot tell its clients
// apart, so a stream may carry the answers to other clients' requests: as
// the documentation's clients do, the connection keeps only the answers
// to its own requests in flight (a request stays in flight until its
// terminal answer: a single response, an error, or the end part of a
// streamed answer) and drops the rest (SideDropped counts them).
// Notifications and server requests are all kept.

// streamDialect is the dialect of streamed answers the side stream knows.
var streamDialect = jsonrpc.LangGraphStream()

// WithStreamPath makes a Streamable HTTP connection read the server's
// messages from an event stream it opens with GET at path (such as
// "/mcp/stream"; a path on the endpoint's origin, or an absolute http or
// https URL) before its first POST, as the LangGraph MCP server's
// documentation has it. Answers arriving there are delivered by Recv
// (Stream StreamGET) when their id is that of a request of this
// connection still in flight; others are dropped (see
// HTTPConn.SideDropped). When the stream ends while the connection is
// open, Recv returns, after the frames queued, an error wrapping
// ErrServerClosed: no answer can come any more.
func WithStreamPath(path string) Option {
	return func(o *options) error {
		if path == "" || (!strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://")) {
			return fmt.Errorf("WithStreamPath: %q is neither a path (/...) nor an http(s) URL", path)
		}
		if _, err := url.Parse(path); err != nil {
			return fmt.Errorf("WithStreamPath: %w", err)
		}
		o.streamPath = path
		o.use("WithStreamPath", forHTTP)
		return nil
	}
}

// sideStream is the state of a connection's side stream.
type sideStream struct {
	url *url.URL

	open    sync.Mutex // held while the stream is being opened
	ex      *Exchange  // once open
	dropped atomic.Int64

	mu       sync.Mutex
	inflight map[string]int // id key -> requests sent under it, not yet answered
}

func newSideStream(base *url.URL, path string) *sideStream {
	ref, _ := url.Parse(path) // checked by WithStreamPath
	return &sideStream{url: base.ResolveReference(ref), inflight: map[string]int{}}
}

// SideDropped returns how many answers the side stream (WithStreamPath)
// carried for requests this connection did not have in flight.
func (c *HTTPConn) SideDropped() int64 {
	if c.side == nil {
		return 0
	}
	return c.side.dropped.Load()
}

// openSide opens the side stream if it is not open yet. It fails when the
// stream cannot be opened, or has ended.
func (c *HTTPConn) openSide(ctx context.Context) error {
	s := c.side
	s.open.Lock()
	defer s.open.Unlock()
	if s.ex != nil {
		if s.ex.complete() {
			return fmt.Errorf("transport: the event stream GET %s has ended: %w", s.url.Redacted(), ErrServerClosed)
		}
		return nil
	}
	// The stream lives as long as the connection, not as ctx.
	ex, err := c.openStream(context.WithoutCancel(ctx), s.url, StreamGET, SendOptions{}, reqInfo{keep: s.keep, onEnd: c.sideEnded})
	if err != nil {
		return fmt.Errorf("transport: opening the server's event stream: %w", err)
	}
	s.ex = ex
	return nil
}

// sideEnded is called when the side stream ends: unless the connection
// is closing, no answer can come any more.
func (c *HTTPConn) sideEnded(err error) {
	if c.ctx.Err() != nil {
		return
	}
	why := "the server ended it"
	if err != nil && !errors.Is(err, io.EOF) {
		why = err.Error()
	}
	c.in.finish(fmt.Errorf("transport: the event stream GET %s ended (%s): %w", c.side.url.Redacted(), why, ErrServerClosed))
}

// sent notes the requests of frame (classified as info) in flight.
func (s *sideStream) sent(frame []byte, info *jsonrpc.Info) {
	s.mu.Lock()
	defer s.mu.Unlock()
	eachRequestID(frame, info, func(key string) { s.inflight[key]++ })
}

// unsent takes back what sent noted, for a POST that failed.
func (s *sideStream) unsent(frame []byte, info *jsonrpc.Info) {
	s.mu.Lock()
	defer s.mu.Unlock()
	eachRequestID(frame, info, func(key string) { s.release(key, s.inflight[key]) })
}

// eachRequestID calls f with the id key of every request in frame, a
// message or a batch classified as info.
func eachRequestID(frame []byte, info *jsonrpc.Info, f func(key string)) {
	switch info.Kind {
	case jsonrpc.KindRequest:
		f(info.ID.Key())
	case jsonrpc.KindBatch:
		members, _ := jsonrpc.Split(frame)
		for _, m := range members {
			if mi := jsonrpc.Classify(m); mi.Kind == jsonrpc.KindRequest {
				f(mi.ID.Key())
			}
		}
	}
}

// answered takes the terminal answers of frame (a POST's answer) out of
// flight.
func (s *sideStream) answered(frame []byte) {
	info := jsonrpc.Classify(frame)
	if info.Kind != jsonrpc.KindBatch {
		s.take(frame, &info, false)
		return
	}
	members, _ := jsonrpc.Split(frame)
	for _, m := range members {
		mi := jsonrpc.Classify(m)
		s.take(m, &mi, false)
	}
}

// keep is the side stream's filter: it reports whether frame is for this
// connection, taking a terminal answer out of flight.
func (s *sideStream) keep(frame []byte) bool {
	info := jsonrpc.Classify(frame)
	return s.take(frame, &info, true)
}

// take handles one answer: false when it answers no request in flight
// (counted as dropped when drop), and a terminal answer ends its request.
// Anything but an answer is true.
func (s *sideStream) take(frame []byte, info *jsonrpc.Info, drop bool) bool {
	if info.Kind != jsonrpc.KindResponse && info.Kind != jsonrpc.KindError {
		return true
	}
	if info.ID.Type == jsonrpc.IDNull {
		return true // an error about an unreadable request: whose, nobody knows
	}
	key := info.ID.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.inflight[key]
	if n == 0 {
		if drop {
			s.dropped.Add(1)
		}
		return !drop
	}
	if streamDialect.Ends(frame, info) {
		s.release(key, n)
	}
	return true
}

// release ends one request under key, of n in flight (mu held).
func (s *sideStream) release(key string, n int) {
	if n <= 1 {
		delete(s.inflight, key)
	} else {
		s.inflight[key] = n - 1
	}
}

// keepPOST sees the messages of a POST's answer: its terminal answers
// end their requests. It keeps them all.
func (s *sideStream) keepPOST(frame []byte) bool {
	s.answered(frame)
	return true
}
