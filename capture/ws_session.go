package capture

import (
	"encoding/base64"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// wsSession is one proxied WebSocket connection: a session of the tape.
type wsSession struct {
	p     *WSProxy
	id    string // "ws-N"
	x     uint64 // the upgrade's exchange number
	conn  uint64
	start time.Time
	path  string // the upgrade's path and query, redacted
	rc    *recorder

	client, up         io.ReadWriteCloser
	toClient, toUp     *wsOut
	fromClient, fromUp *wsWay // the two directions

	mu     sync.Mutex
	by     string // who ended the session: ClosedBy*; "" while it runs
	reason string // "close-frame", "connection-lost", "too-big", "protocol-error", "shutdown"
	grace  *time.Timer
}

// WSEvent is the payload of the "ws" events of a WebSocket recording.
type WSEvent struct {
	// Kind is "binary", "ping", "pong" or "close".
	Kind string `json:"kind"`
	// Bytes is the payload's length (binary, ping, pong).
	Bytes int `json:"bytes,omitempty"`
	// B64 is the payload, standard base64 (binary, ping, pong).
	B64 string `json:"b64,omitempty"`
	// Code and Reason are those of a close frame (1005 when it has no
	// code); Abrupt marks a connection that ended without one, Error says
	// how.
	Code   int    `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	Abrupt bool   `json:"abrupt,omitempty"`
	Error  string `json:"error,omitempty"`
}

// relay sets up the relay of a session between client and up, the
// connections after the handshake; preClient and preUp are what each sent
// after its handshake, read with it.
func (s *wsSession) relay(client, up io.ReadWriteCloser, preClient, preUp []byte) {
	max := int64(s.p.max)
	s.client, s.up = client, up
	s.toClient, s.toUp = newWSOut(client, false), newWSOut(up, true)
	s.fromClient = &wsWay{from: "client", in: client, out: s.toUp, back: s.toClient, parse: newWSParser(true, max), pre: preClient}
	s.fromUp = &wsWay{from: "upstream", in: up, out: s.toClient, back: s.toUp, parse: newWSParser(false, max), pre: preUp}
}

// dir is the tape direction of w.
func (w *wsWay) dir() tape.Direction {
	if w.from == "client" {
		return tape.ClientToServer
	}
	return tape.ServerToClient
}

// by is who ends a session when w's side does.
func (w *wsWay) by() string {
	if w.from == "client" {
		return ClosedByClient
	}
	return ClosedByServer
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
		s.end(ClosedByProxy, "shutdown", wsCloseGoingAway, "mcptape proxy shutting down")
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.pump(s.fromClient) }()
	go func() { defer wg.Done(); s.pump(s.fromUp) }()
	wg.Wait()
	s.mu.Lock()
	if s.grace != nil {
		s.grace.Stop()
	}
	by, reason := s.by, s.reason
	s.mu.Unlock()
	_ = s.client.Close()
	_ = s.up.Close()
	p.mu.Lock()
	delete(p.live, s)
	p.mu.Unlock()
	now := p.o.now()
	s.event(now, tape.EventClose, "", &HTTPSessionEvent{By: by, Reason: reason})
	p.httpEvent(now, s.id, s.x, &HTTPEvent{Phase: "end", Method: "GET", Path: s.path, Conn: s.conn,
		Status: 101, DurationNs: int64(now.Sub(s.start)), ClosedBy: by})
	s.rc.close()
}

// record records what the last feed of w's parser completed.
func (s *wsSession) record(w *wsWay, now time.Time) {
	dir := w.dir()
	for _, it := range w.parse.items {
		switch it.op {
		case wsOpText:
			s.message(dir, now, it.data)
		case wsOpClose:
			code, reason := wsCloseOf(it.data)
			s.event(now, tape.EventWS, dir, &WSEvent{Kind: "close", Code: code, Reason: reason}) // forwarded: the peers close
		default:
			kind := "binary"
			if it.op == wsOpPing {
				kind = "ping"
			} else if it.op == wsOpPong {
				kind = "pong"
			}
			s.event(now, tape.EventWS, dir, &WSEvent{Kind: kind, Bytes: len(it.data), B64: base64.StdEncoding.EncodeToString(it.data)})
		}
	}
}

// message records one text message.
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

// refused records a frame w's parser refused and ends the session: status
// 1009 for a message over the limit, 1002 (protocol error) otherwise.
func (s *wsSession) refused(w *wsWay, now time.Time, err error) {
	var fe *wsFrameError
	if errors.As(err, &fe) && fe.tooBig {
		s.event(now, tape.EventWS, w.dir(), &WSEvent{Kind: "close", Code: wsCloseTooBig, Error: err.Error()})
		s.end(ClosedByProxy, "too-big", wsCloseTooBig, "frame larger than the recorder's limit")
		return
	}
	s.event(now, tape.EventError, w.dir(), errorData{Error: err.Error()})
	what := err.Error()
	if fe != nil {
		what = fe.what
	}
	s.end(ClosedByProxy, "protocol-error", wsCloseProtocol, what)
}

// inputEnded records how w's side ended, when it did so without a close
// frame while the session ran (the side dropped), ends the session, and
// passes the end on to the other side.
func (s *wsSession) inputEnded(w *wsWay, now time.Time, err error) {
	w.back.stop()
	if err != nil && !w.parse.closed && !s.ending() {
		msg := err.Error()
		if errors.Is(err, io.EOF) {
			msg = "connection closed without a close frame"
		}
		code, text := wsCloseGoingAway, "client connection lost"
		if w.from == "upstream" {
			code, text = wsCloseBadGateway, "upstream connection lost"
		}
		if s.end(w.by(), "connection-lost", code, text) {
			s.event(now, tape.EventWS, w.dir(), &WSEvent{Kind: "close", Abrupt: true, Error: msg})
		}
	}
	w.out.end()
}

// settle notes, once, who ended the session and why, and starts the grace
// after which both connections are closed. It reports whether it was the
// first.
func (s *wsSession) settle(by, reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by != "" {
		return false
	}
	s.by, s.reason = by, reason
	s.grace = time.AfterFunc(wsCloseGrace, func() {
		_ = s.client.Close()
		_ = s.up.Close()
	})
	return true
}

// ending reports whether the session's end has begun.
func (s *wsSession) ending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by != ""
}

// end ends the session, when it has not begun to end: it notes who ended
// it and why, and sends both sides a close frame with code and text (a
// side gone, or already sent one, is left as it is). It reports whether
// it was the first to end the session.
func (s *wsSession) end(by, reason string, code int, text string) bool {
	if !s.settle(by, reason) {
		return false
	}
	s.toClient.sendClose(code, text)
	s.toUp.sendClose(code, text)
	return true
}

// event records an event of the session, at t, in the exchange of its
// upgrade.
func (s *wsSession) event(t time.Time, name string, dir tape.Direction, data any) {
	s.rc.write(&tape.Record{Type: tape.TypeEvent, Time: t.UnixNano(), Dir: dir, Event: name, Exchange: s.x, Data: marshalData(data)})
}

// wsKeepBuffer is the largest message buffer a parser keeps for the next
// message.
const wsKeepBuffer = 1 << 20
