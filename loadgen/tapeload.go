package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
)

// RunTape is tape-driven load: n virtual sessions, each replaying one of
// the recorded sessions (taken in turn), all at once, through the replayer
// (identifiers rewritten, server requests answered from the recording,
// recorded batches sent as batches unless replay.WithUnbatch, pacing by
// replay options such as replay.WithSpeed). Every connection is
// metered: each request's latency goes to the series of its method and
// tool, each session's setup (initialize, or a leading server/discover)
// to SetupSeries, and errors are counted by class as in Run. A request the
// recording cancels (notifications/cancelled) is no longer measured, and
// its answer, if any, is ignored. A request answered in parts (a
// streamed answer: streamed.go) stays in flight until its end part and is
// measured as Run measures it: its series' latency to the end, the
// FirstChunkSuffix and CompleteSuffix series, and the usage tokens. Of
// Run's options, WithTimeout,
// WithHeader, WithMaxConns, WithHTTPClient, WithInsecureTLS, WithLive,
// WithHlog, WithGrace, WithStopNow, WithServerStderr, WithDuration and
// WithRequests apply: the recording bounds the
// run (each virtual session replays its recorded session once), and
// WithDuration or WithRequests end it earlier, as in Run: no request
// starts after the bound (the session then ends), the requests in flight
// get their answers (up to the timeout), then the replay is stopped. A
// stdio server that exits ends its replayed session (the requests in
// flight fail with *ServerExitError, the exit is counted in ServerExits).
func RunTape(ctx context.Context, target Target, sessions []*replay.Session, n int, ropts []replay.Option, opts ...Option) (*Report, error) {
	if err := target.check(); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if len(sessions) == 0 || n < 1 {
		return nil, errors.New("loadgen: tape load needs recorded sessions and at least one virtual session")
	}
	o, err := parseOptions(opts)
	if err != nil {
		return nil, err
	}
	if len(o.stages) > 0 || o.results != nil {
		return nil, errors.New("loadgen: a tape load replays its recordings: no stages or results lines")
	}
	o.sessions = n
	// the live figures show the recording's requests (setups excluded, as
	// in Report.Requests), up to WithRequests, as the planned count
	var planned int64
	for i := range n {
		planned += plannedRequests(sessions[i%len(sessions)])
	}
	if o.client == nil && target.Command == nil {
		c, err := sharedClient(o, true) // a session may replay its GET stream
		if err != nil {
			return nil, err
		}
		defer c.CloseIdleConnections()
		o.client = c
	}
	r := &runner{o: o, target: target, st: newStats(), work: ctx, planned: planned}
	if o.requests > 0 {
		r.planned = min(planned, o.requests)
	}
	bctx, stop := context.WithCancel(ctx)
	defer stop()
	end := func() { r.endTape(stop) }
	virtual := make([]*replay.Session, n)
	for i := range virtual {
		virtual[i] = sessions[i%len(sessions)]
	}
	dial := func(ctx context.Context, s *replay.Session) (transport.Conn, error) {
		c, err := dialTarget(ctx, target, o, replay.HTTPOptions(s)...)
		if err != nil {
			r.st.sentIn(setupNames, 1)
			r.st.failErr(ctx, setupNames, err)
			return nil, err
		}
		return &meteredConn{Conn: c, r: r, pending: map[string]*sentReq{}, end: end}, nil
	}
	r.start = time.Now()
	stopIntervals := r.recordIntervals()
	stopLive := r.live()
	if o.duration > 0 {
		t := time.AfterFunc(o.duration, func() { r.stopSending(r.start.Add(o.duration)); end() })
		defer t.Stop()
	}
	stopWatch := context.AfterFunc(ctx, func() { r.stopSending(time.Now()) })
	defer stopWatch()
	// a load measures the answers: no wait, once a session's last one
	// came, for the server messages recorded after it
	rr, err := replay.Run(bctx, virtual, dial, append(ropts, replay.WithConcurrency(n), replay.WithTimeout(o.timeout), replay.WithoutTrailingWait())...)
	closed := time.Now()
	ended := r.tapeEnd(closed)
	r.endMeasure(ended)
	stopLive()
	ivs := stopIntervals()
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	rep := r.report(ended, closed)
	rep.Intervals, rep.IntervalWidth = ivs, intervalWidth(ivs, r.o.interval)
	rep.Model, rep.Protocol = "replay", sessions[0].Version
	bounded := r.quit.Load() && ctx.Err() == nil
	for _, s := range rr.Sessions {
		if s != nil && s.Error != "" && !(bounded && endedByBound(s.Error)) {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("session %s: %s", s.Session, s.Error))
		}
	}
	return rep, nil
}

// tapeEnd returns the measured end of a tape-driven run whose replay
// returned at closed: when the last request left flight, or when the
// sending ended if later; closed when no request did.
func (r *runner) tapeEnd(closed time.Time) time.Time {
	last := r.lastDone.Load()
	if last == 0 {
		return closed
	}
	end := time.Unix(0, last)
	if send := r.sendingEnd(closed); send.After(end) {
		end = send
	}
	return clampTime(end, r.start, closed)
}

// done notes that a request of a tape-driven run left flight at at.
func (r *runner) done(at time.Time) { raiseMax(&r.lastDone, at.UnixNano()) }

// errRunEnded is the error of a request a tape-driven run no longer sends:
// its duration or request bound was reached.
var errRunEnded = errors.New("loadgen: the run's bound was reached")

// endedByBound reports whether a replayed session's error is the end of
// the run at its bound rather than a failure of its own.
func endedByBound(msg string) bool {
	return strings.Contains(msg, errRunEnded.Error()) || strings.Contains(msg, context.Canceled.Error())
}

// endTape ends a tape-driven run at its bound: no request starts any
// more; once the requests in flight were answered (or the timeout
// passed), stop ends the replay.
func (r *runner) endTape(stop context.CancelFunc) {
	if !r.quit.CompareAndSwap(false, true) {
		return
	}
	go func() {
		deadline := time.Now().Add(r.o.timeout)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for time.Now().Before(deadline) && r.work.Err() == nil {
			if r.st.snap().InFlight <= 0 {
				break
			}
			<-t.C
		}
		if r.st.snap().InFlight > 0 { // given up: the wait ends now
			r.done(time.Now())
		}
		stop()
	}()
}

// plannedRequests counts the requests a replay of s sends, its setup
// excluded (see isSetup).
func plannedRequests(s *replay.Session) int64 {
	requests, initializes, first := s.Requests()
	n := int64(requests - initializes)
	if first == "server/discover" {
		n--
	}
	return n
}

// isSetup reports whether a recorded request of method is its session's
// setup, measured in SetupSeries as Run measures it: initialize, or a
// 2026-07-28 session's server/discover when it is the session's first
// request (one called later is an ordinary request). A leading
// server/discover the server refuses counts no setup: the initialize a
// client sends next (falling back) does.
func isSetup(method string, first bool) bool {
	return method == "initialize" || (first && method == "server/discover")
}

// sentReq is a request sent on a metered connection.
type sentReq struct {
	at     time.Time
	series []string
	tool   bool
	probe  bool         // a session's leading server/discover
	stream streamedCall // parts of a streamed answer (streamed.go), under the conn's mu
}

// meteredConn measures the requests that go through a connection.
type meteredConn struct {
	transport.Conn
	r       *runner
	mu      sync.Mutex
	pending map[string]*sentReq // live id key -> request
	sentAny bool                // a request went out on the connection
	lossErr error               // why the connection ended, if the server ended it
	end     func()              // ends the run: its bound was reached
}

// Send notes every request of frame, then sends it.
func (m *meteredConn) Send(ctx context.Context, frame []byte, opt transport.SendOptions) (*transport.Exchange, error) {
	info := jsonrpc.Classify(frame)
	members := [][]byte{frame}
	if info.Kind == jsonrpc.KindBatch {
		members, _ = jsonrpc.Split(frame)
	}
	if err := m.claim(ctx, members, info); err != nil {
		return nil, err
	}
	now := time.Now()
	var keys []string
	for _, f := range members {
		mi := info
		if len(members) > 1 || info.Kind == jsonrpc.KindBatch {
			mi = jsonrpc.Classify(f)
		}
		if mi.Kind == jsonrpc.KindNotification && mi.Method == jsonrpc.MethodCancelled && mi.CancelTarget.Type != jsonrpc.IDAbsent {
			// a recorded cancellation: the request is no longer measured
			m.forget(mi.CancelTarget.Key())
			continue
		}
		if mi.Kind != jsonrpc.KindRequest {
			continue
		}
		m.mu.Lock()
		setup := isSetup(mi.Method, !m.sentAny)
		m.sentAny = true
		m.mu.Unlock()
		series := []string{mi.Method}
		if setup {
			series = []string{SetupSeries}
		} else if name := paramsName(f); name != "" && mi.Method == "tools/call" {
			series = append(series, mi.Method+" "+name)
		}
		key := mi.ID.Key()
		keys = append(keys, key)
		m.mu.Lock()
		m.pending[key] = &sentReq{at: now, series: series, tool: mi.Method == "tools/call", probe: setup && mi.Method == "server/discover"}
		m.mu.Unlock()
		st := m.r.st
		st.mu.Lock()
		if setup {
			st.seriesCountsLocked(SetupSeries).requests++
		} else {
			st.sentLocked(now, series)
			st.inflt.add(now, 1)
		}
		st.mu.Unlock()
	}
	ex, err := m.Conn.Send(ctx, frame, opt)
	if err != nil && len(keys) > 0 {
		m.r.done(time.Now())
		err = serverGone(m.Conn, err)
		m.lost(err)
		for _, k := range keys {
			if req, ok := m.forget(k); ok {
				m.r.st.failErr(ctx, req.series, err)
			}
		}
	}
	return ex, err
}

// lost notes why the connection was lost, the first time: the requests
// still pending at Close fail with it, and a server's exit is counted
// once in Report.ServerExits, whether a send or a receive met it first.
func (m *meteredConn) lost(why error) {
	m.mu.Lock()
	first := m.lossErr == nil
	if first {
		m.lossErr = why
	}
	m.mu.Unlock()
	var xe *ServerExitError
	if first && errors.As(why, &xe) {
		st := m.r.st
		st.mu.Lock()
		st.exits[xe.Status]++
		st.mu.Unlock()
	}
}

// Recv measures each response as it is taken.
func (m *meteredConn) Recv(ctx context.Context) (transport.Incoming, error) {
	in, err := m.Conn.Recv(ctx)
	if err != nil {
		if !errors.Is(err, transport.ErrClosed) {
			m.lost(serverGone(m.Conn, err))
		}
		return in, err
	}
	info := jsonrpc.Classify(in.Frame)
	if info.Kind == jsonrpc.KindBatch { // the answer to a recorded batch
		members, _ := jsonrpc.Split(in.Frame)
		for _, f := range members {
			m.measure(jsonrpc.Classify(f), f, in.Time)
		}
		return in, nil
	}
	m.measure(info, in.Frame, in.Time)
	return in, nil
}

// measure takes the answer frame (info: its classification), arrived at
// at, to a pending request.
func (m *meteredConn) measure(info jsonrpc.Info, frame []byte, at time.Time) {
	if info.Kind != jsonrpc.KindResponse && info.Kind != jsonrpc.KindError {
		return
	}
	part, tokens := streamPart(frame, &info)
	m.mu.Lock()
	req, ok := m.pending[info.ID.Key()]
	if ok && req.stream.take(part, tokens, at) {
		m.mu.Unlock() // in flight until the end of its streamed answer
		return
	}
	delete(m.pending, info.ID.Key())
	m.mu.Unlock()
	if !ok {
		return
	}
	m.r.done(at)
	st := m.r.st
	if req.series[0] == SetupSeries {
		st.record(req.series, at.Sub(req.at))
		// A leading server/discover refused is a client's probe before
		// it falls back to initialize (the Go SDK's), which is then the
		// session's setup: the refusal is measured but set nothing up.
		if !req.probe || info.Kind != jsonrpc.KindError {
			st.setUp()
		}
	} else {
		st.answered(req.series, req.at, at)
		if req.stream.seen() {
			st.streamed(req.series, &req.stream, req.at, at)
		}
	}
	tool := ""
	if req.tool {
		tool = req.series[len(req.series)-1][len("tools/call "):]
	}
	judgeAnswer(st, req.series, verdictOf(&info), frame, tool)
}

// forget drops a pending request, no longer in flight, and returns it.
func (m *meteredConn) forget(key string) (*sentReq, bool) {
	m.mu.Lock()
	req, ok := m.pending[key]
	delete(m.pending, key)
	m.mu.Unlock()
	if ok && req.series[0] != SetupSeries {
		m.r.st.flying(req.at, -1)
	}
	return req, ok
}

// Close counts the requests never answered (cancelled when the run was
// interrupted, failed with the reason when the server ended the
// connection, timeouts otherwise), then closes.
func (m *meteredConn) Close() error {
	m.mu.Lock()
	gone := m.lossErr != nil && len(m.pending) > 0
	m.mu.Unlock()
	if gone {
		m.drainAnswers()
	}
	m.mu.Lock()
	pending := m.pending
	m.pending = map[string]*sentReq{}
	lossErr := m.lossErr
	m.mu.Unlock()
	st := m.r.st
	for _, req := range pending {
		if req.series[0] != SetupSeries {
			st.flying(req.at, -1)
		}
		if m.r.work.Err() == nil && m.r.quit.Load() {
			st.unsend(req.series) // cut off at the run's bound: not measured
			continue
		}
		m.r.done(time.Now())
		switch {
		case m.r.work.Err() != nil:
			st.fail(req.series, ClassCancelled, detailInterrupted)
		case lossErr != nil:
			st.failErr(context.Background(), req.series, lossErr)
		default:
			st.fail(req.series, ClassTimeout, "never answered")
		}
	}
	return m.Conn.Close()
}

// drainAnswers measures the answers that a server wrote before it went
// away and that the transport still holds (a stdio server's last answers
// in its stdout pipe, when a send met its exit first), so that they count
// as answered; it stops at the transport's error, or after a second.
func (m *meteredConn) drainAnswers() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for {
		if _, err := m.Recv(ctx); err != nil {
			return
		}
	}
}

// paramsName returns params.name of a request, or "".
func paramsName(frame []byte) string {
	var p struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(frame, &p)
	return p.Params.Name
}

// claim counts the requests of a frame (members, info: its messages and
// their kind) against the run's request bound, and refuses them with
// errRunEnded once the run reached its bound (ending the run when this
// frame reaches it). The refusal waits for the end of the run (ctx): the
// session's requests in flight keep their connection until answered.
// Other messages always go.
func (m *meteredConn) claim(ctx context.Context, members [][]byte, info jsonrpc.Info) error {
	var n int64
	for _, f := range members {
		mi := info
		if len(members) > 1 || info.Kind == jsonrpc.KindBatch {
			mi = jsonrpc.Classify(f)
		}
		if mi.Kind == jsonrpc.KindRequest && !(mi.Method == "initialize" || mi.Method == "server/discover") {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if !m.r.stopping() && (m.r.o.requests == 0 || m.r.claims.Add(n) <= m.r.o.requests) {
		m.r.noteClaim(time.Now())
		return nil
	}
	m.end()
	<-ctx.Done()
	return errRunEnded
}
