package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
)

// RunTape is tape-driven load: n virtual sessions, each replaying one of
// the recorded sessions (taken in turn), all at once, through the replayer
// (identifiers rewritten, server requests answered from the recording,
// pacing by replay options such as replay.WithSpeed). Every connection is
// metered: each request's latency goes to the series of its method and
// tool, each session's setup (initialize, or a leading server/discover)
// to SetupSeries, and errors are counted by class as in Run. A request the
// recording cancels (notifications/cancelled) is no longer measured, and
// its answer, if any, is ignored. Of Run's options, WithTimeout,
// WithHeader, WithMaxConns, WithHTTPClient, WithLive and WithHlog apply.
func RunTape(ctx context.Context, target Target, sessions []*replay.Session, n int, ropts []replay.Option, opts ...Option) (*Report, error) {
	if err := target.check(); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if len(sessions) == 0 || n < 1 {
		return nil, errors.New("loadgen: tape load needs recorded sessions and at least one virtual session")
	}
	o, err := newOptions(append([]Option{WithRequests(1)}, opts...))
	if err != nil {
		return nil, err
	}
	// the recording bounds the run: the live figures show its requests
	// (setups excluded, as in Report.Requests) as the planned count
	o.sessions, o.duration = n, 0
	o.requests = 0
	for i := range n {
		o.requests += plannedRequests(sessions[i%len(sessions)])
	}
	if o.client == nil && target.Command == nil {
		c, err := sharedClient(o)
		if err != nil {
			return nil, err
		}
		defer c.CloseIdleConnections()
		o.client = c
	}
	r := &runner{o: o, target: target, st: newStats(), work: ctx}
	virtual := make([]*replay.Session, n)
	for i := range virtual {
		virtual[i] = sessions[i%len(sessions)]
	}
	dial := func(ctx context.Context, s *replay.Session) (transport.Conn, error) {
		topts := o.transportOptions(target)
		var c transport.Conn
		var err error
		switch {
		case target.URL != "":
			c, err = transport.DialHTTP(ctx, target.URL, append(topts[:len(topts):len(topts)], replay.HTTPOptions(s)...)...)
		case target.SSE != "":
			c, err = transport.DialLegacySSE(ctx, target.SSE, topts...)
		default:
			c, err = transport.DialStdio(ctx, target.Command)
		}
		if err != nil {
			r.st.fail(ClassConnect, "dial")
			return nil, err
		}
		return &meteredConn{Conn: c, r: r, pending: map[string]sentReq{}}, nil
	}
	r.start = time.Now()
	stopLive := r.live()
	rr, err := replay.Run(ctx, virtual, dial, append(ropts, replay.WithConcurrency(n), replay.WithTimeout(o.timeout))...)
	end := time.Now()
	stopLive()
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	rep := r.report(end)
	rep.Model, rep.Protocol = "replay", sessions[0].Version
	for _, s := range rr.Sessions {
		if s != nil && s.Error != "" {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("session %s: %s", s.Session, s.Error))
		}
	}
	return rep, nil
}

// plannedRequests counts the requests a replay of s sends, its setup
// excluded (see isSetup).
func plannedRequests(s *replay.Session) int64 {
	n := int64(s.Requests - s.Initializes)
	if s.FirstRequest == "server/discover" {
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
	probe  bool // a session's leading server/discover
}

// meteredConn measures the requests that go through a connection.
type meteredConn struct {
	transport.Conn
	r       *runner
	mu      sync.Mutex
	pending map[string]sentReq // live id key -> request
	sentAny bool               // a request went out on the connection
}

// Send notes every request of frame, then sends it.
func (m *meteredConn) Send(ctx context.Context, frame []byte, opt transport.SendOptions) (*transport.Exchange, error) {
	info := jsonrpc.Classify(frame)
	members := [][]byte{frame}
	if info.Kind == jsonrpc.KindBatch {
		members, _ = jsonrpc.Split(frame)
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
		m.pending[key] = sentReq{at: now, series: series, tool: mi.Method == "tools/call", probe: setup && mi.Method == "server/discover"}
		m.mu.Unlock()
		if !setup {
			st := m.r.st
			st.mu.Lock()
			st.sent++
			st.inflt++
			st.mu.Unlock()
		}
	}
	ex, err := m.Conn.Send(ctx, frame, opt)
	if err != nil && len(keys) > 0 {
		for _, k := range keys {
			m.forget(k)
		}
		countError(m.r, ctx, err)
	}
	return ex, err
}

// Recv measures each response as it is taken.
func (m *meteredConn) Recv(ctx context.Context) (transport.Incoming, error) {
	in, err := m.Conn.Recv(ctx)
	if err != nil {
		return in, err
	}
	info := jsonrpc.Classify(in.Frame)
	if info.Kind != jsonrpc.KindResponse && info.Kind != jsonrpc.KindError {
		return in, nil
	}
	m.mu.Lock()
	req, ok := m.pending[info.ID.Key()]
	delete(m.pending, info.ID.Key())
	m.mu.Unlock()
	if !ok {
		return in, nil
	}
	st := m.r.st
	st.record(req.series, in.Time.Sub(req.at))
	if req.series[0] == SetupSeries {
		// A leading server/discover refused is a client's probe before
		// it falls back to initialize (the Go SDK's), which is then the
		// session's setup: the refusal is measured but set nothing up.
		if !req.probe || info.Kind != jsonrpc.KindError {
			st.add(&st.setups, 1)
		}
	} else {
		st.mu.Lock()
		st.done++
		st.inflt--
		st.mu.Unlock()
	}
	switch {
	case info.Violations != 0:
		st.fail(ClassProtocol, info.Violations.String())
	case info.Kind == jsonrpc.KindError:
		st.fail(ClassJSONRPC, strconv.FormatInt(info.ErrorCode, 10))
	case req.tool && isToolError(in.Frame):
		tool := req.series[len(req.series)-1]
		st.fail(ClassTool, tool[len("tools/call "):])
	}
	return in, nil
}

// forget drops a pending request, no longer in flight.
func (m *meteredConn) forget(key string) {
	m.mu.Lock()
	req, ok := m.pending[key]
	delete(m.pending, key)
	m.mu.Unlock()
	if ok && req.series[0] != SetupSeries {
		m.r.st.add(&m.r.st.inflt, -1)
	}
}

// Close counts the requests never answered, then closes.
func (m *meteredConn) Close() error {
	m.mu.Lock()
	n := len(m.pending)
	var inflight int64
	for _, req := range m.pending {
		if req.series[0] != SetupSeries {
			inflight++
		}
	}
	m.pending = map[string]sentReq{}
	m.mu.Unlock()
	m.r.st.add(&m.r.st.inflt, -inflight)
	if n > 0 && m.r.work.Err() == nil {
		for range n {
			m.r.st.fail(ClassTimeout, "never answered")
		}
	}
	return m.Conn.Close()
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

// countError counts why a send failed, as session.countSendError does for
// the sessions of Run.
func countError(r *runner, ctx context.Context, err error) {
	var se *transport.StatusError
	switch {
	case errors.Is(err, transport.ErrSessionExpired):
		r.st.fail(ClassExpired, "")
	case errors.As(err, &se):
		r.st.fail(ClassStatus, strconv.Itoa(se.Status))
	case r.work.Err() != nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.st.fail(ClassTimeout, "")
	default:
		r.st.fail(ClassConnect, "")
	}
}
