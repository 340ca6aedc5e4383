package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// session is one virtual MCP client: a connection, its handshake, and the
// requests it has in flight. A reader goroutine takes every frame the
// server sends and hands each response to the request waiting for it
// (matched by id), counts progress notifications, and answers the
// server's own requests.
type session struct {
	r  *runner
	no int // session number, from 0

	mu      sync.Mutex // guards conn, up, pending and reading
	conn    transport.Conn
	up      bool
	pending map[int64]*call
	reading bool // a reader goroutine runs
	// lazy: the reader runs only while requests are pending (Streamable
	// HTTP without a GET stream, where every frame answers a request).
	// Otherwise it runs all along: a stdio child or a server stream must
	// be drained even when nothing is pending. Set by newSession, never
	// written after: read without mu.
	lazy    bool
	setupMu sync.Mutex // one setup at a time

	nextID atomic.Int64
	iter   atomic.Int64         // requests made, for {{iteration}}
	spare  atomic.Pointer[call] // a call free for the next request (newCall)
	wg     sync.WaitGroup       // the reader
	// lossErr is why the session lost its last connection (the stdio
	// server exited): requests still sent on it fail with it. Guarded by mu.
	lossErr error
}

// call is one request waiting for its answer.
type call struct {
	done     chan reply // capacity 1
	names    []string   // the series the request counts in
	tmpl     *template
	progress int64        // notifications/progress received
	first    time.Time    // first progress
	lastAt   time.Time    // latest progress
	last     float64      // last progress value
	stream   streamedCall // parts of a streamed answer (streamed.go)
}

// reply is what the reader hands to a waiting request.
type reply struct {
	at    time.Time
	info  verdict
	frame []byte
	id    int64 // the request's id
	err   error // no answer: the connection was lost
}

// verdict is what the request of an answer needs of the answer's
// classification (jsonrpc.Info) to judge it: a few bytes handed over, not
// the whole Info.
type verdict struct {
	kind       jsonrpc.Kind
	violations jsonrpc.Violation
	errorCode  int64
}

// verdictOf returns the verdict of an answer classified as info.
func verdictOf(info *jsonrpc.Info) verdict {
	return verdict{kind: info.Kind, violations: info.Violations, errorCode: info.ErrorCode}
}

func newSession(r *runner, no int) *session {
	s := &session{r: r, no: no, pending: make(map[int64]*call),
		lazy: r.target.URL != "" && !r.o.getStream && r.o.streamPath == ""}
	if r.o.streamPath != "" {
		// The side stream's server may send every answer to every
		// session: their ids must not meet (see WithStreamPath).
		s.nextID.Store(int64(no) << 32)
	}
	return s
}

// ensure sets the session up unless it is up already, and returns the
// connection it is up on. The connection may be lost right after (the
// reader then clears s.conn): a request sent on it fails on Send, with
// the loss as its reason. A failed setup is counted and returned.
func (s *session) ensure(ctx context.Context) (transport.Conn, error) {
	if conn := s.upConn(); conn != nil {
		return conn, nil
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	if conn := s.upConn(); conn != nil {
		return conn, nil
	}
	return s.setup(ctx)
}

// upConn returns the session's connection when it is set up, else nil;
// the two are read under one lock (a session that is up has one).
func (s *session) upConn() transport.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up {
		return s.conn
	}
	return nil
}

// setupNames are the series of a session setup.
var setupNames = []string{SetupSeries}

// setup dials the server (once) and runs the handshake, recording its
// duration in SetupSeries; it returns the connection set up.
func (s *session) setup(ctx context.Context) (transport.Conn, error) {
	start := time.Now()
	s.r.st.sentIn(setupNames, 1)
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		c, err := s.r.dial(ctx)
		if err != nil {
			s.r.st.failErr(ctx, setupNames, err)
			return nil, err
		}
		conn = c
		s.mu.Lock()
		s.conn = c
		if !s.lazy {
			s.reading = true
			s.wg.Add(1)
			go s.read(c)
		}
		s.mu.Unlock()
	}
	if stateless(s.r.o.version) {
		// 2026-07-28: no handshake; server/discover is the setup measured
		id := s.nextID.Add(1)
		rep, err := s.roundTrip(ctx, conn, id, discoverFrame(id, s.r.o.version), nil, time.Now().Add(s.r.o.timeout))
		if err != nil {
			return nil, err
		}
		if rep.info.kind == jsonrpc.KindError {
			// a server without discovery still serves requests
			s.r.st.fail(setupNames, ClassJSONRPC, "server/discover "+jsonrpcDetail(rep.info.errorCode, rep.frame))
		}
		s.r.st.record(setupNames, time.Since(start))
		s.r.st.setUp()
		s.r.negotiated(s.r.o.version)
	} else {
		id := s.nextID.Add(1)
		rep, err := s.roundTrip(ctx, conn, id, initializeFrame(id, s.r.o.version), nil, time.Now().Add(s.r.o.timeout))
		if err != nil {
			return nil, err
		}
		if rep.info.kind == jsonrpc.KindError {
			d := jsonrpcDetail(rep.info.errorCode, rep.frame)
			s.r.st.fail(setupNames, ClassJSONRPC, "initialize "+d)
			return nil, fmt.Errorf("initialize: error %s", d)
		}
		s.r.negotiated(negotiatedVersion(rep.frame))
		sctx, cancel := context.WithTimeout(ctx, s.r.o.timeout)
		_, err = conn.Send(sctx, initializedFrame, transport.SendOptions{})
		if err != nil {
			s.countErr(sctx, setupNames, conn, err)
			cancel()
			return nil, fmt.Errorf("notifications/initialized: %w", err)
		}
		cancel()
		s.r.st.record(setupNames, time.Since(start))
		s.r.st.setUp()
	}
	s.mu.Lock()
	s.up = true
	s.mu.Unlock()
	s.setupSteps(ctx, conn)
	return conn, nil
}

// setupSteps sends the scenario's per-session setup steps, in order, each
// recorded in a series named "setup " + its series.
func (s *session) setupSteps(ctx context.Context, conn transport.Conn) {
	if len(s.r.setupTmpls) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(s.no), 0x7365747570))
	var buf []byte
	for _, t := range s.r.setupTmpls {
		t = t.render(reqVars{session: s.no, iteration: s.iter.Add(1) - 1, rng: rng})
		id := s.nextID.Add(1)
		buf = t.appendFrame(s.r.frameBuf(buf), id)
		start := time.Now()
		names := t.series
		stepNames := make([]string, len(names))
		for i, n := range names {
			stepNames[i] = "setup " + n
		}
		s.r.st.sentIn(stepNames, 1)
		rep, err := s.roundTrip(ctx, conn, id, buf, &call{done: make(chan reply, 1), names: stepNames, tmpl: t}, start.Add(s.r.o.timeout))
		if err != nil {
			continue
		}
		s.r.st.record(stepNames, rep.at.Sub(start))
		s.judge(stepNames, t, &rep)
	}
}

// roundTrip sends frame as request id and waits for its answer, until
// deadline. Errors are counted in the series of c (session setup when c
// is nil); a request in flight when the run is interrupted counts as
// cancelled. The deadline goes with the request (SendOptions.Deadline):
// an answer already in when Send returns (a JSON answer over HTTP) costs
// no context of its own; only a wait makes one.
func (s *session) roundTrip(ctx context.Context, conn transport.Conn, id int64, frame []byte, c *call, deadline time.Time) (reply, error) {
	if c == nil {
		c = &call{done: make(chan reply, 1), names: setupNames}
	}
	drain := s.registerOne(conn, c, id)
	ex, err := conn.Send(ctx, frame, transport.SendOptions{Deadline: deadline})
	if err != nil {
		s.forget(id)
		return reply{}, s.countErr(ctx, c.names, conn, err)
	}
	if drain {
		own := handoff{c: c}
		if s.drain(conn, &own); own.got {
			if own.rep.err != nil {
				return reply{}, s.countErr(ctx, c.names, conn, own.rep.err)
			}
			return own.rep, nil
		}
	}
	select {
	case rep := <-c.done:
		if rep.err != nil {
			return reply{}, s.countErr(ctx, c.names, conn, rep.err)
		}
		return rep, nil
	default:
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var ended <-chan struct{} // the HTTP answer's end
	if ex != nil && s.r.target.Command == nil {
		ended = ex.Done()
	}
	for {
		select {
		case rep := <-c.done:
			if rep.err != nil {
				return reply{}, s.countErr(wctx, c.names, conn, rep.err)
			}
			return rep, nil
		case <-ended:
			ended = nil
			if err := s.unanswered(wctx, ex, c); err != nil {
				s.forget(id)
				return reply{}, s.countErr(wctx, c.names, conn, err)
			}
		case <-wctx.Done():
			s.forget(id)
			return reply{}, s.countErr(wctx, c.names, conn, wctx.Err())
		}
	}
}

// answerGrace bounds the wait, once an HTTP answer has ended, for the
// reader to hand over the answer it carried (queued before the end).
const answerGrace = time.Second

// errNoAnswer is why a request fails when its HTTP answer ended without
// answering it (the server died mid-stream).
var errNoAnswer = errors.New("the answer's stream ended without the answer")

// unanswered is called when the HTTP answer ex to request c ended: it
// returns the error to fail c with when ex ended without answering it,
// nil when c is answered after all (the answer is put back on c.done) or
// may still be, on the session's GET stream. ctx is the request's.
func (s *session) unanswered(ctx context.Context, ex *transport.Exchange, c *call) error {
	if (s.r.o.getStream || s.r.o.streamPath != "") && ex.Err() == nil {
		return nil
	}
	select {
	case rep := <-c.done: // the usual case: a JSON answer, taken by drain
		c.done <- rep // room for it: taken just now
		return nil
	default:
	}
	t := time.NewTimer(answerGrace)
	defer t.Stop()
	select {
	case rep := <-c.done:
		c.done <- rep
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	if err := ex.Err(); err != nil {
		return err
	}
	return errNoAnswer
}

// countErr counts why an exchange on conn of the named series failed
// (ctx is its context) and returns the error, named: a send to the stdio
// server of a session that exited fails with *ServerExitError. An expired
// session is marked for a new setup; a transport failure makes the
// run's loops back off (see backsOff).
func (s *session) countErr(ctx context.Context, names []string, conn transport.Conn, err error) error {
	switch {
	case errors.Is(err, transport.ErrSessionExpired):
		s.mu.Lock()
		s.up = false
		s.mu.Unlock()
	case errors.Is(err, transport.ErrClosed):
		s.mu.Lock()
		if s.lossErr != nil {
			err = s.lossErr
		}
		s.mu.Unlock()
	default:
		err = serverGone(conn, err)
	}
	class, detail := reason(ctx, err)
	s.r.st.fail(names, class, detail)
	return err
}

// do sends one request built from t and records its latency from
// intended (the arrival time in the open model, the send time in the
// closed one). It reports whether the request failed in a way that calls
// for a back-off before the next (backsOff), a failed setup included.
func (s *session) do(ctx context.Context, t *template, intended time.Time, buf []byte, rng *rand.Rand) ([]byte, bool) {
	st := s.r.st
	conn, err := s.ensure(ctx)
	if err != nil {
		return buf, ctx.Err() == nil
	}
	if s.r.o.upHook != nil {
		s.r.o.upHook(s)
	}
	t = t.render(reqVars{session: s.no, iteration: s.iter.Add(1) - 1, rng: rng})
	id := s.nextID.Add(1)
	buf = t.appendFrame(s.r.frameBuf(buf), id)
	names := t.series
	c := s.newCall(names, t)
	st.mu.Lock()
	st.sentLocked(intended, names)
	st.inflt.add(intended, 1)
	st.mu.Unlock()
	var rep reply
	var cancelAt time.Time // when the call was cancelled
	sent := time.Now()
	cancelled := s.r.pickCancel()
	if cancelled {
		rep, cancelAt, err = s.cancelRoundTrip(ctx, conn, id, buf, c)
	} else {
		rep, err = s.roundTrip(ctx, conn, id, buf, c, sent.Add(s.r.o.timeout))
	}
	if err != nil {
		st.flying(intended, -1)
		end := time.Now()
		if !cancelAt.IsZero() { // not when the watch for what came after it ended
			end = cancelAt
		}
		s.r.result(ctx, intended, sent, end, names, err, "")
		return buf, backsOff(err)
	}
	st.answered(names, intended, rep.at)
	if c.stream.seen() { // written before c.done was sent
		st.streamed(names, &c.stream, intended, rep.at)
	}
	class := s.judge(names, t, &rep)
	s.r.result(ctx, intended, sent, rep.at, names, nil, class)
	if s.r.o.progress {
		s.noteProgress(names[len(names)-1], c, intended)
	}
	if !cancelled {
		s.recycle(c)
	}
	return buf, false
}

// newCall returns a call waiting for nothing yet, of the named series,
// for a request built from t: the session's spare one, else a new one.
func (s *session) newCall(names []string, t *template) *call {
	if c := s.spare.Swap(nil); c != nil {
		c.names, c.tmpl = names, t
		return c
	}
	return &call{done: make(chan reply, 1), names: names, tmpl: t}
}

// recycle keeps c, whose answer was taken from c.done, for the session's
// next request: once answered a call is held by nothing else (it left
// pending before its answer was sent, and it gets one answer). A call
// that failed may still get a late answer, and is never recycled.
func (s *session) recycle(c *call) {
	*c = call{done: c.done}
	s.spare.Store(c)
}

// backsOff reports whether a request that failed with err calls for a
// back-off before the next: the server could not be reached (connection
// refused, reset, unreachable, a stdio server gone), or answered with a
// status that says it cannot serve now (see busyStatus). Any other HTTP
// error status is the server's answer to that request: it is counted and
// the next request goes at once, as vegeta and k6 do (an expired session
// is set up again at once; a timeout has waited already).
func backsOff(err error) bool {
	if errors.Is(err, errCancelled) { // our own cancellation: the server is fine
		return false
	}
	var se *transport.StatusError
	if errors.As(err, &se) {
		return busyStatus(se.Status)
	}
	class, _ := reason(context.Background(), err)
	return class == ClassTransport
}

// busyStatus reports whether an HTTP status says the server, or a gateway
// in front of it, cannot serve now: 429 Too Many Requests, 502 Bad
// Gateway, 503 Service Unavailable, 504 Gateway Timeout. A Retry-After
// header is not followed: the back-off is capped at BackoffMax, so that a
// load run keeps measuring rather than waiting for as long as the server
// asks.
func busyStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// errCancelled marks a call cancelled before its answer.
var errCancelled = errors.New("cancelled")

// asStatus reports whether err is (or wraps) a *transport.StatusError.
func asStatus(err error, se **transport.StatusError) bool { return errors.As(err, se) }

// judge counts the errors an answer carries, in the named series.
func (s *session) judge(names []string, t *template, rep *reply) string {
	return judgeAnswer(s.r.st, names, rep.info, rep.frame, t.call.Tool)
}

// judgeAnswer counts the error an answer carries, if any, in the named
// series, and returns its class ("" for none); tool is the tool called
// ("" for another method).
func judgeAnswer(st *stats, names []string, info verdict, frame []byte, tool string) string {
	switch {
	case info.violations != 0:
		st.failAnswer(names, ClassProtocol, info.violations.String())
		return ClassProtocol
	case info.kind == jsonrpc.KindError:
		st.failAnswer(names, ClassJSONRPC, jsonrpcDetail(info.errorCode, frame))
		return ClassJSONRPC
	case tool != "" && isToolError(frame):
		st.failAnswer(names, ClassTool, tool)
		return ClassTool
	}
	return ""
}

// isToolError reports whether a tools/call result has isError true.
func isToolError(frame []byte) bool {
	if !bytes.Contains(frame, []byte(`"isError"`)) {
		return false
	}
	var m struct {
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	return json.Unmarshal(frame, &m) == nil && m.Result.IsError
}

// close ends the session (DELETE over HTTP, stdin closed over stdio) and
// waits for its reader.
func (s *session) close() {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		if hc, ok := conn.(*transport.HTTPConn); ok && s.r.o.getStream && hc.GetStream() != nil {
			s.r.st.add(&s.r.st.get.opened, 1)
		}
		_ = conn.Close()
		s.wg.Wait()
	}
}
