package loadgen

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// TestRunTape amplifies a recorded session (a Go SDK client talking to the
// reference server over stdio: discovery, tool calls, progress, a tool
// error, a JSON-RPC error, a cancelled call) into 4 virtual sessions at
// full speed, and checks the metered counts: with the recorded session
// held in memory, and streamed from the tape file by each virtual session.
func TestRunTape(t *testing.T) {
	path := filepath.Join("..", "testdata", "analysis", "gosdk-refserver.jsonl.zst")
	for _, memory := range []int64{replay.DefaultMemory, 0} {
		t.Run(fmt.Sprintf("memory %d", memory), func(t *testing.T) {
			tp, err := replay.Open(path, memory)
			if err != nil {
				t.Fatal(err)
			}
			if tp.Sessions[0].Streamed() != (memory == 0) {
				t.Fatalf("streamed %v with a budget of %d bytes", tp.Sessions[0].Streamed(), memory)
			}
			checkRunTape(t, tp.Sessions)
		})
	}
}

func checkRunTape(t *testing.T, sessions []*replay.Session) {
	const n = 4
	var mu sync.Mutex
	var lives []Live
	rep, err := RunTape(context.Background(), stdioTarget(t), sessions, n, []replay.Option{replay.WithMaxSpeed()}, WithTimeout(10*time.Second),
		WithLive(10*time.Millisecond, func(l Live) { mu.Lock(); lives = append(lives, l); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	// the live figures: planned from the recording, in flight back to 0 once
	// every request was answered or dropped (the cancelled call)
	mu.Lock()
	if len(lives) == 0 {
		t.Error("no live figures")
	} else if l := lives[len(lives)-1]; l.Planned != 9*n || l.Requests != rep.Requests || l.Answered != rep.Answered || l.InFlight != 0 || l.Rate == 0 || l.Sessions != n {
		t.Errorf("last live figures %+v, want %d planned, %d sent, %d answered, none in flight, %d sessions", l, 9*n, rep.Requests, rep.Answered, n)
	}
	for _, l := range lives {
		if l.InFlight < 0 || l.InFlight > l.Requests-l.Answered {
			t.Errorf("live figures %+v: in flight out of range", l)
		}
	}
	mu.Unlock()
	t.Logf("requests %d answered %d errors %+v warnings %v", rep.Requests, rep.Answered, rep.Errors, rep.Warnings)
	for _, s := range rep.Series {
		t.Logf("%s %d", s.Name, s.Count)
	}
	if rep.Model != "replay" || rep.Sessions != n {
		t.Errorf("model %q sessions %d", rep.Model, rep.Sessions)
	}
	var sent int64
	for _, in := range rep.Intervals {
		sent += in.Requests
	}
	if len(rep.Intervals) == 0 || sent != rep.Requests {
		t.Errorf("%d intervals hold %d of %d requests", len(rep.Intervals), sent, rep.Requests)
	}
	for name, want := range map[string]int64{"tools/call echo": n, "tools/call add": n, "tools/call ask": 2 * n, "tools/list": n, SetupSeries: n} {
		if s := rep.Find(name); s == nil || s.Count != want {
			t.Errorf("series %q: %+v, want %d", name, s, want)
		}
	}
	if got := errorDetail(rep, ClassTool, "fail"); got != n {
		t.Errorf("tool errors of fail %d, want %d", got, n)
	}
	if got := errorCount(rep, ClassTimeout); got != 0 {
		t.Errorf("%d requests never answered (the cancelled call must not count)", got)
	}
	// every virtual session: server/discover (its setup, not counted as a
	// request) and 9 requests; the cancelled sleep is not measured
	if rep.Requests != 9*n || rep.Answered != 8*n || rep.Setups != n {
		t.Errorf("requests %d answered %d setups %d, want %d, %d and %d", rep.Requests, rep.Answered, rep.Setups, 9*n, 8*n, n)
	}
	if got := errorCount(rep, ClassJSONRPC); got < n {
		t.Errorf("JSON-RPC errors %d, want at least %d", got, n)
	}
}

// TestIsSetup: a recorded session's setup is its initialize, or its
// server/discover when that comes first; a later server/discover is an
// ordinary request.
func TestIsSetup(t *testing.T) {
	for _, tc := range []struct {
		method string
		first  bool
		want   bool
	}{
		{"initialize", true, true},
		{"initialize", false, true},
		{"server/discover", true, true},
		{"server/discover", false, false},
		{"tools/list", true, false},
		{"ping", false, false},
	} {
		if got := isSetup(tc.method, tc.first); got != tc.want {
			t.Errorf("isSetup(%q, %v) = %v, want %v", tc.method, tc.first, got, tc.want)
		}
	}
}

// echoConn is a transport.Conn that answers each request sent with the
// frame reply gives for its method (nil: no answer).
type echoConn struct {
	reply func(method string, id []byte) []byte
	in    chan transport.Incoming
}

func (c *echoConn) Send(_ context.Context, frame []byte, _ transport.SendOptions) (*transport.Exchange, error) {
	info := jsonrpc.Classify(frame)
	if info.Kind == jsonrpc.KindRequest {
		if f := c.reply(info.Method, info.ID.Raw); f != nil {
			c.in <- transport.Incoming{Frame: f}
		}
	}
	return nil, nil
}

func (c *echoConn) Recv(ctx context.Context) (transport.Incoming, error) {
	select {
	case in := <-c.in:
		return in, nil
	case <-ctx.Done():
		return transport.Incoming{}, ctx.Err()
	}
}

func (c *echoConn) Close() error { return nil }

// TestTapeSetupFallback: a leading server/discover the server refuses
// (a client probing before it falls back to initialize) is measured as a
// setup attempt but sets nothing up; the initialize that follows counts
// the session's one setup. A discover answered with a result is the setup.
func TestTapeSetupFallback(t *testing.T) {
	for _, tc := range []struct {
		name       string
		discover   string // the answer's members after the id
		initialize bool
		setups     int64
	}{
		{"refused, then initialize", `"error":{"code":-32601,"message":"no such method"}`, true, 1},
		{"answered", `"result":{"supportedVersions":["2026-07-28"]}`, false, 1},
		{"refused, no fallback", `"error":{"code":-32601,"message":"no such method"}`, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := &echoConn{in: make(chan transport.Incoming, 8), reply: func(method string, id []byte) []byte {
				switch method {
				case "server/discover":
					return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,` + tc.discover + `}`)
				case "initialize":
					return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{}}`)
				}
				return nil
			}}
			r := &runner{st: newStats()}
			m := &meteredConn{Conn: conn, r: r, pending: map[string]*sentReq{}}
			ctx := t.Context()
			frames := []string{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`}
			if tc.initialize {
				frames = append(frames, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`)
			}
			for _, f := range frames {
				if _, err := m.Send(ctx, []byte(f), transport.SendOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := m.Recv(ctx); err != nil {
					t.Fatal(err)
				}
			}
			snap := r.st.snap()
			if snap.Setups != tc.setups || snap.Sent != 0 {
				t.Errorf("setups %d, requests %d; want %d and 0", snap.Setups, snap.Sent, tc.setups)
			}
			if s := r.st.series[SetupSeries]; s == nil || s.TotalCount() != int64(len(frames)) {
				t.Errorf("setup series %v, want %d latencies", s, len(frames))
			}
		})
	}
}

// TestRunTapePipelinedOverHTTP: a stdio tape whose client sent its whole
// session before initialize was answered, amplified over Streamable HTTP:
// every virtual session is initialized before its later messages go, so
// no request meets "invalid during session initialization" (or a missing
// session), run after run.
func TestRunTapePipelinedOverHTTP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipelined.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"c2s", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{"c2s", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`},
		{"s2c", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`},
		{"s2c", `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`},
		{"s2c", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}`},
	} {
		w.Write(&tape.Record{Type: tape.TypeMessage, Time: int64(i+1) * 1000, Session: "1", Dir: tape.Direction(m[0]), Frame: []byte(m[1])})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := replay.Open(path, replay.DefaultMemory)
	if err != nil {
		t.Fatal(err)
	}
	target := Target{URL: refHTTP(t, refserver.HTTPConfig{})}
	const n = 4
	for run := range 10 {
		rep, err := RunTape(context.Background(), target, tp.Sessions, n, []replay.Option{replay.WithMaxSpeed()}, WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Answered != 2*n || len(rep.Errors) != 0 || len(rep.Warnings) != 0 {
			t.Fatalf("run %d: %d answered, errors %+v, warnings %v; want %d, none", run+1, rep.Answered, rep.Errors, rep.Warnings, 2*n)
		}
	}
}

// pingSession is a recorded session: initialize, then n pings every gap,
// each answered.
func pingSession(n int, gap time.Duration) *replay.Session {
	answer := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	s := &replay.Session{ID: "pings", Version: "2025-06-18",
		Server: []replay.ServerMsg{{Frame: []byte(answer), Kind: jsonrpc.KindResponse, IDKey: "0", Time: 1}}}
	step := func(frame string, at int64) {
		info := jsonrpc.Classify([]byte(frame))
		var deps []int
		if len(s.Steps) > 0 { // after the answer to initialize
			deps = []int{0}
		}
		s.Steps = append(s.Steps, replay.Step{Frame: []byte(frame), Kind: info.Kind, Method: info.Method, IDKey: info.ID.Key(), Time: at, Answers: -1, Deps: deps})
	}
	step(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 0)
	step(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 2)
	for i := 1; i <= n; i++ {
		at := 2 + int64(i)*int64(gap)
		step(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i), at)
		s.Server = append(s.Server, replay.ServerMsg{Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, i),
			Kind: jsonrpc.KindResponse, IDKey: fmt.Sprint(i), Time: at + 1})
	}
	return s
}

// TestRunTapeBatches: a recorded batch is sent as a batch, and the
// members of the batch answering it are measured; with replay.WithUnbatch
// its members are sent one by one (the fake server refuses them).
func TestRunTapeBatches(t *testing.T) {
	s := pingSession(0, 0)
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`
	members, err := jsonrpc.Split([]byte(batch))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range members {
		s.Steps = append(s.Steps, replay.Step{Frame: m, Kind: jsonrpc.KindRequest, Method: "ping", IDKey: fmt.Sprint(i + 1), Time: 10, Answers: -1, Deps: []int{0}, Batch: 1, BatchLen: 3})
		s.Server = append(s.Server, replay.ServerMsg{Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, i+1), Kind: jsonrpc.KindResponse, IDKey: fmt.Sprint(i + 1), Time: 11})
	}
	for _, tc := range []struct {
		name   string
		ropts  []replay.Option
		errors int64
	}{
		{"as a batch", nil, 0},
		{"unbatched", []replay.Option{replay.WithUnbatch()}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := RunTape(context.Background(), fakeTarget(t, "batch-only"), []*replay.Session{s}, 1,
				append(tc.ropts, replay.WithMaxSpeed()), WithTimeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != 3 || rep.Answered != 3 || errorCount(rep, ClassJSONRPC) != tc.errors || len(rep.Warnings) != 0 {
				t.Errorf("%d requests, %d answered, %d JSON-RPC errors, warnings %v; want 3, 3, %d, none",
					rep.Requests, rep.Answered, errorCount(rep, ClassJSONRPC), rep.Warnings, tc.errors)
			}
		})
	}
}

// TestRunTapeBounds: tape-driven load obeys WithDuration and WithRequests
// like every other workload (the recording alone would last 100 s), and
// the requests cut off at the bound are neither errors nor warnings.
//
// The duration case runs against an in-process HTTP server: the 0.5 s
// count from the run's start, so a stdio server's process start (which a
// loaded machine made take most of them) left no time for the pings.
func TestRunTapeBounds(t *testing.T) {
	httpTarget := func(t *testing.T) Target { return Target{URL: refHTTP(t, refserver.HTTPConfig{})} }
	cases := []struct {
		name   string
		target func(t *testing.T) Target
		ropts  []replay.Option
		opts   []Option
		check  func(t *testing.T, rep *Report)
	}{
		{"duration", httpTarget, nil, []Option{WithDuration(500 * time.Millisecond)}, func(t *testing.T, rep *Report) {
			if rep.Duration > 5*time.Second || rep.Requests < 2 || rep.Requests > 20 {
				t.Errorf("%d requests in %v, want about 5 in 0.5 s", rep.Requests, rep.Duration)
			}
		}},
		{"requests", stdioTarget, []replay.Option{replay.WithMaxSpeed()}, []Option{WithRequests(7)}, func(t *testing.T, rep *Report) {
			if rep.Requests != 7 {
				t.Errorf("%d requests, want 7", rep.Requests)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := RunTape(context.Background(), c.target(t), []*replay.Session{pingSession(1000, 100*time.Millisecond)}, 2, c.ropts,
				append([]Option{WithTimeout(10 * time.Second)}, c.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, rep)
			if rep.Answered != rep.Requests || rep.ErrorTotal != 0 || len(rep.Warnings) != 0 || rep.Failure != "" || rep.Interrupted {
				t.Errorf("answered %d of %d, errors %v, warnings %v, failure %q", rep.Answered, rep.Requests, rep.Errors, rep.Warnings, rep.Failure)
			}
		})
	}
}

// TestRunTapeServerExit: a stdio server that exits during a tape-driven
// run is counted with its status, and its unanswered requests fail with
// it rather than as timeouts.
func TestRunTapeServerExit(t *testing.T) {
	rep, err := RunTape(context.Background(), fakeTarget(t, "exit-after:3"), []*replay.Session{pingSession(10, 0)}, 1,
		[]replay.Option{replay.WithMaxSpeed()}, WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.ServerExits) != 1 || rep.ServerExits[0].Class != "status 3" || rep.ServerExits[0].Count != 1 {
		t.Errorf("server exits %v, want one with status 3", rep.ServerExits)
	}
	failed := errorDetail(rep, ClassTransport, "server exited (status 3)")
	if rep.Answered != 3 || failed == 0 || failed+rep.Answered != rep.Requests || rep.Duration > 30*time.Second {
		t.Errorf("answered %d of %d in %v, errors %v", rep.Answered, rep.Requests, rep.Duration, rep.Errors)
	}
}
