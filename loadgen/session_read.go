package loadgen

// The session's reading side: the frames the server sends, taken by a
// reader goroutine (or, for a lazy session, by the request that sent
// the answer's request: drain) and dispatched to the requests waiting
// for them (matched by id), the progress notifications counted, the
// server's own requests answered.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// register makes calls[i] wait for the answer to ids[i], starting the
// reader if none runs.
func (s *session) register(conn transport.Conn, c *call, ids ...int64) {
	s.mu.Lock()
	for _, id := range ids {
		s.pending[id] = c
	}
	s.startReaderLocked(conn)
	s.mu.Unlock()
}

// startReaderLocked starts the reader unless one runs, or conn is no
// longer the session's (lost: its requests fail on Send); s.mu is held.
func (s *session) startReaderLocked(conn transport.Conn) {
	if !s.reading && conn == s.conn {
		s.reading = true
		s.wg.Add(1)
		go s.read(conn)
	}
}

// registerOne makes c wait for the answer to id. For a lazy session it
// starts no reader and reports true: the caller drains the connection
// once Send returned. Otherwise it starts the reader if none runs.
func (s *session) registerOne(conn transport.Conn, c *call, id int64) (drain bool) {
	s.mu.Lock()
	s.pending[id] = c
	if !s.lazy {
		s.startReaderLocked(conn)
	}
	s.mu.Unlock()
	return s.lazy
}

// forget drops a pending request.
func (s *session) forget(id int64) {
	s.mu.Lock()
	delete(s.pending, id)
	s.mu.Unlock()
}

// read takes the server's frames until the connection ends, or for a
// lazy session until no request is pending.
func (s *session) read(conn transport.Conn) {
	defer s.wg.Done()
	var parts [][]byte
	for {
		s.mu.Lock()
		if s.lazy && len(s.pending) == 0 {
			s.reading = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		in, err := conn.Recv(context.Background())
		if err != nil {
			s.mu.Lock()
			s.reading = false
			s.mu.Unlock()
			s.lost(conn, err)
			return
		}
		parts = s.take(conn, in, parts, nil)
	}
}

// handoff is a request that drains its own answer (see drain): the
// answer is handed over in it, without a trip through the call's channel.
type handoff struct {
	c   *call
	rep reply
	got bool
}

// take dispatches one frame from the server (each message of a batch);
// parts is scratch space, returned for reuse. own, when not nil, is the
// request of the goroutine that takes the frame.
func (s *session) take(conn transport.Conn, in transport.Incoming, parts [][]byte, own *handoff) [][]byte {
	info := jsonrpc.Classify(in.Frame)
	onGet := in.Stream == transport.StreamGET
	if info.Kind == jsonrpc.KindBatch {
		parts, _ = jsonrpc.AppendSplit(parts[:0], in.Frame)
		for _, p := range parts {
			pi := jsonrpc.Classify(p)
			if onGet {
				s.r.st.getMessage(pi.Kind)
			}
			s.dispatch(conn, in.Time, &pi, p, own)
		}
		return parts
	}
	if onGet {
		s.r.st.getMessage(info.Kind)
	}
	s.dispatch(conn, in.Time, &info, in.Frame, own)
	return parts
}

// doneCtx is a context that has ended: Recv with it returns a frame
// already queued, or fails at once.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// drain takes, in the calling goroutine, the frames a lazy session's
// connection has queued, unless a reader runs: over Streamable HTTP a
// JSON answer is queued before Send returns, so the request that sent it
// finds its answer without a hand-off to a reader goroutine, and the
// answer to own's call is put in own. If requests are still pending after
// that (answers that are event streams), drain starts the reader.
func (s *session) drain(conn transport.Conn, own *handoff) {
	s.mu.Lock()
	if s.reading {
		s.mu.Unlock()
		return
	}
	s.reading = true
	s.mu.Unlock()
	var parts [][]byte
	for {
		in, err := conn.Recv(doneCtx)
		if err != nil {
			break
		}
		parts = s.take(conn, in, parts, own)
	}
	s.mu.Lock()
	if len(s.pending) > 0 {
		s.wg.Add(1)
		go s.read(conn)
	} else {
		s.reading = false
	}
	s.mu.Unlock()
}

// dispatch handles one message from the server. The answer to own's call
// (own not nil) is put in own, any other on its call's channel.
func (s *session) dispatch(conn transport.Conn, at time.Time, info *jsonrpc.Info, frame []byte, own *handoff) {
	switch info.Kind {
	case jsonrpc.KindResponse, jsonrpc.KindError:
		id, err := strconv.ParseInt(string(info.ID.Raw), 10, 64)
		if err != nil {
			if info.ID.Type != jsonrpc.IDAbsent && info.ID.Type != jsonrpc.IDNull {
				s.r.st.fail(nil, ClassProtocol, "answer with an id never sent")
			}
			return
		}
		part, tokens := streamPart(frame, info)
		s.mu.Lock()
		c := s.pending[id]
		if c != nil && c.stream.take(part, tokens, at) {
			s.mu.Unlock() // the call stays in flight until its end
			return
		}
		delete(s.pending, id)
		s.mu.Unlock()
		switch {
		case c == nil:
		case own != nil && c == own.c:
			own.rep, own.got = reply{at: at, info: verdictOf(info), frame: frame, id: id}, true
		default:
			c.done <- reply{at: at, info: verdictOf(info), frame: frame, id: id} // room for it: one reply per call
		}
	case jsonrpc.KindNotification:
		if info.Method == jsonrpc.MethodProgress {
			s.progress(at, *info, frame)
		}
	case jsonrpc.KindRequest:
		go s.answer(conn, *info)
	case jsonrpc.KindInvalid:
		s.r.st.fail(nil, ClassProtocol, "invalid frame")
	}
}

// answer replies to a request of the server: ping gets {}, anything else
// "method not found" (the load generator declares no capabilities).
func (s *session) answer(conn transport.Conn, info jsonrpc.Info) {
	var frame []byte
	if info.Method == "ping" {
		frame = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, info.ID.Raw)
	} else {
		frame = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, info.ID.Raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.r.o.timeout)
	defer cancel()
	_, _ = conn.Send(ctx, frame, transport.SendOptions{})
}
