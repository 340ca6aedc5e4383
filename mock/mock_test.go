package mock

import (
	"errors"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
)

// baseTape is a small recorded session: initialize, a tool asked twice
// with different answers, a paginated list, progress, a log message.
var baseTape = []string{
	`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"1"}}}`,
	`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roll","arguments":{"sides":6}}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roll","arguments":{"sides":6}}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}]}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a"}],"nextCursor":"c1"}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"c1"}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"b"}]}}`,
	`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"rec-tok"}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"rec-tok","progress":1}}`,
	`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`,
	`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"done"}]}}`,
}

func newMock(t *testing.T, lines []string, opts ...Option) *Mock {
	t.Helper()
	m, err := New([]*replay.Session{loadSession(t, writeTape(t, lines...))}, append([]Option{WithMaxSpeed()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const (
	initReq = `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"x":{}},"clientInfo":{"name":"live","version":"2"}}}`
	roll    = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"roll","arguments":{"sides":6},"_meta":{"k":1}}}`
)

func rollN(n int) string { return strings.Replace(roll, "%d", string(rune('0'+n)), 1) }

// TestMockMatching checks which recorded answer each live request gets.
func TestMockMatching(t *testing.T) {
	tests := []struct {
		name  string
		opts  []Option
		in    []string
		want  []string
		tape  []string // baseTape when nil
		never int      // recorded requests never asked, checked when tape is set
	}{
		{
			name: "initialize answered whatever the client info, under the live id",
			in:   []string{initReq},
			want: []string{`{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"1"}}}`},
		},
		{
			name: "recorded order, then the last answer again",
			in:   []string{rollN(7), rollN(8), rollN(9)},
			want: []string{
				`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"3"}]}}`,
				`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"5"}]}}`,
				`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"5"}]}}`,
			},
		},
		{
			name: "cycle starts again",
			opts: []Option{WithCycle()},
			in:   []string{rollN(7), rollN(8), rollN(9)},
			want: []string{
				`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"3"}]}}`,
				`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"5"}]}}`,
				`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"3"}]}}`,
			},
		},
		{
			name: "cursors are ignored: pages in recorded order",
			in:   []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"zz"}}`},
			want: []string{
				`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"c1"}}`,
				`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"}]}}`,
			},
		},
		{
			name: "progress under the live token, log message in place",
			in:   []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":42}}}`},
			want: []string{
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":42,"progress":1}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`,
				`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`,
			},
		},
		{
			name: "no progress when the live request asks for none",
			in:   []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`},
			want: []string{
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`,
				`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`,
			},
		},
		{
			name: "other arguments: error naming the closest recorded request",
			in:   []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roll","arguments":{"sides":20}}}`},
			want: []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"mcptape mock: no recorded answer for tools/call \"roll\": closest recorded request is record 4, tools/call \"roll\": params.arguments.sides: recorded 6, got 20"}}`},
		},
		{
			name: "number spelling is ignored: 6.0 and 60e-1 are the recorded 6",
			in: []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roll","arguments":{"sides":6.0}}}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roll","arguments":{"sides":60e-1}}}`,
			},
			want: []string{
				`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}`,
				`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}]}}`,
			},
		},
		{
			name: "a number of another value is another request",
			in:   []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roll","arguments":{"sides":6.5}}}`},
			want: []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"mcptape mock: no recorded answer for tools/call \"roll\": closest recorded request is record 4, tools/call \"roll\": params.arguments.sides: recorded 6, got 6.5"}}`},
		},
		{
			name: "match tool: other arguments are fine",
			opts: []Option{WithMatch(MatchTool)},
			in:   []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roll","arguments":{"sides":20}}}`},
			want: []string{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}`},
		},
		{
			name: "match method: any tool",
			opts: []Option{WithMatch(MatchMethod)},
			in:   []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other"}}`},
			want: []string{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}`},
		},
		{
			name: "unknown method",
			in:   []string{`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`},
			want: []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"mcptape mock: no recorded answer for prompts/list: no recorded request has method \"prompts/list\" (recorded: initialize, tools/call, tools/list)"}}`},
		},
		{
			name: "garbage gets a parse error and serving goes on",
			in:   []string{`{"jsonrpc":`, `not json`, rollN(1)},
			want: []string{
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
				`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}`,
			},
		},
		{
			name:  "a recorded ping is answered from the recording",
			in:    []string{`{"jsonrpc":"2.0","id":9,"method":"ping"}`},
			want:  []string{`{"jsonrpc":"2.0","id":9,"result":{}}`},
			tape:  append(baseTape[:2:2], `> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`),
			never: 1, // initialize
		},
		{
			name: "a batch is answered with one array of responses",
			in:   []string{"[" + rollN(1) + `,{"jsonrpc":"2.0","method":"notifications/initialized"},` + rollN(2) + "]"},
			want: []string{`[{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}},{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}]}}]`},
		},
		{
			name: "a batch of notifications gets nothing",
			in:   []string{`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, `{"jsonrpc":"2.0","id":9,"method":"ping"}`},
			want: []string{`{"jsonrpc":"2.0","id":9,"result":{}}`},
		},
		{
			name:  "logging/setLevel is answered when the recorded server offered logging",
			in:    []string{`{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug"}}`},
			want:  []string{`{"jsonrpc":"2.0","id":9,"result":{}}`},
			tape:  []string{baseTape[0], `< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"logging":{},"tools":{}},"serverInfo":{"name":"srv","version":"1"}}}`},
			never: 1, // initialize
		},
		{
			name: "logging/setLevel is unknown when the recorded server did not offer logging",
			in:   []string{`{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug"}}`},
			want: []string{`{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"mcptape mock: no recorded answer for logging/setLevel: no recorded request has method \"logging/setLevel\" (recorded: initialize, tools/call, tools/list)"}}`},
		},
		{
			name: "an empty batch gets one Invalid Request error, not an array",
			in:   []string{`[]`, `[ ]`},
			want: []string{
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: empty batch"}}`,
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: empty batch"}}`,
			},
		},
		{
			name: "a request with a null id is an Invalid Request, recorded or ping",
			in:   []string{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`},
			want: []string{
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the id of a request must not be null"}}`,
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the id of a request must not be null"}}`,
			},
		},
		{
			name: "ping is answered even when not recorded",
			in:   []string{`{"jsonrpc":"2.0","id":9,"method":"ping"}`},
			want: []string{`{"jsonrpc":"2.0","id":9,"result":{}}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := tt.tape
			if tp == nil {
				tp = baseTape
			}
			m := newMock(t, tp, tt.opts...)
			got := converseOrdered(t, m, tt.in)
			if r := m.Report(); tt.tape != nil && len(r.NeverAsked) != tt.never {
				t.Errorf("never asked %q, want %d", r.NeverAsked, tt.never)
			}
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("answers \nwant %q\ngot  %q", tt.want, got)
			}
		})
	}
}

// converseOrdered sends the lines one at a time, each after the answers to
// the previous one, so that the output order is fixed.
func converseOrdered(t *testing.T, m *Mock, in []string) []string {
	t.Helper()
	var out []string
	for _, l := range in {
		out = append(out, converse(t, m, l)...)
	}
	return out
}

// TestMockReport checks the exit report: matched, unmatched, never asked.
func TestMockReport(t *testing.T) {
	m := newMock(t, baseTape)
	converseOrdered(t, m, []string{initReq, rollN(1), `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`})
	r := m.Report()
	if r.Matched != 2 || len(r.Unmatched) != 1 || r.Recorded != 6 {
		t.Errorf("report %+v: want 2 matched, 1 unmatched, 6 recorded", r)
	}
	want := []string{`record 6, tools/call "roll"`, "record 8, tools/list", "record 10, tools/list", `record 12, tools/call "slow"`} // as inspect and show number them
	if !reflect.DeepEqual(want, r.NeverAsked) {
		t.Errorf("never asked \nwant %q\ngot  %q", want, r.NeverAsked)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2 requests matched, 1 unmatched; 4 of 6 recorded requests never asked") {
		t.Errorf("text report:\n%s", b.String())
	}
}

// TestMockStrict checks that a strict run ends at the first mismatch,
// also when the client's input ends right after the mismatched request
// (the end of input and the mismatch then race: a CI run once exited 0).
func TestMockStrict(t *testing.T) {
	for i := range 200 {
		m := newMock(t, baseTape, WithStrict())
		var out strings.Builder
		err := m.ServeStdio(t.Context(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"nope"}`+"\n"), &out)
		if !errors.Is(err, ErrMismatch) {
			t.Fatalf("run %d: err = %v, want ErrMismatch", i, err)
		}
		if !strings.Contains(out.String(), `"code":-32601`) {
			t.Fatalf("run %d: the client got no error answer: %q", i, out.String())
		}
	}
}

// TestMockFaults checks that faults follow the seed: the same seed gives
// the same answers, and the rates are applied.
func TestMockFaults(t *testing.T) {
	run := func(seed int64) []string {
		m := newMock(t, baseTape, WithFaults(Faults{ErrorRate: 0.5, Seed: seed}))
		var in []string
		for i := 1; i <= 9; i++ {
			in = append(in, rollN(i))
		}
		got := converseOrdered(t, m, in)
		sort.Strings(got)
		return got
	}
	a, b := run(3), run(3)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, other answers:\n%q\n%q", a, b)
	}
	failed := 0
	for _, l := range a {
		if strings.Contains(l, "injected fault") {
			failed++
		}
	}
	if failed == 0 || failed == len(a) {
		t.Errorf("%d of %d answers failed at rate 0.5", failed, len(a))
	}
}

// TestMockDisconnectAfter checks that the run ends after N answers.
func TestMockDisconnectAfter(t *testing.T) {
	m := newMock(t, baseTape, WithFaults(Faults{DisconnectAfter: 2}))
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- m.ServeStdio(t.Context(), pr, io.Discard) }()
	for i := 1; i <= 2; i++ {
		pw.Write([]byte(rollN(i) + "\n"))
	}
	err := <-errc
	if !errors.Is(err, ErrDisconnected) {
		t.Fatalf("err = %v, want ErrDisconnected", err)
	}
	pw.Close()
}

// TestMockDisconnectAfterCountsAnswers: requests matched at the same
// moment (three lines read at once, played at --speed max) get N answers,
// and the report counts those answered only.
func TestMockDisconnectAfterCountsAnswers(t *testing.T) {
	tests := []struct {
		after, want int
	}{{1, 1}, {2, 2}, {3, 3}}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.after), func(t *testing.T) {
			for range 20 {
				m := newMock(t, baseTape, WithMatch(MatchMethod), WithFaults(Faults{DisconnectAfter: tt.after}))
				var out strings.Builder
				err := m.ServeStdio(t.Context(), strings.NewReader(rollN(1)+"\n"+rollN(2)+"\n"+rollN(3)+"\n"), &out)
				if !errors.Is(err, ErrDisconnected) {
					t.Fatalf("err = %v, want ErrDisconnected", err)
				}
				if n := strings.Count(out.String(), `"result"`); n != tt.want || m.Report().Matched != tt.want {
					t.Fatalf("%d answers, %d matched; want %d:\n%s", n, m.Report().Matched, tt.want, out.String())
				}
			}
		})
	}
}

// TestMockOptionsRefused checks that bad option values are errors.
func TestMockOptionsRefused(t *testing.T) {
	s := loadSession(t, writeTape(t, baseTape...))
	for _, o := range []Option{WithSpeed(0), WithSpeed(-1), WithFaults(Faults{ErrorRate: 2}), WithFaults(Faults{DropRate: 0.6, ErrorRate: 0.6}),
		WithFaults(Faults{Delay: -1}), WithFaults(Faults{DisconnectAfter: -1}), WithMatch(7), nil} {
		if _, err := New([]*replay.Session{s}, o); err == nil {
			t.Errorf("New accepted a bad option")
		}
	}
}

// TestReportTextAgrees: the report's counts agree with their nouns.
func TestReportTextAgrees(t *testing.T) {
	tests := []struct {
		r    Report
		want string
	}{
		{Report{Session: "1", Matched: 1, Recorded: 1}, `mock of session "1": 1 request matched, 0 unmatched; 0 of 1 recorded request never asked`},
		{Report{Session: "1, 2", Matched: 2, Recorded: 3}, `mock of 2 sessions: 2 requests matched, 0 unmatched; 0 of 3 recorded requests never asked`},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := tt.r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := strings.Cut(b.String(), "\n"); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

// TestMockRefusesStreamedSessions: sessions that replay.Open streams from
// the file (a tape bigger than its memory) hold no messages; a mock of
// them answered nothing, as if nothing had been recorded. New says so.
func TestMockRefusesStreamedSessions(t *testing.T) {
	tp, err := replay.Open(writeTape(t, baseTape...), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Sessions) == 0 || !tp.Sessions[0].Streamed() {
		t.Fatalf("sessions %+v: want one streamed", tp.Sessions)
	}
	if _, err := New(tp.Sessions); err == nil || !strings.Contains(err.Error(), "streamed") {
		t.Errorf("New: %v, want an error saying the session is streamed", err)
	}
}
