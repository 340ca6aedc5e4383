package capture

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// wsUpgradeTimeout bounds the upstream's handshake.
const wsUpgradeTimeout = 30 * time.Second

// wsSession is one proxied WebSocket connection: a session of the tape.
type wsSession struct {
	p     *WSProxy
	id    string // "ws-N"
	x     uint64 // the upgrade's exchange number
	conn  uint64
	start time.Time
	path  string // the upgrade's path and query, redacted
	rc    *recorder

	client, up *websocket.Conn

	closing atomic.Bool // end has begun
	mu      sync.Mutex
	by      string // who ended the session: ClosedBy*
	reason  string // "close-frame", "connection-lost", "too-big", "shutdown"
}

// WSEvent is the payload of the "ws" events of a WebSocket recording.
type WSEvent struct {
	// Kind is "binary", "ping", "pong" or "close".
	Kind string `json:"kind"`
	// Bytes is the payload's length (binary, ping, pong).
	Bytes int `json:"bytes,omitempty"`
	// B64 is the payload, standard base64 (binary, ping, pong).
	B64 string `json:"b64,omitempty"`
	// Code and Reason are those of a close frame; Abrupt marks a
	// connection that ended without one, Error says how.
	Code   int    `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	Abrupt bool   `json:"abrupt,omitempty"`
	Error  string `json:"error,omitempty"`
}

// ServeHTTP proxies and records one WebSocket connection.
func (p *WSProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := p.o.now()
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, "mcptape: this proxy records MCP over WebSocket: send a WebSocket upgrade", http.StatusUpgradeRequired)
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "mcptape: proxy shutting down", http.StatusServiceUnavailable)
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()

	conn := p.nextConn.Add(1)
	s := &wsSession{p: p, id: "ws-" + strconv.FormatUint(conn, 10), x: p.nextX.Add(1), conn: conn, start: start}
	s.rc = newRecorder(p.rec, s.id, p.o.warnf)
	s.path = p.o.redact.requestURI(r.URL)
	dopts := &websocket.DialOptions{
		HTTPHeader:     stripHandshake(r.Header),
		Host:           p.upstreamHost(r),
		Subprotocols:   offeredSubprotocols(r.Header),
		OnPingReceived: s.onPing(tape.ServerToClient),
		OnPongReceived: s.onPong(tape.ServerToClient),
	}
	if p.o.insecure {
		dopts.HTTPClient = &http.Client{Transport: defaultTransport(true)}
	}
	dctx, cancel := context.WithTimeout(r.Context(), wsUpgradeTimeout)
	up, resp, err := websocket.Dial(dctx, p.upstreamURL(r), dopts)
	cancel()
	if err != nil {
		p.refuse(w, r, s.x, conn, start, resp, err)
		return
	}
	for k, v := range stripHandshake(resp.Header) {
		w.Header()[k] = v
	}
	var subs []string
	if sp := up.Subprotocol(); sp != "" {
		subs = []string{sp}
	}
	client, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:       subs,
		InsecureSkipVerify: true, // Origin reached the upstream, which judged it
		OnPingReceived:     s.onPing(tape.ClientToServer),
		OnPongReceived:     s.onPong(tape.ClientToServer),
	})
	if err != nil {
		_ = up.Close(websocket.StatusGoingAway, "client upgrade failed")
		p.httpEvent(p.o.now(), "", s.x, &HTTPEvent{Phase: "end", Method: r.Method, Path: s.path, Host: r.Host,
			Conn: conn, Status: http.StatusSwitchingProtocols, ClosedBy: ClosedByClient, Error: err.Error()})
		return
	}
	p.st.sessions.Add(1)
	s.client, s.up = client, up
	client.SetReadLimit(int64(p.max))
	up.SetReadLimit(int64(p.max))
	s.event(start, tape.EventOpen, "", &HTTPSessionEvent{Kind: "websocket", How: "upgrade", Conn: conn})
	p.httpEvent(start, s.id, s.x, &HTTPEvent{Phase: "response", Method: r.Method, Path: s.path, Host: r.Host, Conn: conn,
		Status: http.StatusSwitchingProtocols, RequestHeaders: p.o.redact.headers(r.Header), ResponseHeaders: p.o.redact.headers(resp.Header),
		WaitNs: int64(p.o.now().Sub(start))})
	s.run()
}

// headerHasToken reports whether a comma-separated header holds token.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// run pumps both directions until the session ends, then records its end.
func (s *wsSession) run() {
	p := s.p
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.live[s] = struct{}{}
	}
	p.mu.Unlock()
	if closed {
		s.end(ClosedByProxy, "shutdown", websocket.StatusGoingAway, "mcptape proxy shutting down")
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.pump(s.client, s.up, tape.ClientToServer) }()
	go func() { defer wg.Done(); s.pump(s.up, s.client, tape.ServerToClient) }()
	wg.Wait()
	p.mu.Lock()
	delete(p.live, s)
	p.mu.Unlock()
	now := p.o.now()
	by, reason := s.outcome()
	s.event(now, tape.EventClose, "", &HTTPSessionEvent{By: by, Reason: reason})
	p.httpEvent(now, s.id, s.x, &HTTPEvent{Phase: "end", Method: http.MethodGet, Path: s.path, Conn: s.conn,
		Status: http.StatusSwitchingProtocols, DurationNs: int64(now.Sub(s.start)), ClosedBy: by})
	s.rc.close()
}

// pump forwards the frames of from to to and records them, until from
// ends.
func (s *wsSession) pump(from, to *websocket.Conn, dir tape.Direction) {
	ctx := context.Background()
	var buf []byte // reused: the tape copies what it keeps
	for {
		typ, data, err := readFrame(ctx, from, buf[:0])
		now := s.p.o.now()
		if err != nil {
			s.ended(dir, now, err)
			return
		}
		if buf = data; cap(buf) > wsKeepBuffer {
			buf = nil // a big frame's buffer is not held on to
		}
		werr := to.Write(ctx, typ, data)
		if typ == websocket.MessageText {
			s.message(dir, now, data)
		} else {
			s.event(now, tape.EventWS, dir, &WSEvent{Kind: "binary", Bytes: len(data), B64: base64.StdEncoding.EncodeToString(data)})
		}
		if werr != nil {
			// The other side is gone: its own pump records how.
			return
		}
	}
}

// message records one text frame.
func (s *wsSession) message(dir tape.Direction, now time.Time, data []byte) {
	info := s.rc.message(&tape.Record{Type: tape.TypeMessage, Time: now.UnixNano(), Dir: dir, Frame: data, Exchange: s.x, Stream: tape.StreamWS})
	if dir == tape.ClientToServer {
		s.p.st.c2s.Add(1)
	} else {
		s.p.st.s2c.Add(1)
	}
	if info.Kind == jsonrpc.KindInvalid {
		s.p.st.invalid.Add(1)
		s.event(now, tape.EventError, dir, errorData{Error: "invalid JSON-RPC frame (forwarded as is)", Violations: info.Violations.Names()})
	}
}

// ended records how the side sending in direction dir ended (a close
// frame, or a connection lost) and ends the session.
func (s *wsSession) ended(dir tape.Direction, now time.Time, err error) {
	by, other := ClosedByClient, "client"
	if dir == tape.ServerToClient {
		by, other = ClosedByServer, "upstream"
	}
	var ce websocket.CloseError
	switch {
	case errors.As(err, &ce):
		s.event(now, tape.EventWS, dir, &WSEvent{Kind: "close", Code: int(ce.Code), Reason: ce.Reason})
		code := ce.Code
		if code == websocket.StatusNoStatusRcvd || code == websocket.StatusAbnormalClosure || code == websocket.StatusTLSHandshake {
			code = websocket.StatusNormalClosure // codes a close frame must not carry
		}
		s.end(by, "close-frame", code, ce.Reason)
	case s.ending():
		// The proxy closed this side after the other ended: recorded already.
	case websocket.CloseStatus(err) == websocket.StatusMessageTooBig || isReadLimit(err):
		s.event(now, tape.EventWS, dir, &WSEvent{Kind: "close", Code: int(websocket.StatusMessageTooBig), Error: err.Error()})
		s.end(ClosedByProxy, "too-big", websocket.StatusMessageTooBig, "frame larger than the recorder's limit")
	default:
		s.event(now, tape.EventWS, dir, &WSEvent{Kind: "close", Abrupt: true, Error: err.Error()})
		code := websocket.StatusGoingAway
		if dir == tape.ServerToClient {
			code = websocket.StatusBadGateway
		}
		s.end(by, "connection-lost", code, other+" connection lost")
	}
}

// isReadLimit reports whether err is the library's read limit error.
func isReadLimit(err error) bool {
	return err != nil && strings.Contains(err.Error(), "read limited at")
}

// ending reports whether the session's end has begun.
func (s *wsSession) ending() bool { return s.closing.Load() }

// end ends the session once: it notes who ended it and why, and closes
// both connections with code and text (a side already closed is left so).
// It returns once both closes are done (a close handshake waits at most
// 5 s for the peer).
func (s *wsSession) end(by, reason string, code websocket.StatusCode, text string) {
	if !s.closing.CompareAndSwap(false, true) {
		return
	}
	s.mu.Lock()
	s.by, s.reason = by, reason
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range []*websocket.Conn{s.client, s.up} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = c.Close(code, text) }()
	}
	wg.Wait()
}

// outcome returns who ended the session and why.
func (s *wsSession) outcome() (by, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by, s.reason
}

// onPing returns the hook recording a ping received from the side that
// sends in direction dir; the library answers it with a pong.
func (s *wsSession) onPing(dir tape.Direction) func(context.Context, []byte) bool {
	return func(_ context.Context, b []byte) bool {
		s.event(s.p.o.now(), tape.EventWS, dir, &WSEvent{Kind: "ping", Bytes: len(b), B64: base64.StdEncoding.EncodeToString(b)})
		return true
	}
}

// onPong returns the hook recording a pong received from the side that
// sends in direction dir.
func (s *wsSession) onPong(dir tape.Direction) func(context.Context, []byte) {
	return func(_ context.Context, b []byte) {
		s.event(s.p.o.now(), tape.EventWS, dir, &WSEvent{Kind: "pong", Bytes: len(b), B64: base64.StdEncoding.EncodeToString(b)})
	}
}

// event records an event of the session, at t, in the exchange of its
// upgrade.
func (s *wsSession) event(t time.Time, name string, dir tape.Direction, data any) {
	s.rc.write(&tape.Record{Type: tape.TypeEvent, Time: t.UnixNano(), Dir: dir, Event: name, Exchange: s.x, Data: marshalData(data)})
}

// wsKeepBuffer is the largest frame buffer a pump keeps for the next frame.
const wsKeepBuffer = 1 << 20

// readFrame reads the next data frame of c into buf (grown as needed).
func readFrame(ctx context.Context, c *websocket.Conn, buf []byte) (websocket.MessageType, []byte, error) {
	typ, r, err := c.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return typ, buf, nil
		}
		if err != nil {
			return 0, nil, err
		}
	}
}
