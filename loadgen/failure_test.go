package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
)

// TestStdioServerExit: a stdio server that exits mid-run fails the
// requests in flight at once with its exit status, and under the default
// policy ends the run (Failure), under OnExitRestart is started again.
// The timeout is long: waiting for it would fail the time bound.
func TestStdioServerExit(t *testing.T) {
	const why = "server exited (status 3)"
	cases := []struct {
		name    string
		opts    []Option
		restart bool
	}{
		{"stop", nil, false},
		{"restart", []Option{WithOnExit(OnExitRestart)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			rep, err := Run(context.Background(), fakeTarget(t, "exit-after:5"), mustCalls(t, "tools/list"),
				append([]Option{WithInFlight(4), WithDuration(2 * time.Second), WithTimeout(time.Minute)}, c.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Fatalf("run took %v: requests in flight waited for the timeout", took)
			}
			failed := errorDetail(rep, ClassTransport, why)
			if failed < 1 || failed > 4*rep.Setups || rep.RequestErrors != failed || rep.Answered+failed != rep.Requests {
				t.Errorf("sent %d answered %d errors %v: want the requests in flight failed with %q", rep.Requests, rep.Answered, rep.Errors, why)
			}
			exits := int64(0)
			for _, e := range rep.ServerExits {
				if e.Class != "status 3" {
					t.Errorf("server exits %v, want status 3", rep.ServerExits)
				}
				exits += e.Count
			}
			if c.restart {
				if rep.Failure != "" || rep.Setups < 2 || exits < rep.Setups-1 || rep.Duration < 2*time.Second {
					t.Errorf("failure %q setups %d exits %d in %v: want restarts until the end", rep.Failure, rep.Setups, exits, rep.Duration)
				}
				return
			}
			if !strings.Contains(rep.Failure, "status 3") || rep.Setups != 1 || exits != 1 || rep.Answered != 5 || rep.Duration > 10*time.Second {
				t.Errorf("failure %q setups %d exits %d answered %d in %v: want the run stopped after 5 answers", rep.Failure, rep.Setups, exits, rep.Answered, rep.Duration)
			}
			var b strings.Builder
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"FAILED", "transport: " + why, "exited during the run: 1 with status 3"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("text report lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}

// TestSetupTimeout: session setup obeys WithTimeout (a server that never
// answers initialize), and no session set up is the run's failure.
func TestSetupTimeout(t *testing.T) {
	start := time.Now()
	rep, err := Run(context.Background(), fakeTarget(t, "mute-init"), mustCalls(t, "ping"),
		WithSessions(2), WithRequests(5), WithTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("setup took %v with a 300ms timeout", took)
	}
	s := rep.Find(SetupSeries)
	if rep.Setups != 0 || s == nil || s.Requests != 2 || s.Errors != 2 || errorCount(rep, ClassTimeout) != 2 ||
		rep.Failure != "no session could be set up: timeout" {
		t.Errorf("setups %d series %+v errors %v failure %q", rep.Setups, s, rep.Errors, rep.Failure)
	}
}

// TestSetupTimeoutHandshake: a dial that waits on the server obeys
// WithTimeout too, in a run of calls and in a tape-driven run: a server
// that takes the GET of a legacy SSE stream or of a WebSocket upgrade and
// never answers it (the run waited for ever; for SSE, Ctrl-C did not end
// it either).
func TestSetupTimeoutHandshake(t *testing.T) {
	addr := peertest.Mute(t)
	tp, err := replay.Open(filepath.Join("..", "testdata", "analysis", "gosdk-refserver.jsonl.zst"), replay.DefaultMemory)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]func(Target) (*Report, error){
		"calls": func(target Target) (*Report, error) {
			return Run(context.Background(), target, mustCalls(t, "ping"), WithRequests(1), WithTimeout(300*time.Millisecond))
		},
		"tape": func(target Target) (*Report, error) {
			return RunTape(context.Background(), target, tp.Sessions[:1], 1, []replay.Option{replay.WithMaxSpeed()}, WithTimeout(300*time.Millisecond))
		},
	}
	for name, run := range runs {
		for _, target := range []Target{{SSE: "http://" + addr + "/sse"}, {URL: "ws://" + addr + "/ws"}} {
			start := time.Now()
			rep, err := run(target)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("%s %+v: setup took %v with a 300ms timeout", name, target, took)
			}
			if rep.Setups != 0 || errorCount(rep, ClassTimeout) != 1 || rep.Failure != "no session could be set up: timeout" {
				t.Errorf("%s %+v: setups %d errors %v failure %q: want the setup timed out", name, target, rep.Setups, rep.Errors, rep.Failure)
			}
		}
	}
}

// TestNoSessionFailure: when no session can be set up the report says
// why: nothing listening, an HTTP error status with the first line of its
// body, a missing executable.
func TestNoSessionFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no MCP endpoint here\nsecond line", http.StatusNotFound)
	}))
	defer notFound.Close()
	cases := []struct {
		name   string
		target Target
		want   string
	}{
		{"dead port", Target{URL: dead}, "no session could be set up: transport: connection refused"},
		{"404", Target{URL: notFound.URL + "/nope"}, "no session could be set up: http status: 404 Not Found: no MCP endpoint here"},
		{"missing binary", Target{Command: []string{"/nonexistent/mcp-server"}}, "no session could be set up: transport: "},
		{"not in PATH", Target{Command: []string{"mcptape-no-such-server"}}, "no session could be set up: transport: executable not found: mcptape-no-such-server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Run(context.Background(), c.target, mustCalls(t, "ping"), WithSessions(2), WithDuration(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(rep.Failure, c.want) || rep.Setups != 0 {
				t.Errorf("failure %q, want %q", rep.Failure, c.want)
			}
			if s := rep.Find(SetupSeries); s == nil || s.Requests != 2 || s.Errors != 2 {
				t.Errorf("setup series %+v, want 2 of 2 failed", s)
			}
		})
	}
}

// fakeHTTP is a minimal Streamable HTTP MCP server (JSON answers, no
// session id): initialize succeeds, tools/call of "broken" answers
// isError, method "boom" a JSON-RPC error, method "down" HTTP 503.
func fakeHTTP(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"method":"refuse"`)) { // a batch too
			http.Error(w, "no such method", http.StatusBadRequest)
			return
		}
		info := jsonrpc.Classify(body)
		if info.Kind != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var frame string
		switch {
		case info.Method == "initialize":
			frame = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`
		case info.Method == "cut":
			// an event stream that ends without the answer (the server died)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			return
		case info.Method == "down":
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		case info.Method == "boom":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad params\nmore"}}`, info.ID.Raw)
			return
		case info.Method == "tools/call" && strings.Contains(string(body), `"broken"`):
			frame = `{"content":[{"type":"text","text":"no"}],"isError":true}`
		default:
			frame = `{}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, info.ID.Raw, frame)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestErrorReasons: errors are listed by kind and message, a series'
// error share is over its own requests (all failed: 100 %, not diluted
// by the setups), and session setup is a series of its own. The session
// backs off after each 503 (TestBacksOff), 50 ms doubling to 1 s: 5
// requests of "down" wait about 0.6 s where 20 waited 12 s.
func TestErrorReasons(t *testing.T) {
	cases := []struct {
		call, series, class, detail string
		n                           int64
		answered                    bool // with an error; else no answer
	}{
		{"boom", "boom", ClassJSONRPC, "-32602 bad params", 20, true},
		{"tools/call broken", "tools/call broken", ClassTool, "broken", 20, true},
		{"down", "down", ClassStatus, "503 Service Unavailable: maintenance", 5, false},
	}
	for _, c := range cases {
		t.Run(c.call, func(t *testing.T) {
			n := c.n
			rep, err := Run(context.Background(), Target{URL: fakeHTTP(t)}, mustCalls(t, c.call), WithRequests(n))
			if err != nil {
				t.Fatal(err)
			}
			if got := errorDetail(rep, c.class, c.detail); got != n || rep.ErrorTotal != n || rep.RequestErrors != n {
				t.Fatalf("errors %v, want %d %s: %s", rep.Errors, n, c.class, c.detail)
			}
			s := rep.Find(c.series)
			if s == nil || s.Requests != n || s.Errors != n || s.ErrorRatio() != 1 || rep.ErrorRatio() != 1 {
				t.Errorf("series %+v, run ratio %v: want %d of %d failed, 100%%", s, rep.ErrorRatio(), n, n)
			}
			if setup := rep.Find(SetupSeries); setup == nil || setup.Requests != 1 || setup.Errors != 0 || setup.Count != 1 {
				t.Errorf("setup series %+v", setup)
			}
			var b strings.Builder
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			// each request counted once, as what became of it
			count, other := fmt.Sprintf("%d error answers (100.00%%), 0 no answer (0.00%%)", n), rep.ErrorAnswers
			if !c.answered {
				count, other = fmt.Sprintf("0 error answers (0.00%%), %d no answer (100.00%%)", n), rep.NoAnswer
			}
			if other != n || rep.OK != 0 || rep.ErrorAnswers+rep.NoAnswer != n || rep.Answered != rep.ErrorAnswers {
				t.Errorf("ok %d, error answers %d, no answer %d, answered %d", rep.OK, rep.ErrorAnswers, rep.NoAnswer, rep.Answered)
			}
			for _, want := range []string{fmt.Sprintf("%d sent (", n), ": 0 ok (0.00%, 0.0/s), " + count, fmt.Sprintf("%d not ok (100.00%%)", n), fmt.Sprintf("%d (100.0%%)", n), c.class + ": " + c.detail} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("text report lacks %q:\n%s", want, b.String())
				}
			}
			back := jsonRoundTrip(t, rep)
			if bs := back.Find(c.series); bs == nil || bs.Errors != n || bs.Requests != n || back.RequestErrors != n {
				t.Errorf("JSON report series %+v", bs)
			}
			merged, err := Merge(rep, back)
			if err != nil {
				t.Fatal(err)
			}
			if ms := merged.Find(c.series); ms == nil || ms.Errors != 2*n || ms.Requests != 2*n || merged.ErrorRatio() != 1 {
				t.Errorf("merged series %+v ratio %v", ms, merged.ErrorRatio())
			}
			if back.ErrorAnswers != rep.ErrorAnswers || back.NoAnswer != rep.NoAnswer || merged.ErrorAnswers != 2*rep.ErrorAnswers ||
				merged.NoAnswer != 2*rep.NoAnswer || merged.OK != 0 {
				t.Errorf("JSON: %d error answers, %d no answer; merged %d, %d, %d ok", back.ErrorAnswers, back.NoAnswer, merged.ErrorAnswers, merged.NoAnswer, merged.OK)
			}
			old := readOldReport(t, rep) // written before the three counts were
			if old.ErrorAnswers != rep.ErrorAnswers || old.NoAnswer != rep.NoAnswer || old.OK != rep.OK {
				t.Errorf("an older report: %d ok, %d error answers, %d no answer; want %d, %d, %d",
					old.OK, old.ErrorAnswers, old.NoAnswer, rep.OK, rep.ErrorAnswers, rep.NoAnswer)
			}
		})
	}
}

// TestErrorKeysBounded: a server putting a new message in every error
// cannot grow the error list without bound.
func TestErrorKeysBounded(t *testing.T) {
	st := newStats()
	for i := range 3 * maxErrorKeys {
		st.fail(nil, ClassJSONRPC, fmt.Sprint(i))
	}
	if len(st.errors) != maxErrorKeys+1 || st.errors[errKey{ClassJSONRPC, detailOther}] != 2*maxErrorKeys {
		t.Errorf("%d error keys, %d other", len(st.errors), st.errors[errKey{ClassJSONRPC, detailOther}])
	}
}

// flappingServer serves the reference server on addr, down from down for
// downFor, then up again on the same address (a new server: the sessions
// must be set up again); never again when downFor is negative.
func flappingServer(t *testing.T, down, downFor time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	serve := func(ln net.Listener) *httptest.Server {
		s, err := refserver.New()
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewUnstartedServer(refserver.HTTPHandler(s, refserver.HTTPConfig{JSONResponse: true}))
		ts.Listener.Close()
		ts.Listener = ln
		ts.Start()
		return ts
	}
	first := serve(ln)
	done := make(chan struct{})
	var second *httptest.Server
	go func() {
		defer close(done)
		time.Sleep(down)
		first.CloseClientConnections()
		first.Close()
		if downFor < 0 {
			return
		}
		time.Sleep(downFor)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		second = serve(ln)
	}()
	t.Cleanup(func() {
		<-done
		if second != nil {
			second.Close()
		}
	})
	return "http://" + addr + refserver.Path
}

// TestServerDownBacksOff: an HTTP server down for a second mid-run is
// tried again with a capped exponential back-off, not in a tight loop,
// and the report says how long it was down and how many attempts failed.
func TestServerDownBacksOff(t *testing.T) {
	t.Parallel() // waits on the server, sleeps and back-offs; no other test's state
	const downFor = time.Second
	url := flappingServer(t, 300*time.Millisecond, downFor)
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, "ping"), WithSessions(2), WithDuration(2500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Outage
	if o == nil {
		t.Fatalf("no outage in the report; errors %v", rep.Errors)
	}
	transportErrs := errorCount(rep, ClassTransport)
	// Back-off from 50 ms doubling to 1 s: about 5 attempts per session in
	// a second, 2 sessions; a tight loop makes thousands.
	if transportErrs < 2 || transportErrs > 40 || o.Attempts != transportErrs {
		t.Errorf("%d transport errors, %d attempts while down: want a few, backed off (errors %v)", transportErrs, o.Attempts, rep.Errors)
	}
	// One outage; a keep-alive connection to the old server, found dead
	// just after the new one came up, may open a second short one.
	if o.Periods < 1 || o.Periods > 2 || o.DownAtEnd || o.Down < downFor/2 || o.Down > downFor+2*BackoffMax {
		t.Errorf("outage %+v, want about %v, over by the end", o, downFor)
	}
	if rep.Failure != "" || rep.Answered == 0 || rep.Setups < 3 {
		t.Errorf("failure %q answered %d setups %d: want the sessions set up again after the outage", rep.Failure, rep.Answered, rep.Setups)
	}
}

// TestServerDownAtEnd: a server that dies and stays down fails the run.
func TestServerDownAtEnd(t *testing.T) {
	t.Parallel() // waits on the server, sleeps and back-offs; no other test's state
	url := flappingServer(t, 300*time.Millisecond, -1)
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, "ping"), WithSessions(2), WithDuration(2500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if o := rep.Outage; o == nil || !o.DownAtEnd || !strings.HasPrefix(rep.Failure, "the server was unreachable for the last ") {
		t.Errorf("outage %+v failure %q", rep.Outage, rep.Failure)
	}
}

// TestClientErrorNoBackoff: a server that refuses every request with 400
// at once gets the run's requests at once, batched or not: a 4xx is the
// answer to a request, counted as an error, not a sign the server is
// down (with a back-off, 40 requests on one session took seconds).
func TestClientErrorNoBackoff(t *testing.T) {
	url := fakeHTTP(t)
	for _, batch := range []int{1, 4} {
		t.Run(fmt.Sprint("batch ", batch), func(t *testing.T) {
			const n = 40
			start := time.Now()
			rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, "refuse"),
				WithSessions(1), WithRequests(n), WithBatch(batch), WithTimeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got := errorCount(rep, ClassStatus); got != n || rep.Outage != nil {
				t.Fatalf("%d status errors, outage %+v, want %d and none (errors %v)", got, rep.Outage, n, rep.Errors)
			}
			// a back-off makes it n-1 waits of 25 ms to 1 s: over 10 s
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("%d requests refused at once took %v: backed off", n, el)
			}
		})
	}
}

// TestBacksOff: which failures call for a back-off.
func TestBacksOff(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{&transport.StatusError{Status: 400}, false},
		{&transport.StatusError{Status: 404}, false},
		{&transport.StatusError{Status: 500}, false},
		{&transport.StatusError{Status: 404, Expired: true}, false},
		{&transport.StatusError{Status: 429}, true},
		{&transport.StatusError{Status: 502}, true},
		{fmt.Errorf("post: %w", &transport.StatusError{Status: 503}), true},
		{&transport.StatusError{Status: 504}, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: io.ErrUnexpectedEOF}, true},
		{context.DeadlineExceeded, false},
	}
	for _, c := range cases {
		if got := backsOff(c.err); got != c.want {
			t.Errorf("backsOff(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	for n := int64(1); n < 100; n++ {
		want := min(BackoffMin<<min(n-1, 20), BackoffMax)
		for range 20 {
			if d := backoff(n); d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
}

// TestReportJSONFailure: the failure, exits and outage are in the JSON
// report.
func TestReportJSONFailure(t *testing.T) {
	rep := &Report{Format: ReportFormat, Failure: "no session could be set up: transport: connection refused",
		ServerExits: []ErrorCount{{Class: "status 1", Count: 2}}, Outage: &OutageReport{Periods: 1, Down: time.Second, Attempts: 3}}
	var b strings.Builder
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(b.String()), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"failure", "server_exits", "outage"} {
		if m[k] == nil {
			t.Errorf("JSON report lacks %q: %s", k, b.String())
		}
	}
}

// TestStdioBatchesDropped: a stdio server that silently ignores batches
// (and answers the ping after each) costs BatchGrace per batch, not the
// timeout; each batch is reported "no answer to batch" and the report
// says no batch was answered at all.
func TestStdioBatchesDropped(t *testing.T) {
	start := time.Now()
	rep, err := Run(context.Background(), fakeTarget(t, "drop-batches"), mustCalls(t, "tools/list"),
		WithRequests(9), WithBatch(3), WithTimeout(time.Minute), WithNotice(func(string) {}))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*BatchGrace+10*time.Second {
		t.Errorf("3 dropped batches took %v", took)
	}
	if rep.Batch == nil || outcome(rep.Batch, BatchDropped) != 3 || len(rep.Batch.Outcomes) != 1 || rep.Batch.Verdict() != "no batch answered at all" {
		t.Fatalf("batch report %+v", rep.Batch)
	}
	if n := errorDetail(rep, ClassDropped, detailNoBatch); n != 9 || rep.ErrorTotal != 9 || rep.Answered != 0 {
		t.Errorf("errors %v answered %d, want 9 members %q", rep.Errors, rep.Answered, detailNoBatch)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no batch answered at all", "3 no answer to batch"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestBatchVerdict(t *testing.T) {
	cases := []struct {
		outcomes []ErrorCount
		want     string
	}{
		{nil, "no batch sent"},
		{[]ErrorCount{{Class: BatchAccepted, Count: 3}}, "every batch answered"},
		{[]ErrorCount{{Class: BatchDropped, Count: 3}, {Class: BatchHung, Count: 1}}, "no batch answered at all"},
		{[]ErrorCount{{Class: BatchAccepted, Count: 1}, {Class: BatchPartial, Count: 1}, {Class: BatchDropped, Count: 2}}, "1 of 4 batches answered in full"},
	}
	for _, c := range cases {
		if got := (&BatchReport{Outcomes: c.outcomes}).Verdict(); got != c.want {
			t.Errorf("%v: %q, want %q", c.outcomes, got, c.want)
		}
	}
}

// TestStreamEndsUnanswered: an HTTP answer stream that ends without the
// answer fails its request at once, not at the timeout.
func TestStreamEndsUnanswered(t *testing.T) {
	t.Parallel() // waits on the server, sleeps and back-offs; no other test's state
	start := time.Now()
	rep, err := Run(context.Background(), Target{URL: fakeHTTP(t)}, mustCalls(t, "cut"), WithRequests(3), WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*answerGrace+10*time.Second {
		t.Errorf("3 unanswered requests took %v", took)
	}
	if n := errorDetail(rep, ClassTransport, errNoAnswer.Error()); n != 3 || rep.ErrorTotal != 3 {
		t.Errorf("errors %v, want 3 %q", rep.Errors, errNoAnswer)
	}
}

func TestDur3(t *testing.T) {
	for d, want := range map[time.Duration]string{999600 * time.Microsecond: "1s", 999 * time.Millisecond: "999ms",
		999600 * time.Nanosecond: "1ms", 1500 * time.Nanosecond: "1.5µs", 999: "999ns",
		// long latencies (a long --timeout) in plain seconds, not 1.23e+03s
		123456 * time.Millisecond: "123s", 1234567 * time.Millisecond: "1235s", 999500 * time.Millisecond: "1000s"} {
		if got := dur3(d); got != want {
			t.Errorf("dur3(%v) = %q, want %q", d, got, want)
		}
	}
}
