package check

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// fixture is a tape of testdata/analysis: recorded from real peers
// (everything-*, gosdk-*; see analysis/inspect_peers_test.go) or hand-made
// (cut, violations).
func fixture(name string) string {
	return filepath.Join("..", "testdata", "analysis", name+".jsonl.zst")
}

// fired lists "SIGNAL" of the failed (or, with notes, the fired but
// unselected) cases of r, deduplicated and sorted.
func fired(r *Result, notes bool) []string {
	var out []string
	for _, c := range r.Cases {
		if (notes && c.Fired && !c.Selected) || (!notes && c.Failed()) {
			if !slices.Contains(out, c.Name) {
				out = append(out, c.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestRunSignals(t *testing.T) {
	tests := []struct {
		name   string
		tapes  []string
		opts   []Option
		failed []string // names of the failed cases
		notes  []string // names of the fired unselected signals
	}{
		{name: "clean real session", tapes: []string{"everything-stdio"}},
		{name: "refserver: errors are notes by default", tapes: []string{"gosdk-refserver"},
			notes: []string{SignalCancelled, SignalError, SignalToolError}},
		{name: "refserver: fail on all", tapes: []string{"gosdk-refserver"}, opts: []Option{WithFailOn(Signals...)},
			failed: []string{SignalCancelled, SignalError, SignalToolError}},
		{name: "slow", tapes: []string{"gosdk-refserver"}, opts: []Option{WithFailOn(SignalSlow), WithSlow(time.Millisecond)},
			failed: []string{SignalSlow}, notes: []string{SignalCancelled, SignalError, SignalToolError}},
		{name: "cut and broken tape", tapes: []string{"cut"},
			failed: []string{SignalIncomplete, SignalUnanswered, SignalViolation}, notes: []string{SignalDeprecated, SignalError}},
		{name: "fail on none", tapes: []string{"cut"}, opts: []Option{WithFailOn()},
			notes: []string{SignalDeprecated, SignalError, SignalIncomplete, SignalUnanswered, SignalViolation}},
		{name: "assertions hold", tapes: []string{"gosdk-refserver"}, opts: []Option{WithFailOn(),
			WithExpectTool("echo"), WithForbidTool("delete"), WithMaxDuration("1h"), WithMaxDuration("tools/call echo:1h"),
			WithThreshold("tools/call:count>=5"), WithThreshold("tools/call sleep:p99<1h"), WithThreshold("errors<50%")},
			notes: []string{SignalCancelled, SignalError, SignalToolError}},
		{name: "assertions broken", tapes: []string{"gosdk-refserver"}, opts: []Option{WithFailOn(),
			WithExpectTool("nope"), WithForbidTool("fail"), WithMaxDuration("1ms"), WithMaxDuration("tools/call sleep:1ms"),
			WithMaxDuration("nosuch:1s"), WithThreshold("tools/call sleep:p99<1ms"), WithThreshold("errors<1"),
			WithThreshold("errors<1%")},
			failed: []string{"expect-tool nope", "forbid-tool fail", "max-duration 1ms", "max-duration nosuch:1s",
				"max-duration tools/call sleep:1ms", "threshold errors<1", "threshold errors<1%", "threshold tools/call sleep:p99<1ms"},
			notes: []string{SignalCancelled, SignalError, SignalToolError}},
		{name: "several tapes are one run", tapes: []string{"violations", "everything-stdio"}, opts: []Option{WithFailOn(), WithExpectTool("echo")},
			notes: []string{SignalCancelled, SignalDeprecated, SignalError, SignalUnanswered, SignalViolation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var paths []string
			for _, n := range tt.tapes {
				paths = append(paths, fixture(n))
			}
			res, err := Run(context.Background(), paths, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) != 0 {
				t.Fatalf("errors %+v", res.Errors)
			}
			if got := fired(res, false); !slices.Equal(got, tt.failed) {
				t.Errorf("failed %q, want %q", got, tt.failed)
			}
			if got := fired(res, true); !slices.Equal(got, tt.notes) {
				t.Errorf("notes %q, want %q", got, tt.notes)
			}
			if res.Failed() != (len(tt.failed) > 0) {
				t.Errorf("Failed() = %v", res.Failed())
			}
		})
	}
}

// TestRunErrorShare: "errors<F%" measures the tape's failed requests (a
// JSON-RPC error and an isError result) over its requests (8 answered, 1
// cancelled), as load measures its own.
func TestRunErrorShare(t *testing.T) {
	tests := []struct {
		spec, msg string // msg "" when the threshold holds
	}{
		{"errors<1%", "measured 22.2%"},
		{"errors<=22%", "measured 22.2%"},
		{"errors<23%", ""},
		{"errors>=22%", ""},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			res, err := Run(context.Background(), []string{fixture("gosdk-refserver")}, WithFailOn(), WithThreshold(tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Cases {
				if c.Name == "threshold "+tt.spec {
					if c.Message != tt.msg || c.Fired != (tt.msg != "") {
						t.Errorf("fired %v, message %q, want %q", c.Fired, c.Message, tt.msg)
					}
					// JSON keeps the exact share: 2 failed of 9
					if tt.msg != "" && (c.Measured == nil || *c.Measured != 2.0/9) {
						t.Errorf("measured %v, want %v", c.Measured, 2.0/9)
					}
					return
				}
			}
			t.Fatalf("no case for %s in %+v", tt.spec, res.Cases)
		})
	}
}

// TestRunErrorShareUnansweredServerRequests: "errors<F%" divides the
// client's failed requests by the client's requests: the server's requests
// the client never answered are in neither. One failed call of three
// requests (initialize, two calls) beside two unanswered sampling requests
// measured 20% (1 of 5), not 33%.
func TestRunErrorShareUnansweredServerRequests(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	path := writeRecords(t, "stdio", tapetest.Messages("1", start,
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":100,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`,
		`< {"jsonrpc":"2.0","id":101,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`,
		`< {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)...)
	res, err := Run(context.Background(), []string{path}, WithFailOn(), WithThreshold("errors<30%"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cases {
		if c.Name == "threshold errors<30%" {
			if !c.Fired || c.Measured == nil || *c.Measured != 1.0/3 {
				t.Errorf("%s: fired %v, message %q, measured %v; want fired, 1/3", c.Name, c.Fired, c.Message, c.Measured)
			}
			return
		}
	}
	t.Errorf("no threshold case in %+v", res.Cases)
}

// TestRunErrorShareClientRequests: "errors<F%" measures the client's
// requests, as load does: the errors the client answered the server's own
// requests with (roots/list refused by a client that has no roots) are
// not failed requests of the tape. Three of them beside one failed call
// of two measured 100% (3 errors of 2 requests, capped), not 50%.
func TestRunErrorShareClientRequests(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	path := writeRecords(t, "stdio", tapetest.Messages("1", start,
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":100,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":100,"error":{"code":-32601,"message":"Method not found"}}`,
		`< {"jsonrpc":"2.0","id":101,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":101,"error":{"code":-32601,"message":"Method not found"}}`,
		`< {"jsonrpc":"2.0","id":102,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":102,"error":{"code":-32601,"message":"Method not found"}}`,
		`< {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}`,
	)...)
	res, err := Run(context.Background(), []string{path}, WithFailOn(), WithThreshold("errors<=50%"), WithThreshold("errors<50%"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"threshold errors<=50%": "", "threshold errors<50%": "measured 50%"}
	for _, c := range res.Cases {
		if w, ok := want[c.Name]; ok {
			delete(want, c.Name)
			if c.Message != w || c.Fired != (w != "") {
				t.Errorf("%s: fired %v, message %q, want %q", c.Name, c.Fired, c.Message, w)
			}
			if w != "" && (c.Measured == nil || *c.Measured != 0.5) {
				t.Errorf("%s: measured %v, want 0.5", c.Name, c.Measured)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("no cases %v in %+v", want, res.Cases)
	}
}

// TestRunCasesPerSession: every signal gets a case in every session, and
// the tape-wide ones (incomplete; drift with a baseline) one per tape.
func TestRunCasesPerSession(t *testing.T) {
	res, err := Run(context.Background(), []string{fixture("everything-http")})
	if err != nil {
		t.Fatal(err)
	}
	perSession := map[string]int{}
	for _, c := range res.Cases {
		perSession[c.Session]++
	}
	if res.Sessions != 2 || len(perSession) != 3 || perSession[""] != 1 {
		t.Errorf("%d sessions, cases per session %v", res.Sessions, perSession)
	}
	for s, n := range perSession {
		if s != "" && n != len(Signals)-2 { // all but the tape-wide ones
			t.Errorf("session %s: %d cases", s, n)
		}
	}
}

func TestRunUnreadableTape(t *testing.T) {
	notTape := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notTape, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), []string{notTape, fixture("everything-stdio")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || res.Errors[0].Tape != notTape || res.Sessions != 1 {
		t.Fatalf("errors %+v, sessions %d", res.Errors, res.Sessions)
	}
	if e := res.Errors[0].Error; strings.Contains(e, notTape) {
		t.Errorf("error %q names the tape again: TapeError.Tape does", e)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ERROR " + notTape + `: not a tape: not zstd data (starts with "hello\n")` + "\n",
		"check ERROR: 2 tapes, 1 session, 10 checks, 0 failed, 0 notes, 1 tape unreadable\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, opt := range []Option{WithFailOn("nope"), WithSlow(0), WithMaxDuration("x"), WithMaxDuration(":1s"), WithExpectTool(""), WithForbidTool(""),
		WithMaxDuration("tools/list:-1s"), WithThreshold("tools/call:p99.9<1s"), WithThreshold("p99<1s")} {
		if _, err := Run(context.Background(), []string{fixture("everything-stdio")}, opt); err == nil {
			t.Error("no error")
		}
	}
}

// TestDrift: a baseline from one real tape, changed: a removed tool and a
// new required argument break; an added tool is a note.
func TestDrift(t *testing.T) {
	ctx := context.Background()
	base, err := analysis.ReadSurface(ctx, fixture("everything-http"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, []string{fixture("everything-stdio")}, WithBaseline(base))
	if err != nil {
		t.Fatal(err)
	}
	if fired(res, false) != nil {
		t.Errorf("the same server over stdio drifted: %q", fired(res, false))
	}
	added := *base
	added.Tools = base.Tools[1:]
	res, _ = Run(ctx, []string{fixture("everything-stdio")}, WithBaseline(&added))
	if fired(res, false) != nil || !strings.Contains(driftOf(t, res).Message, "none breaking") {
		t.Errorf("an added tool: %+v", driftOf(t, res))
	}
	removed := *base
	removed.Tools = append(slices.Clone(base.Tools), analysis.SurfaceItem{Name: "zz-gone", Definition: json.RawMessage(`{"name":"zz-gone"}`)})
	res, _ = Run(ctx, []string{fixture("everything-stdio")}, WithBaseline(&removed))
	if got := fired(res, false); !slices.Equal(got, []string{SignalDrift}) {
		t.Errorf("a removed tool: failed %q", got)
	}
}

func driftOf(t *testing.T, r *Result) Case {
	for _, c := range r.Cases {
		if c.Signal == SignalDrift {
			return c
		}
	}
	t.Fatal("no drift case")
	return Case{}
}

// TestWriteJUnit: the XML parses, its counts add up, every case is a
// testcase with a name and a classname, failures carry a message, and the
// unreadable tape is an error.
func TestWriteJUnit(t *testing.T) {
	notTape := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notTape, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), []string{fixture("cut"), fixture("gosdk-refserver"), notTape}, WithExpectTool("nope"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("junit does not parse: %v\n%s", err, buf.String())
	}
	var tests, failures, errs int
	for _, s := range doc.Suites {
		n, f, e := 0, 0, 0
		for _, c := range s.Cases {
			n++
			if c.Name == "" || c.Classname == "" {
				t.Errorf("testcase without name or classname in %s", s.Name)
			}
			if c.Failure != nil {
				f++
				if c.Failure.Message == "" {
					t.Errorf("failure without message: %s", c.Name)
				}
			}
			if c.Error != nil {
				e++
			}
		}
		if n != s.Tests || f != s.Failures || e != s.Errors {
			t.Errorf("suite %s: counts %d/%d/%d, attributes %d/%d/%d", s.Name, n, f, e, s.Tests, s.Failures, s.Errors)
		}
		tests, failures, errs = tests+n, failures+f, errs+e
	}
	if tests != doc.Tests || failures != doc.Failures || errs != doc.Errors {
		t.Errorf("totals %d/%d/%d, attributes %d/%d/%d", tests, failures, errs, doc.Tests, doc.Failures, doc.Errors)
	}
	if failures != res.Failures || errs != 1 || tests != len(res.Cases)+1 || len(doc.Suites) != 4 {
		t.Errorf("%d failures, %d errors, %d tests, %d suites; result has %d failures, %d cases", failures, errs, tests, len(doc.Suites), res.Failures, len(res.Cases))
	}
}

func TestWriteText(t *testing.T) {
	res, err := Run(context.Background(), []string{fixture("gosdk-refserver")}, WithExpectTool("nope"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAIL  expect-tool nope", "note  error", "check FAILED: 1 tape, 1 session", "1 failed, 3 notes"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestWriteTextKeepsControlCharactersOut checks that names in the text
// result (a tool name read from a tape or given to --expect-tool) cannot
// drive the terminal: their control characters come out as marks.
func TestWriteTextKeepsControlCharactersOut(t *testing.T) {
	res := &Result{Tapes: []string{"t"}, Cases: []Case{{Tape: "t", Session: "s\x1b]0;x\x07", Name: "forbid-tool x\x1b[2J", Signal: "assertion",
		Selected: true, Fired: true, Message: "x\x1b[2J called 1 time", Details: []string{"d\x1b[31m"}}}, Failures: 1}
	var buf bytes.Buffer
	if err := WriteText(&buf, res); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(buf.String(), "\x1b\x07") || !strings.Contains(buf.String(), "forbid-tool x·[2J") {
		t.Errorf("text holds control characters:\n%q", buf.String())
	}
}

// TestRefusedIsAnError: a request refused with HTTP 403 fires the error
// signal of its session, and so does a notification (a batch of
// notifications refused with 400, as inspect counts it); a 401 (the start
// of OAuth) does not.
func TestRefusedIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Version: "test", Transport: "http"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	const request = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	const note = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for _, ex := range []struct {
		x            uint64
		sess, status string
		frame        string
	}{{1, "conn-1", "403", request}, {2, "conn-2", "401", request}, {3, "note-3", "400", note}, {4, "note-4", "401", note}} {
		for _, rec := range []*tape.Record{
			{Type: tape.TypeMessage, Time: at, Session: ex.sess, Dir: tape.ClientToServer, Exchange: ex.x, Frame: []byte(ex.frame)},
			{Type: tape.TypeEvent, Time: at + 1, Session: ex.sess, Exchange: ex.x, Event: tape.EventHTTP,
				Data: []byte(`{"phase":"end","method":"POST","path":"/mcp","status":` + ex.status + `,"closed_by":"server"}`)},
		} {
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), []string{path}, WithFailOn(SignalError, SignalUnanswered))
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, c := range res.Cases {
		if c.Failed() {
			failed = append(failed, c.Name+" "+c.Session)
			if c.Session == "note-3" && (!strings.Contains(c.Message, "1 notification refused with an HTTP error") ||
				len(c.Details) != 1 || !strings.Contains(c.Details[0], "notifications/initialized refused with HTTP 400")) {
				t.Errorf("the refused notification's case: %q %q", c.Message, c.Details)
			}
		}
	}
	if !slices.Equal(failed, []string{"error conn-1", "error note-3"}) {
		t.Errorf("failed %q, want the 403's and the 400's sessions only", failed)
	}
}

// TestViolationRulesPerSession: every session's violation case names its
// rules and its own examples, also in the sessions past the few examples
// the tape keeps per rule (they had none).
func TestViolationRulesPerSession(t *testing.T) {
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	const sessions = analysis.DefaultMaxExamples + 2
	var recs []*tape.Record
	for i := range sessions {
		recs = append(recs, &tape.Record{Type: tape.TypeMessage, Time: at + int64(i), Session: fmt.Sprintf("s%d", i),
			Dir: tape.ServerToClient, Frame: []byte(`{"jsonrpc":"2.0","id":99,"result":{}}`)})
	}
	res, err := Run(context.Background(), []string{writeRecords(t, "stdio", recs...)})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, c := range res.Cases {
		if c.Signal != SignalViolation {
			continue
		}
		n++
		if want := "1 protocol violation: " + analysis.RuleResponseUnknownID; !c.Failed() || c.Message != want {
			t.Errorf("session %s: failed %v, message %q, want %q", c.Session, c.Failed(), c.Message, want)
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(c.Session, "s"))
		if want := fmt.Sprintf("%s: record %d: ", analysis.RuleResponseUnknownID, i+1); len(c.Details) != 1 || !strings.HasPrefix(c.Details[0], want) {
			t.Errorf("session %s: details %q, want one starting %q", c.Session, c.Details, want)
		}
	}
	if n != sessions {
		t.Errorf("%d violation cases, want %d", n, sessions)
	}
}

// TestUnrecordedMessageIsIncomplete: a WebSocket message the recorder
// refused (over its limit: the session ends with 1009) is not in the tape,
// which is incomplete.
func TestUnrecordedMessageIsIncomplete(t *testing.T) {
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	path := writeRecords(t, "ws", &tape.Record{Type: tape.TypeEvent, Time: at, Session: "ws-1", Dir: tape.ClientToServer, Exchange: 1,
		Event: tape.EventWS, Data: []byte(`{"kind":"close","code":1009,"error":"websocket: client frame 2 at byte 9: message of at least 2000000 bytes, larger than the limit of 1048576"}`)})
	res, err := Run(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cases {
		if c.Signal == SignalIncomplete {
			if want := "1 message not recorded (over the recorder's limit)"; !c.Failed() || c.Message != want {
				t.Errorf("incomplete: failed %v, message %q, want %q", c.Failed(), c.Message, want)
			}
			return
		}
	}
	t.Fatal("no incomplete case")
}

// writeRecords writes recs to a new tape of transport and returns its path.
func writeRecords(t *testing.T, transport string, recs ...*tape.Record) string {
	t.Helper()
	return tapetest.Write(t, filepath.Join(t.TempDir(), "t.jsonl.zst"), tape.Header{Version: "test", Transport: transport}, recs)
}

// TestRefusedUpgradeIsAnError: a WebSocket upgrade the server refused fires
// the error signal of the tape (no session came of it).
func TestRefusedUpgradeIsAnError(t *testing.T) {
	path := writeRecords(t, "ws", &tape.Record{Type: tape.TypeEvent, Time: time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano(),
		Exchange: 1, Event: tape.EventHTTP, Data: []byte(`{"phase":"end","method":"GET","path":"/mcp","status":403,"request_headers":{"Upgrade":["websocket"]}}`)})
	res, err := Run(context.Background(), []string{path}, WithFailOn(SignalError))
	if err != nil {
		t.Fatal(err)
	}
	if got := fired(res, false); !slices.Equal(got, []string{SignalError}) {
		t.Fatalf("failed %q, want error", got)
	}
	for _, c := range res.Cases {
		if c.Signal == SignalError && (c.Message != "1 WebSocket upgrade refused with an HTTP error" ||
			!slices.Equal(c.Details, []string{"record 1: WebSocket upgrade GET /mcp: HTTP 403"})) {
			t.Errorf("case %+v", c)
		}
	}
}

// TestRunAbandonedAndUnfinished: an MRTR operation abandoned (its last
// answer asked for input, never retried) and a task that never finished
// are signals of their own, "abandoned" and "unfinished", with the
// requests by record: notes by default, failures when selected. (check
// ignored both: nothing to gate on.)
func TestRunAbandonedAndUnfinished(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`
	mrtr := writeRecords(t, "stdio", tapetest.Messages("1", start,
		`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask",`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"elicitation/create"}}}}`,
	)...)
	task := writeRecords(t, "stdio", tapetest.Messages("1", start,
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","task":{}}}`,
		`< {"jsonrpc":"2.0","id":7,"result":{"task":{"taskId":"T3","status":"working"}}}`,
		`> {"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"T3"}}`,
		`< {"jsonrpc":"2.0","id":8,"result":{"taskId":"T3","status":"working"}}`,
	)...)
	want := map[string]Case{
		mrtr + " " + SignalAbandoned: {Count: 1, Message: "1 multi round-trip operation abandoned (its last answer asked for input; never retried)",
			Details: []string{"record 3: tools/call id 5 ask"}},
		task + " " + SignalUnfinished: {Count: 1, Message: "1 task never finished (no terminal status or result seen)",
			Details: []string{"record 4: tools/call id 7 slow"}},
	}
	for _, selected := range []bool{false, true} {
		var opts []Option
		if selected {
			opts = append(opts, WithFailOn(SignalAbandoned, SignalUnfinished))
		}
		res, err := Run(context.Background(), []string{mrtr, task}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		fired := 0
		for _, c := range res.Cases {
			if c.Signal != SignalAbandoned && c.Signal != SignalUnfinished || !c.Fired {
				continue
			}
			fired++
			w, ok := want[c.Tape+" "+c.Signal]
			if !ok || c.Count != w.Count || c.Message != w.Message || !slices.Equal(c.Details, w.Details) || c.Selected != selected {
				t.Errorf("selected %v: case %+v, want %+v", selected, c, w)
			}
		}
		if fired != 2 || res.Failed() != selected {
			t.Errorf("selected %v: %d fired, failed %v (%d failures)", selected, fired, res.Failed(), res.Failures)
		}
	}
}
