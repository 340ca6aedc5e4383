package analysis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// near reports whether a percentile is within the histogram's 1% of want.
func near(got int64, want time.Duration) bool {
	return got >= int64(want) && float64(got) <= float64(want)*1.01
}

func latencyOf(t *testing.T, rep *Report, dir tape.Direction, method string) LatencyStats {
	t.Helper()
	for _, l := range rep.Latency {
		if l.Dir == string(dir) && l.Method == method {
			return l
		}
	}
	t.Fatalf("no latency for %s %s in %+v", dir, method, rep.Latency)
	return LatencyStats{}
}

func toolOf(t *testing.T, rep *Report, name string) ToolStats {
	t.Helper()
	for _, l := range rep.Tools {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no tool %s in %+v", name, rep.Tools)
	return ToolStats{}
}

func TestInspectPairsOnSessionDirectionAndID(t *testing.T) {
	steps := after(
		// Client id 1 and server id 1 are different requests.
		c2s(10*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`),
		s2c(12*ms, `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`),
		c2s(15*ms, `{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`),
		s2c(40*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`),
		c2s(50*ms, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo"}}`),
		s2c(60*ms, `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad args"}}`),
		c2s(70*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail"}}`),
		s2c(71*ms, `{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`),
	)
	// The same ids in another session do not interfere.
	steps = append(steps, inSession("2", c2s(11*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`))...)
	rep := inspectSteps(t, steps...)
	call := latencyOf(t, rep, tape.ClientToServer, "tools/call")
	if call.Count != 3 || call.MaxNS != int64(30*ms) || call.Errors != 1 {
		t.Errorf("tools/call latency %+v, want 3 samples, max 30ms, 1 error", call)
	}
	roots := latencyOf(t, rep, tape.ServerToClient, "roots/list")
	if roots.Count != 1 || roots.MaxNS != int64(3*ms) {
		t.Errorf("roots/list latency %+v, want one of 3ms", roots)
	}
	echo := toolOf(t, rep, "echo")
	if echo.Calls != 2 || echo.Errors != 1 || !near(echo.P50NS, 10*ms) || echo.MaxNS != int64(30*ms) {
		t.Errorf("echo %+v", echo)
	}
	if fail := toolOf(t, rep, "fail"); fail.ToolErrors != 1 || fail.Errors != 0 {
		t.Errorf("fail %+v, want one isError result", fail)
	}
	if len(rep.Violations) != 0 {
		t.Errorf("violations: %+v", rep.Violations)
	}
	if rep.Unanswered.Count != 1 || rep.Unanswered.Requests[0].Session != "2" {
		t.Errorf("unanswered %+v, want the request of session 2", rep.Unanswered)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Code != -32602 || rep.Errors[0].Message != "bad args" || rep.Errors[0].Method != "tools/call" {
		t.Errorf("errors %+v", rep.Errors)
	}
	s := rep.Sessions[0]
	if s.Client == nil || s.Client.Name != "c" || s.Server == nil || s.Server.Name != "s" || s.ProtocolVersion != "2025-06-18" {
		t.Errorf("session %+v", s)
	}
	if s.ByKind["request"] != 5 || s.ByKind["response"] != 4 || s.ByKind["error"] != 1 || s.ByDir["c2s"] != 6 {
		t.Errorf("counts by kind %v, by dir %v", s.ByKind, s.ByDir)
	}
	if len(s.ToolsCalled) != 2 || s.ToolsCalled[0] != (NameCount{"echo", 2}) {
		t.Errorf("tools called %+v", s.ToolsCalled)
	}
}

func TestInspectJoinsMRTRRounds(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"gosdk","version":"1.8"}}`
	rep := inspectSteps(t,
		c2s(0, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`),
		s2c(1*ms, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"serverInfo":{"name":"ref","version":"0.1"}}}`),
		c2s(10*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{"kind":"elicitation"},`+meta+`}}`),
		s2c(12*ms, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create"}}}}`),
		c2s(30*ms, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{"kind":"elicitation"},"inputResponses":{"ask":{"action":"accept"}},`+meta+`}}`),
		s2c(32*ms, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"ask":{}},"requestState":"s1"}}`),
		c2s(40*ms, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","requestState":"s1","inputResponses":{"ask":{}},`+meta+`}}`),
		s2c(45*ms, `{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`),
		// Abandoned: input required, never retried.
		c2s(50*ms, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"other",`+meta+`}}`),
		s2c(51*ms, `{"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","inputRequests":{"x":{}}}}`),
	)
	m := rep.Operations.MRTR
	if m.Operations != 1 || m.Rounds != 3 || m.MaxRounds != 3 || m.Abandoned != 1 || m.Latency.MaxNS != int64(35*ms) {
		t.Errorf("MRTR %+v, want 1 operation of 3 rounds lasting 35ms, 1 abandoned", m)
	}
	call := latencyOf(t, rep, tape.ClientToServer, "tools/call")
	if call.Count != 1 || call.MaxNS != int64(35*ms) {
		t.Errorf("tools/call latency %+v: the rounds must count as one operation of 35ms", call)
	}
	s := rep.Sessions[0]
	if s.ProtocolVersion != "2026-07-28" || s.Client == nil || s.Client.Name != "gosdk" || s.Server == nil || s.Server.Name != "ref" {
		t.Errorf("session %+v", s)
	}
	if len(rep.Violations) != 0 {
		t.Errorf("violations %+v", rep.Violations)
	}
}

func TestInspectJoinsTaskPolling(t *testing.T) {
	rep := inspectSteps(t, after(
		c2s(10*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}`),
		s2c(11*ms, `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"T1","status":"working"}}}`),
		c2s(20*ms, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T1"}}`),
		s2c(21*ms, `{"jsonrpc":"2.0","id":2,"result":{"taskId":"T1","status":"working"}}`),
		c2s(30*ms, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"T1"}}`),
		s2c(31*ms, `{"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","status":"completed"}}`),
		c2s(40*ms, `{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"T1"}}`),
		s2c(50*ms, `{"jsonrpc":"2.0","id":4,"result":{"content":[],"isError":true}}`),
		// A second task seen completed by tasks/get only, a third never done.
		c2s(60*ms, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","task":{}}}`),
		s2c(61*ms, `{"jsonrpc":"2.0","id":5,"result":{"task":{"taskId":"T2","status":"working"}}}`),
		c2s(70*ms, `{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"T2"}}`),
		s2c(80*ms, `{"jsonrpc":"2.0","id":6,"result":{"taskId":"T2","status":"failed"}}`),
		c2s(90*ms, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","task":{}}}`),
		s2c(91*ms, `{"jsonrpc":"2.0","id":7,"result":{"task":{"taskId":"T3","status":"working"}}}`),
	)...)
	tk := rep.Operations.Tasks
	if tk.Tasks != 3 || tk.Polls != 4 || tk.Completed != 2 || tk.Unfinished != 1 || tk.Latency.MaxNS != int64(40*ms) || tk.Latency.Count != 2 {
		t.Errorf("tasks %+v", tk)
	}
	slow := toolOf(t, rep, "slow")
	if slow.Calls != 2 || slow.MaxNS != int64(40*ms) || !near(slow.P50NS, 20*ms) || slow.ToolErrors != 2 {
		t.Errorf("slow %+v, want the two ended tasks timed 40ms and 20ms, both tool errors", slow)
	}
	if get := latencyOf(t, rep, tape.ClientToServer, "tasks/get"); get.Count != 3 {
		t.Errorf("tasks/get %+v: polls are timed as requests of their own too", get)
	}
}

func TestInspectCancellations(t *testing.T) {
	rep := inspectSteps(t, after(
		c2s(10*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`),
		c2s(11*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`),
		s2c(12*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`), // answered anyway
		c2s(20*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`),
		c2s(21*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`), // never answered: fine
		c2s(30*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`),
		c2s(40*ms, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"c"}}`), // never answered
	)...)
	c := rep.Cancellations
	if c.Count != 3 || c.AnsweredAnyway != 1 || c.NotAnswered != 1 || c.UnknownTarget != 1 || len(c.Answered) != 1 || c.Answered[0].Name != "a" {
		t.Errorf("cancellations %+v", c)
	}
	u := rep.Unanswered
	if u.Count != 1 || u.Cancelled != 1 || len(u.Requests) != 1 || u.Requests[0].Name != "c" {
		t.Errorf("unanswered %+v", u)
	}
	var whats []string
	for _, p := range rep.Problems {
		whats = append(whats, p.What)
	}
	if got := strings.Join(whats, ","); got != "unanswered,answered-after-cancel" {
		t.Errorf("problems %s, want unanswered (error) then answered-after-cancel (warning)", got)
	}
}

func TestInspectProgress(t *testing.T) {
	rep := inspectSteps(t, after(
		c2s(10*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"t"}}}`),
		s2c(15*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":3}}`),
		s2c(16*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2,"total":3}}`),
		s2c(17*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":3,"total":3}}`),
		s2c(18*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		c2s(20*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"u"}}}`),
		s2c(21*ms, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`),
	)...)
	p := rep.Progress
	if p.Requested != 2 || p.Streams != 1 || p.Notifications != 3 || p.MaxPerRequest != 3 || p.FirstProgress.MaxNS != int64(5*ms) {
		t.Errorf("progress %+v", p)
	}
}

func TestInspectStderrExitAndProxyErrors(t *testing.T) {
	rep := inspectSteps(t, after(
		evt(3*ms, tape.EventStderr, `{"line":"one"}`),
		evt(4*ms, tape.EventStderr, `{"line":"two"}`),
		evt(5*ms, tape.EventStderr, `{"b64":"/w=="}`),
		evt(6*ms, tape.EventStderr, `{"line":"four\u001b[0m"}`),
		evt(7*ms, tape.EventError, `{"error":"upstream refused"}`),
		evt(8*ms, tape.EventExit, `{"code":137,"signal":"SIGKILL"}`),
		evt(8*ms, tape.EventClose, `{"by":"signal"}`),
	)...)
	s := rep.Sessions[0]
	if s.Stderr == nil || s.Stderr.Lines != 4 || strings.Join(s.Stderr.Last, "|") != "two|(binary) /w==|four·[0m" {
		t.Errorf("stderr %+v", s.Stderr)
	}
	if s.Exit == nil || s.Exit.Signal != "SIGKILL" || s.ClosedBy != "signal" {
		t.Errorf("exit %+v closed by %q", s.Exit, s.ClosedBy)
	}
	if rep.ProxyErrorsN != 1 || rep.ProxyErrors[0].Detail != "upstream refused" {
		t.Errorf("proxy errors %+v", rep.ProxyErrors)
	}
	var whats []string
	for _, p := range rep.Problems {
		whats = append(whats, p.What)
	}
	if got := strings.Join(whats, ","); got != "server-exit,proxy-error" {
		t.Errorf("problems %s", got)
	}
}

func TestInspectFoldsSessionsBeyondTheLimit(t *testing.T) {
	var steps []step
	for i := 0; i < 5; i++ {
		id := fmt.Sprint("s", i)
		steps = append(steps, inSession(id, c2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
			s2c(ms, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))...)
	}
	rep, err := Inspect(context.Background(), tempTape(t, steps...), WithMaxSessions(2))
	if err != nil {
		t.Fatal(err)
	}
	// The stats event's empty session comes last and is folded too.
	if len(rep.Sessions) != 2 || rep.SessionsFolded != 3 {
		t.Fatalf("%d sessions listed, %d folded; want 2 and 3", len(rep.Sessions), rep.SessionsFolded)
	}
	if l := latencyOf(t, rep, tape.ClientToServer, "tools/list"); l.Count != 5 {
		t.Errorf("latency counts %d, want every session's 5", l.Count)
	}
	if n := violationCount(rep, RuleBeforeInitialize); n != 5 {
		t.Errorf("folded sessions keep their protocol state: %d before-initialize, want 5", n)
	}
}

func TestInspectBoundsDistinctNames(t *testing.T) {
	var steps []step
	for i := 0; i < 10; i++ {
		steps = append(steps,
			c2s(0, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tool%d"}}`, i, i)),
			s2c(ms, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":%d,"message":"m%d"}}`, i, i, i)))
	}
	rep, err := Inspect(context.Background(), tempTape(t, after(steps...)...), WithMaxDistinct(4))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tools) > 4 || len(rep.Errors) > 5 {
		t.Errorf("%d tools, %d errors: the bound is not kept", len(rep.Tools), len(rep.Errors))
	}
	if o := toolOf(t, rep, Other); o.Calls == 0 {
		t.Errorf("no calls under %q", Other)
	}
}

func TestInspectCutTape(t *testing.T) {
	var steps []step
	for i := 0; i < 2000; i++ {
		steps = append(steps, c2s(0, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)))
	}
	dir := t.TempDir()
	full := filepath.Join(dir, "full.jsonl.zst")
	// Small frames, so that cutting the file leaves whole frames before.
	w, err := tape.Create(full, tape.Header{Time: testStart.UnixNano()}, tape.WithFlushBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if err := w.Write(&tape.Record{Type: tape.TypeMessage, Time: testStart.UnixNano() + int64(i), Session: "1", Dir: s.dir, Frame: []byte(s.msg)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.jsonl.zst")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Inspect(context.Background(), cut)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tape.Warning == "" || !strings.Contains(rep.Tape.Warning, fmt.Sprintf("tape cut after %d records", rep.Tape.Records)) {
		t.Errorf("warning %q, want one naming the %d records read", rep.Tape.Warning, rep.Tape.Records)
	}
	if rep.Tape.Records < 100 || rep.Tape.Records >= 2000 {
		t.Errorf("%d records read from two thirds of the tape", rep.Tape.Records)
	}
	if rep.Problems[0].What != "tape-damaged" {
		t.Errorf("first problem %+v, want tape-damaged", rep.Problems[0])
	}
}

func TestInspectNotATape(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"text.txt": "hello\nworld\n", "empty": "", "gz": "\x1f\x8b\x08\x00rest"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Inspect(context.Background(), path)
		if !errors.Is(err, tape.ErrNotTape) {
			t.Errorf("%s: error %v, want tape.ErrNotTape", name, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, path) {
			t.Errorf("%s: error %q is not one line naming the file", name, msg)
		}
	}
}

func TestInspectOptionErrors(t *testing.T) {
	for _, opt := range []Option{WithMaxSessions(0), WithMaxExamples(-1), WithMaxDistinct(0), WithMaxListed(0)} {
		if _, err := NewInspector(nil, opt); err == nil {
			t.Error("a bad option gave no error")
		}
	}
}

// TestRawIDInt: an integer id kept as its value reads back as its raw
// JSON; one whose raw form formatting does not give back ("-0") keeps its
// bytes.
func TestRawIDInt(t *testing.T) {
	for _, raw := range []string{"0", "-0", "7", "-7", "10", "-100", "123456789012345678", "-12345678901234567"} {
		n, ok := plainInt([]byte(raw))
		if !ok {
			t.Fatalf("plainInt(%q) failed", raw)
		}
		var r rawID
		kept := r.setInt(n, len(raw))
		if want := strconv.FormatInt(n, 10) == raw; kept != want {
			t.Errorf("setInt(%d, %d) = %v, want %v", n, len(raw), kept, want)
		}
		if !kept {
			r.set([]byte(raw))
		}
		if got := r.String(); got != raw {
			t.Errorf("id %q reads back as %q", raw, got)
		}
		r.set([]byte(`"s"`)) // a later string id is not taken for the number
		if got := r.String(); got != `"s"` {
			t.Errorf("after set: %q", got)
		}
	}
}
