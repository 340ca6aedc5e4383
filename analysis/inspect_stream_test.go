package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// chatCall, start, delta and end are the frames of the LangGraph streaming
// dialect for id.
func chatCall(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"chat","arguments":{"query":"hi"}}}`
}
func partStart(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"type":"content_start"}}`
}
func partDelta(id, text string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"type":"content_delta","delta":"` + text + `"}}`
}
func partEnd(id string, prompt, completion string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"type":"content_end","conversation_id":"c",` +
		`"usage":{"prompt_tokens":` + prompt + `,"completion_tokens":` + completion + `}}}`
}

// inspectBoth inspects the steps on the Scanner's shared-frames path (as
// Inspect does) and on the plain path (items without pre-read fields).
func inspectBoth(t *testing.T, steps ...step) map[string]*Report {
	t.Helper()
	path := tempTape(t, steps...)
	fast, err := Inspect(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	in, err := NewInspector(r.Header())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := NewScanner(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for {
		it, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		in.Add(it)
	}
	return map[string]*Report{"shared": fast, "plain": in.Finish(sc.Warning())}
}

func TestInspectStreamedAnswersAreOneOperation(t *testing.T) {
	// Two chat calls whose parts interleave, and a plain echo call.
	steps := after(
		c2s(10*ms, chatCall("1")),
		c2s(11*ms, chatCall(`"b"`)),
		s2c(20*ms, partStart("1")),
		s2c(21*ms, partStart(`"b"`)),
		s2c(30*ms, partDelta("1", "Quantum ")),
		s2c(31*ms, partDelta(`"b"`, "x")),
		s2c(40*ms, partDelta("1", "computing")),
		s2c(50*ms, partEnd(`"b"`, "2", "1")),
		s2c(60*ms, partEnd("1", "20", "150")),
		c2s(70*ms, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`),
		s2c(75*ms, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"content_delta"}]}}`),
	)
	for path, rep := range inspectBoth(t, steps...) {
		if n := violationCount(rep, RuleResponseUnknownID); n != 0 {
			t.Errorf("%s: %d response-unknown-id, want none", path, n)
		}
		if n := violationCount(rep, RuleStreamedResponse); n != 2 {
			t.Errorf("%s: %d streamed-response notes, want 2", path, n)
		}
		for _, v := range rep.Violations {
			if v.Rule == RuleStreamedResponse && v.Severity != SeverityInfo {
				t.Errorf("%s: streamed-response severity %v, want info", path, v.Severity)
			}
		}
		st := rep.Streams
		if st == nil {
			t.Fatalf("%s: no streams in the report", path)
		}
		if st.Operations != 2 || st.Chunks != 7 || st.Unfinished != 0 || st.AfterEnd != 0 {
			t.Errorf("%s: streams %+v, want 2 operations of 7 parts", path, st)
		}
		if want := (jsonrpc.Usage{PromptTokens: 22, CompletionTokens: 151, TotalTokens: 173}); st.Usage != want {
			t.Errorf("%s: usage %+v, want %+v", path, st.Usage, want)
		}
		if st.FirstChunk.Count != 2 || st.FirstChunk.MaxNS != int64(10*ms) || st.Complete.MaxNS != int64(50*ms) {
			t.Errorf("%s: first chunk %+v complete %+v, want max 10ms and 50ms", path, st.FirstChunk, st.Complete)
		}
		if len(st.ByMethod) != 1 || st.ByMethod[0].Tool != "chat" || st.ByMethod[0].Operations != 2 {
			t.Errorf("%s: by method %+v, want one chat entry", path, st.ByMethod)
		}
		// The whole answer is one sample of the tool's latency.
		if chat := toolOf(t, rep, "chat"); chat.Calls != 2 || chat.MaxNS != int64(50*ms) {
			t.Errorf("%s: chat tool %+v, want 2 calls, max 50ms", path, chat)
		}
		if echo := toolOf(t, rep, "echo"); echo.Calls != 1 {
			t.Errorf("%s: echo %+v", path, echo)
		}
		if rep.Unanswered.Count != 0 {
			t.Errorf("%s: unanswered %+v", path, rep.Unanswered)
		}
		// An info note is no violation: check does not fail the session.
		if v := rep.Sessions[0].Violations; v != 0 {
			t.Errorf("%s: session counts %d violations, want 0", path, v)
		}
	}
}

func TestInspectStreamCutAndPartAfterEnd(t *testing.T) {
	steps := after(
		c2s(10*ms, chatCall("1")),
		s2c(20*ms, partStart("1")),
		s2c(30*ms, partDelta("1", "a")),
		s2c(40*ms, partEnd("1", "1", "1")),
		s2c(41*ms, partDelta("1", "late")),
		c2s(50*ms, chatCall("2")),
		s2c(60*ms, partStart("2")),
		s2c(70*ms, partDelta("2", "cut here")),
	)
	for path, rep := range inspectBoth(t, steps...) {
		st := rep.Streams
		if st == nil || st.Operations != 1 || st.Unfinished != 1 || st.AfterEnd != 1 {
			t.Fatalf("%s: streams %+v, want 1 done, 1 unfinished, 1 part after the end", path, st)
		}
		if len(st.UnfinishedRequests) != 1 || st.UnfinishedRequests[0].ID != "2" {
			t.Errorf("%s: unfinished %+v, want id 2", path, st.UnfinishedRequests)
		}
		if n := violationCount(rep, RuleStreamAfterEnd); n != 1 {
			t.Errorf("%s: %d %s, want 1", path, n, RuleStreamAfterEnd)
		}
		if n := violationCount(rep, RuleResponseUnknownID); n != 0 {
			t.Errorf("%s: %d response-unknown-id, want 0", path, n)
		}
		if rep.Unanswered.Count != 0 {
			t.Errorf("%s: the cut stream counted unanswered too: %+v", path, rep.Unanswered)
		}
		found := false
		for _, p := range rep.Problems {
			found = found || (p.What == "stream-unfinished" && p.Severity == SeverityError && p.Count == 1)
		}
		if !found {
			t.Errorf("%s: problems %+v lack stream-unfinished", path, rep.Problems)
		}
	}
}

func TestInspectNoStreamsNoStreamSection(t *testing.T) {
	rep := inspectSteps(t, after(
		c2s(10*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`),
		s2c(20*ms, `{"jsonrpc":"2.0","id":1,"result":{"type":"content_startx"}}`),
		s2c(21*ms, partDelta("9", "stray")),
	)...)
	if rep.Streams != nil {
		t.Errorf("streams %+v, want none", rep.Streams)
	}
	if n := violationCount(rep, RuleResponseUnknownID); n != 1 {
		t.Errorf("a stray part for an unknown id: %d response-unknown-id, want 1", n)
	}
}

func TestShowGroupsStreamPartsUnderTheirRequest(t *testing.T) {
	path := tempTape(t, after(
		c2s(10*ms, chatCall("1")),
		c2s(11*ms, chatCall("2")),
		s2c(20*ms, partStart("1")),
		s2c(21*ms, partStart("2")),
		s2c(30*ms, partDelta("1", "a")),
		s2c(40*ms, partEnd("1", "1", "1")),
		s2c(45*ms, partEnd("2", "1", "1")),
	)...)
	lines, _ := showLines(t, path, WithFormat(FormatNDJSON), WithDir(tape.ServerToClient), WithMethod("tools/call"))
	type pos struct {
		ID        json.RawMessage `json:"id"`
		Method    string          `json:"method"`
		Name      string          `json:"name"`
		LatencyNS int64           `json:"latency_ns"`
		Stream    *struct {
			Part  string `json:"part"`
			Index int    `json:"index"`
		} `json:"stream"`
	}
	want := []struct {
		id, part string
		index    int
		lat      int64
	}{{"1", "start", 1, int64(10 * ms)}, {"2", "start", 1, int64(10 * ms)}, {"1", "delta", 2, int64(20 * ms)},
		{"1", "end", 3, int64(30 * ms)}, {"2", "end", 2, int64(34 * ms)}}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), lines)
	}
	for i, l := range lines {
		var p pos
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		w := want[i]
		if string(p.ID) != w.id || p.Method != "tools/call" || p.Name != "chat" || p.LatencyNS != w.lat || p.Stream == nil ||
			p.Stream.Part != w.part || p.Stream.Index != w.index {
			t.Errorf("line %d: %s, want id %s %s #%d after %d ns", i, l, w.id, w.part, w.index, w.lat)
		}
	}
	text, _ := showLines(t, path, WithDir(tape.ServerToClient), WithMethod("tools/call"))
	if len(text) != 5 || !strings.Contains(text[2], "↳ tools/call delta #2") {
		t.Errorf("text lines %q, want the delta as ↳ tools/call delta #2", text)
	}
}

func TestReportHTMLStreams(t *testing.T) {
	path := tempTape(t, after(
		c2s(10*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"<b>chat</b>","arguments":{}}}`),
		s2c(20*ms, partStart("1")),
		s2c(30*ms, partDelta("1", "a")),
		s2c(40*ms, partEnd("1", "3", "4")),
	)...)
	out, _ := writeReport(t, path, "streams")
	page := string(out)
	checkInert(t, page)
	for _, want := range []string{"<h2>Streamed answers</h2>", "1 streamed answer, 3 parts", "7 tokens", "&lt;b&gt;chat&lt;/b&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	plain, _ := writeReport(t, tempTape(t, reportTape()...), "plain")
	if strings.Contains(string(plain), "Streamed answers") {
		t.Error("a tape without streams has a streams section")
	}
}

// TestExportHARStreamed: an HTTP exchange whose event stream carries a
// streamed answer gets the _streamed figures in its HAR entry.
func TestExportHARStreamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl.zst")
	writeRecords(t, path, "http", []tape.Record{
		httpRec(1*tick, 1, tape.ClientToServer, chatCall("1")),
		httpEvt(2*tick, 1, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","host":"127.0.0.1:9000","conn":1,"status":200,"content_type":"text/event-stream","wait_ns":1000000}`),
		httpRec(2*tick, 1, tape.ServerToClient, partStart("1")),
		httpRec(5*tick, 1, tape.ServerToClient, partDelta("1", "a")),
		httpRec(9*tick, 1, tape.ServerToClient, partEnd("1", "2", "3")),
		httpEvt(9*tick, 1, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","conn":1,"status":200,"duration_ns":8000000,"closed_by":"server","messages":3}`),
	})
	out, _ := export(t, path, ExportHAR)
	entries := validateHAR(t, out)
	if len(entries) != 1 {
		t.Fatalf("%d entries, want 1", len(entries))
	}
	for field, want := range map[string]string{"_streamed.parts": "3", "_streamed.firstPartMs": "1", "_streamed.lastPartMs": "8",
		"_streamed.usage.total_tokens": "5"} {
		if got := harField(entries[0], field); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
}
