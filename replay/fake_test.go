package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// fakeConn is an in-process server: handle answers each frame sent.
type fakeConn struct {
	handle func(frame []byte) []string
	in     chan transport.Incoming
	once   sync.Once
	done   chan struct{}

	mu     sync.Mutex
	sent   []string
	noEOL  []bool // SendOptions.NoEOL of each frame sent
	forget bool   // do not keep sent (long replays)
}

func newFakeConn(handle func([]byte) []string) *fakeConn {
	return &fakeConn{handle: handle, in: make(chan transport.Incoming, 100), done: make(chan struct{})}
}

func (c *fakeConn) Send(_ context.Context, frame []byte, opt transport.SendOptions) (*transport.Exchange, error) {
	c.mu.Lock()
	if !c.forget {
		c.sent = append(c.sent, string(frame))
		c.noEOL = append(c.noEOL, opt.NoEOL)
	}
	c.mu.Unlock()
	for _, out := range c.handle(frame) {
		select {
		case c.in <- transport.Incoming{Frame: []byte(out), Stream: transport.StreamStdout, Time: time.Now()}:
		case <-c.done:
			return nil, transport.ErrClosed
		}
	}
	return &transport.Exchange{}, nil
}

func (c *fakeConn) Recv(ctx context.Context) (transport.Incoming, error) {
	select {
	case in := <-c.in:
		return in, nil
	case <-c.done:
		return transport.Incoming{}, transport.ErrClosed
	case <-ctx.Done():
		return transport.Incoming{}, ctx.Err()
	}
}

func (c *fakeConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

// initAnswer is a fake server's answer to initialize with live id id.
func initAnswer(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`
}

// mcpServer is a fake server's handler: it answers initialize with
// initAnswer and every other request with call, and nothing else.
func mcpServer(call func(frame []byte, info *jsonrpc.Info, id string) []string) func([]byte) []string {
	return func(frame []byte) []string {
		info := jsonrpc.Classify(frame)
		id := string(info.ID.Raw)
		switch {
		case info.Kind != jsonrpc.KindRequest:
			return nil
		case info.Method == "initialize":
			return []string{initAnswer(id)}
		}
		return call(frame, &info, id)
	}
}

// opaqueServer answers like a server whose task ids and request states
// change from run to run (they hold run): tools/call "task" starts a task,
// tasks/get checks its id; tools/call "mrtr" asks for input with a state,
// and accepts a retry only with the state it gave.
func opaqueServer(run string) func([]byte) []string {
	return func(frame []byte) []string {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name         string `json:"name"`
				TaskID       string `json:"taskId"`
				RequestState string `json:"requestState"`
			} `json:"params"`
		}
		if json.Unmarshal(frame, &m) != nil || m.ID == nil || m.Method == "" {
			return nil
		}
		reply := func(result string) []string {
			return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)}
		}
		switch {
		case m.Method == "tools/call" && m.Params.Name == "task":
			return reply(`{"task":{"taskId":"task-` + run + `","status":"working"}}`)
		case m.Method == "tasks/get" && m.Params.TaskID == "task-"+run:
			return reply(`{"taskId":"task-` + run + `","status":"completed"}`)
		case m.Method == "tasks/get":
			return reply(`{"error":"unknown task ` + m.Params.TaskID + `"}`)
		case m.Method == "tools/call" && m.Params.RequestState == "":
			return reply(`{"resultType":"input_required","requestState":"state-` + run + `","inputRequests":{"q":{"method":"elicitation/create"}}}`)
		case m.Method == "tools/call" && m.Params.RequestState == "state-"+run:
			return reply(`{"content":[{"type":"text","text":"accepted"}]}`)
		case m.Method == "tools/call":
			return reply(`{"content":[{"type":"text","text":"bad state ` + m.Params.RequestState + `"}]}`)
		}
		return reply(`{}`)
	}
}

// writeTape writes a one-session tape of (dir, frame) pairs.
func writeTape(t *testing.T, msgs [][2]string) []*Session {
	t.Helper()
	return loadBytes(t, tapeBytes(t, msgs))
}

// tapeBytes returns a one-session tape of (dir, frame) pairs.
func tapeBytes(t *testing.T, msgs [][2]string, opts ...tape.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newTapeBuffer(t, &buf, opts...)
	for i, m := range msgs {
		w.Write(&tape.Record{Type: tape.TypeMessage, Time: int64(i+1) * 1000, Session: "s", Dir: tape.Direction(m[0]), Frame: []byte(m[1])})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// loadBytes loads the sessions of a tape held in data.
func loadBytes(t *testing.T, data []byte) []*Session {
	t.Helper()
	r, err := tape.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sessions, _, err := Load(r)
	if err != nil {
		t.Fatal(err)
	}
	return sessions
}

func TestReplayRewritesOpaqueValues(t *testing.T) {
	const c2s, s2c = "c2s", "s2c"
	sessions := writeTape(t, [][2]string{
		{c2s, `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"task"}}`},
		{s2c, `{"jsonrpc":"2.0","id":"x","result":{"task":{"taskId":"task-REC","status":"working"}}}`},
		{c2s, `{"jsonrpc":"2.0","id":40,"method":"tasks/get","params":{"taskId":"task-REC"}}`},
		{s2c, `{"jsonrpc":"2.0","id":40,"result":{"taskId":"task-REC","status":"completed"}}`},
		{c2s, `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"mrtr"}}`},
		{s2c, `{"jsonrpc":"2.0","id":41,"result":{"resultType":"input_required","requestState":"state-REC","inputRequests":{"q":{"method":"elicitation/create"}}}}`},
		{c2s, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"mrtr","requestState":"state-REC","inputResponses":{"q":{"action":"accept"}}}}`},
		{s2c, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"accepted"}]}}`},
	})
	conn := newFakeConn(opaqueServer("LIVE"))
	rep, err := Run(context.Background(), sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if rep.ExitCode() != 0 || rep.Sessions[0].Matched != 4 {
		t.Fatalf("exit %d:\n%s\nsent:\n%s", rep.ExitCode(), text.String(), strings.Join(conn.sent, "\n"))
	}
	// Ids are fresh, of the recorded types, in order.
	var ids []string
	for _, f := range conn.sent {
		ids = append(ids, jsonrpc.Classify([]byte(f)).ID.String())
	}
	if got := strings.Join(ids, " "); got != `"mcptape-1" 2 3 4` {
		t.Errorf("live ids %s", got)
	}
}

func TestReplayFallbackForUnrecordedServerRequest(t *testing.T) {
	sessions := writeTape(t, [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`},
		{"s2c", `{"jsonrpc":"2.0","id":1,"result":{}}`},
	})
	// The live server asks for roots before answering: not in the
	// recording, so the fallback answers it, and it counts as extra.
	conn := newFakeConn(func(frame []byte) []string {
		info := jsonrpc.Classify(frame)
		if info.Kind == jsonrpc.KindRequest {
			return []string{`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`, `{"jsonrpc":"2.0","id":` + info.ID.String() + `,"result":{}}`}
		}
		return nil
	})
	rep, err := Run(context.Background(), sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Sessions[0]
	if rep.ExitCode() != 1 || s.Extra != 1 || s.Matched != 1 || len(s.Problems) != 1 || s.Problems[0].Kind != "fallback" {
		t.Fatalf("exit %d, report %+v", rep.ExitCode(), s)
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	want := `{"jsonrpc":"2.0","id":"srv-1","error":{"code":-32601,"message":"mcptape replay: no recorded answer"}}`
	if len(conn.sent) != 2 || conn.sent[1] != want {
		t.Errorf("sent %q, want the request then %s", conn.sent, want)
	}
}

// TestLoadDependencies checks the causal dependencies Load gives, on
// tapes written in time order and on older tapes, some of whose stamps
// come from a proxy that recorded a POST when it was answered.
func TestLoadDependencies(t *testing.T) {
	tests := []struct {
		name      string
		msgs      [][2]string
		want      []string // per step: its dependencies, as "s2c index,..."
		olderOnly bool     // a stamp only an older recorder gave
	}{
		{"sequential", [][2]string{
			{"c2s", `{"jsonrpc":"2.0","id":1,"method":"a"}`},
			{"s2c", `{"jsonrpc":"2.0","id":1,"result":{}}`},
			{"c2s", `{"jsonrpc":"2.0","method":"n"}`},
		}, []string{"", "0"}, false},
		{"pipelined", [][2]string{
			{"c2s", `{"jsonrpc":"2.0","id":1,"method":"a"}`},
			{"c2s", `{"jsonrpc":"2.0","id":2,"method":"b"}`},
			{"s2c", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		}, []string{"", ""}, false},
		{"response stamped before its request", [][2]string{
			{"s2c", `{"jsonrpc":"2.0","id":1,"result":{}}`},
			{"c2s", `{"jsonrpc":"2.0","id":1,"method":"a"}`},
			{"c2s", `{"jsonrpc":"2.0","id":2,"method":"b"}`},
		}, []string{"", "0"}, true},
		{"answer stamped after the response it allowed", [][2]string{
			{"c2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
			{"s2c", `{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage"}`},
			{"s2c", `{"jsonrpc":"2.0","id":1,"result":{}}`},
			{"c2s", `{"jsonrpc":"2.0","id":0,"result":{}}`},
		}, []string{"", "0"}, false},
		{"cancel stamped after the answer it caused", [][2]string{
			{"c2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
			{"s2c", `{"jsonrpc":"2.0","id":1,"result":{"isError":true}}`},
			{"c2s", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
		}, []string{"", ""}, false},
	}
	for _, tc := range tests {
		for _, older := range []bool{false, true} {
			if tc.olderOnly && !older {
				continue
			}
			var opts []tape.Option
			if older {
				opts = append(opts, tape.WithCallOrder())
			}
			t.Run(fmt.Sprintf("%s/older=%v", tc.name, older), func(t *testing.T) {
				s := loadBytes(t, tapeBytes(t, tc.msgs, opts...))[0]
				var got []string
				for _, st := range s.Steps {
					var deps []string
					for _, d := range st.Deps {
						deps = append(deps, fmt.Sprint(d))
					}
					got = append(got, strings.Join(deps, ","))
				}
				if strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("dependencies %q, want %q", got, tc.want)
				}
			})
		}
	}
}
