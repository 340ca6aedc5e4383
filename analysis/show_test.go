package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// showTape is a small exchange for the filter tests.
func showTape(t *testing.T) string {
	return tempTape(t, append(after(
		c2s(10*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`),
		s2c(15*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`),
		c2s(20*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
		s2c(21*ms, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"}]}}`),
		evt(22*ms, tape.EventStderr, `{"line":"log line"}`),
		// A pretty-printed body, as over HTTP: raw output compacts it.
		c2s(30*ms, "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"notifications/roots/list_changed\"\n}"),
		c2s(40*ms, "not json \xff"),
	), inSession("2", c2s(50*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`))...)...)
}

func showLines(t *testing.T, path string, opts ...ShowOption) ([]string, ShowStats) {
	t.Helper()
	var b bytes.Buffer
	st, err := Show(context.Background(), path, &b, opts...)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if out == "" {
		return nil, st
	}
	return strings.Split(out, "\n"), st
}

func TestShowFilters(t *testing.T) {
	path := showTape(t)
	cases := []struct {
		name string
		opts []ShowOption
		want []string // a substring of each line, in order
	}{
		{"method glob matches responses by their request", []ShowOption{WithMethod("tools/*")},
			[]string{"tools/call", "tools/call", "tools/list", "tools/list"}},
		{"star crosses slashes", []ShowOption{WithMethod("*list*")},
			[]string{"tools/list", "tools/list", "notifications/roots/list_changed"}},
		{"class", []ShowOption{WithMethod("[p]ing")}, []string{"ping"}},
		{"direction out", []ShowOption{WithDir(tape.ServerToClient)},
			[]string{"initialize", "tools/call", "tools/list"}},
		{"grep over frames and events", []ShowOption{WithGrep(`"hi"|log line`)},
			[]string{"tools/call", "tools/call", "stderr"}},
		{"time window", []ShowOption{WithFrom(TimeSpec{Offset: 15 * ms}), WithTo(TimeSpec{Offset: 21 * ms})},
			[]string{"tools/call", "tools/list", "tools/list"}},
		{"absolute time", []ShowOption{WithFrom(TimeSpec{Abs: testStart.Add(45 * ms), Absolute: true})},
			[]string{"ping", "stats"}},
		{"session", []ShowOption{WithSession("2")}, []string{"ping"}},
		{"no match", []ShowOption{WithSession("nope")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines, _ := showLines(t, path, c.opts...)
			if len(lines) != len(c.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(c.want), strings.Join(lines, "\n"))
			}
			for i, w := range c.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("line %d %q lacks %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestShowTextColumns(t *testing.T) {
	lines, _ := showLines(t, showTape(t), WithMethod("tools/call"))
	want := []string{
		`   +0.010s  1        →  req     tools/call                       1               100 B           echo {"message":"hi"}`,
		`   +0.015s  1        ←  resp    tools/call                       1                75 B   5.00ms  "hi"`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestShowRawKeepsCarriageReturns checks that raw output writes a frame
// holding carriage returns but no newline (a CRLF client's line) byte for
// byte, not compacted.
func TestShowRawKeepsCarriageReturns(t *testing.T) {
	frames := []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
		"{\"jsonrpc\":\"2.0\",\r\"method\":\"notifications/initialized\"}",
	}
	path := tempTape(t, c2s(10*ms, frames[0]), c2s(20*ms, frames[1]))
	lines, st := showLines(t, path, WithFormat(FormatRaw))
	if st.Compacted != 0 || strings.Join(lines, "\n") != strings.Join(frames, "\n") {
		t.Errorf("%d compacted, raw lines %q, want %q", st.Compacted, lines, frames)
	}
}

func TestShowRawAndNDJSON(t *testing.T) {
	path := showTape(t)
	lines, st := showLines(t, path, WithFormat(FormatRaw), WithDir(tape.ClientToServer), WithSession("1"))
	if st.Compacted != 1 || len(lines) != 6 {
		t.Fatalf("%d lines, %d compacted:\n%s", len(lines), st.Compacted, strings.Join(lines, "\n"))
	}
	if lines[4] != `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}` || lines[5] != "not json \xff" {
		t.Errorf("raw lines: %q %q", lines[4], lines[5])
	}
	lines, _ = showLines(t, path, WithFormat(FormatNDJSON))
	var kinds []string
	for _, l := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %s: %v", l, err)
		}
		switch {
		case m["b64"] != nil:
			kinds = append(kinds, "b64")
		case m["text"] != nil:
			kinds = append(kinds, "text")
		case m["message"] != nil:
			kinds = append(kinds, "message")
		default:
			kinds = append(kinds, "event")
		}
	}
	if got := strings.Join(kinds, ","); got != "message,message,message,message,message,message,message,event,message,b64,message,event" {
		t.Errorf("payload kinds %s", got)
	}
	var resp struct {
		LatencyNS int64  `json:"latency_ns"`
		Method    string `json:"method"`
		Summary   string `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[4]), &resp); err != nil || resp.LatencyNS != int64(5*ms) || resp.Method != "tools/call" || resp.Summary != `"hi"` {
		t.Errorf("response line %s: %+v %v", lines[4], resp, err)
	}
}

func TestShowOptionErrors(t *testing.T) {
	for _, opt := range []ShowOption{WithFormat("yaml"), WithMethod("[a"), WithGrep("("), WithDir("up")} {
		if err := CheckShowOptions(opt); err == nil {
			t.Error("a bad option gave no error")
		}
	}
}

// TestShowWindowEndsBeforeStart: a window whose end comes before its
// start is an error, not an empty output: at once when its bounds are of
// one kind (offsets, or times), from the tape's start when one is an
// offset and the other a time. A window of one instant is a window.
func TestShowWindowEndsBeforeStart(t *testing.T) {
	path := filepath.Join("..", "testdata", "analysis", "operations.jsonl.zst")
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(0, r.Header().Time).UTC()
	r.Close()
	at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		from, to string
		atCheck  bool // an error from CheckShowOptions
		atShow   bool // an error from Show
	}{
		{"5s", "1s", true, true},
		{at(5 * time.Second), at(time.Second), true, true},
		{"5s", at(time.Second), false, true},
		{at(5 * time.Second), "1s", false, true},
		{"1s", "5s", false, false},
		{"1s", "1s", false, false},
		{"1s", at(time.Second), false, false},
	} {
		from, err := ParseTimeSpec(tc.from)
		if err != nil {
			t.Fatal(err)
		}
		to, err := ParseTimeSpec(tc.to)
		if err != nil {
			t.Fatal(err)
		}
		opts := []ShowOption{WithFrom(from), WithTo(to)}
		if err := CheckShowOptions(opts...); (err != nil) != tc.atCheck || (err != nil && !strings.Contains(err.Error(), "ends before it starts")) {
			t.Errorf("--from %s --to %s: CheckShowOptions: %v, want an error %v", tc.from, tc.to, err, tc.atCheck)
		}
		_, err = Show(context.Background(), path, io.Discard, opts...)
		if (err != nil) != tc.atShow || (err != nil && !strings.Contains(err.Error(), "ends before it starts")) {
			t.Errorf("--from %s --to %s: Show: %v, want an error %v", tc.from, tc.to, err, tc.atShow)
		}
	}
}

func TestParseTimeSpec(t *testing.T) {
	cases := []struct {
		in   string
		want TimeSpec
		ok   bool
	}{
		{"1.5s", TimeSpec{Offset: 1500 * ms}, true},
		{"+300ms", TimeSpec{Offset: 300 * ms}, true},
		{"2m", TimeSpec{Offset: 2 * time.Minute}, true},
		{"12.5", TimeSpec{Offset: 12500 * ms}, true},
		{"0", TimeSpec{}, true},
		{"2026-07-28T10:00:01.5Z", TimeSpec{Abs: testStart.Add(1500 * ms), Absolute: true}, true},
		{"", TimeSpec{}, false},
		{"yesterday", TimeSpec{}, false},
		{"1.2.3", TimeSpec{}, false},
		{"1e20", TimeSpec{}, false},
	}
	for _, c := range cases {
		got, err := ParseTimeSpec(c.in)
		if (err == nil) != c.ok || (c.ok && !(got.Offset == c.want.Offset && got.Absolute == c.want.Absolute && got.Abs.Equal(c.want.Abs))) {
			t.Errorf("ParseTimeSpec(%q) = %+v, %v; want %+v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func FuzzParseTimeSpec(f *testing.F) {
	for _, s := range []string{"1s", "+2m", "12.5", "-1", "2026-07-28T10:00:00Z", "1e9", ".", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTimeSpec(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		_ = ts.at(1)
	})
}

func TestSummary(t *testing.T) {
	cases := []struct {
		frame, method, want string
	}{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, "x", "-32601 Method not found"},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AAAA"}]}}`, "tools/call", `"a", image image/png`},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"bad"}],"isError":true}}`, "tools/call", `isError: "bad"`},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"sum":42}}}`, "tools/call", `{"sum":42}`},
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"b":{},"a":{}}}}`, "tools/call", "input required: a, b"},
		{`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"T","status":"working"}}}`, "tools/call", "task T working"},
		{`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b"}]}}`, "tools/list", "2 tools: a, b"},
		{`{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///x","name":"x"}]}}`, "resources/list", "1 resource: x"},
		{`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///x"}]}}`, "resources/read", "1 content: file:///x"},
		{`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"1"}}}`, "initialize", "s 1 · protocol 2025-06-18"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "ping", "{}"},
		{`{"jsonrpc":"2.0","id":1,"result":{"unknown":[1, 2]}}`, "", `{"unknown":[1,2]}`},
		{`{"jsonrpc":"2.0","id":1,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"x"}}}`, "sampling/createMessage", `{"model":"m","role":"assistant","content":{"type":"text","text":"x"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"total":4,"message":"half"}}`, "notifications/progress", "2/4 half"},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"stop"}}`, "notifications/cancelled", "id 7: stop"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"m":"x"}}}`, "tools/call", `echo {"m":"x"}`},
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c","version":"2"}}}`, "initialize", "c 2 · protocol 2025-06-18"},
		{`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`, "", "2 messages"},
		{`{"jsonrpc":"2.0"`, "", "invalid: invalid-json"},
	}
	for _, c := range cases {
		info := jsonrpc.Classify([]byte(c.frame))
		if got := Summary([]byte(c.frame), info, c.method); got != c.want {
			t.Errorf("Summary(%s, %s) = %q, want %q", c.frame, c.method, got, c.want)
		}
	}
	long := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x\n", 500) + `"}]}}`
	if got := Summary([]byte(long), jsonrpc.Classify([]byte(long)), "tools/call"); len([]rune(got)) > summaryWidth || strings.ContainsAny(got, "\n") {
		t.Errorf("long summary not clipped to one line: %q", got)
	}
}

// TestShowJoinedStatsLabelled: several tapes read as one end with the sum
// of their "stats" events, which no writer recorded: show says so (text),
// and the data says how many tapes it sums (NDJSON); a single tape's stats
// event shows as recorded. Tapes joined with cat, one file, read as the
// joined read of them: the same.
func TestShowJoinedStatsLabelled(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 2 {
		p := filepath.Join(dir, fmt.Sprintf("t%d.jsonl.zst", i))
		writeTape(t, p, inSession(fmt.Sprint(i), c2s(time.Duration(i)*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)))
		paths = append(paths, p)
	}
	const label = "sum of the stats of 2 tapes (joined read, not recorded)"
	for _, tc := range []struct {
		name   string
		paths  []string
		joined bool
	}{
		{"one tape", paths[:1], false},
		{"two tapes", paths, true},
		{"two tapes joined with cat", []string{peertest.Cat(t, paths...)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := func(f Format) string {
				r, err := tape.OpenJoined(tc.paths)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				var b bytes.Buffer
				if _, err := ShowTape(context.Background(), r, &b, WithFormat(f)); err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
				return lines[len(lines)-1]
			}
			text := last(FormatText)
			if !strings.Contains(text, "stats") || strings.Contains(text, label) != tc.joined || strings.Contains(text, "joined read") && !tc.joined {
				t.Errorf("last line %q: labelled %q should be %v", text, label, tc.joined)
			}
			var nd struct {
				Event string `json:"event"`
				Data  struct {
					Tapes *int64 `json:"tapes"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(last(FormatNDJSON)), &nd); err != nil {
				t.Fatal(err)
			}
			if nd.Event != tape.EventStats || (nd.Data.Tapes != nil) != tc.joined || tc.joined && *nd.Data.Tapes != 2 {
				t.Errorf("ndjson stats event %q, tapes %v; joined %v", nd.Event, nd.Data.Tapes, tc.joined)
			}
		})
	}
}
