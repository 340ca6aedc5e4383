package check

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// TestRunAbandonedAndUnfinishedPerSession: two sessions of one tape (an
// HTTP recording has one per Mcp-Session-Id) reuse the same request ids
// and the same task id. Each session has its own abandoned and unfinished
// cases, counting and naming its own operations: task T3 of one session
// and task T3 of the other are two tasks. (Both signals were one case of
// the whole tape, counting every session's operations together.)
func TestRunAbandonedAndUnfinishedPerSession(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`
	session := func(id string, at time.Time, more ...string) []*tape.Record {
		return tapetest.Messages(id, at, append([]string{
			`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask",` + meta + `}}`,
			`< {"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"elicitation/create"}}}}`,
			`> {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","task":{},` + meta + `}}`,
			`< {"jsonrpc":"2.0","id":7,"result":{"resultType":"task","task":{"taskId":"T3","status":"working"}}}`,
			`> {"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"T3",` + meta + `}}`,
			`< {"jsonrpc":"2.0","id":8,"result":{"taskId":"T3","status":"working"}}`,
		}, more...)...)
	}
	recs := session("sess-a", start)
	recs = append(recs, session("sess-b", start.Add(time.Second),
		`> {"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","task":{},`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":9,"result":{"resultType":"task","task":{"taskId":"T4","status":"working"}}}`,
	)...)
	path := writeRecords(t, "http", recs...)
	res, err := Run(context.Background(), []string{path}, WithFailOn(SignalAbandoned, SignalUnfinished))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		count   int64
		details []string
	}
	want := map[string]got{
		"sess-a " + SignalAbandoned:  {1, []string{"record 3: tools/call id 5 ask"}},
		"sess-a " + SignalUnfinished: {1, []string{"record 5: tools/call id 7 slow"}},
		"sess-b " + SignalAbandoned:  {1, []string{"record 11: tools/call id 5 ask"}},
		"sess-b " + SignalUnfinished: {2, []string{"record 13: tools/call id 7 slow", "record 17: tools/call id 9 slow"}},
	}
	for _, c := range res.Cases {
		if c.Signal != SignalAbandoned && c.Signal != SignalUnfinished {
			continue
		}
		k := c.Session + " " + c.Signal
		w, ok := want[k]
		if !ok {
			t.Errorf("unexpected case %+v", c)
			continue
		}
		delete(want, k)
		if !c.Failed() || c.Count != w.count || !slices.Equal(c.Details, w.details) {
			t.Errorf("%s: failed %v, count %d, details %q; want %d, %q", k, c.Failed(), c.Count, c.Details, w.count, w.details)
		}
	}
	if len(want) > 0 {
		t.Errorf("no cases %v", want)
	}
}

// TestRunUnansweredNamedPerSession: every session's unanswered case names
// its own requests, whatever the other sessions hold. Session a loses 20
// requests to id reuses (the tape lists 20, DefaultMaxListed), session b
// one: b's case names it, and its request never answered, by record. (The
// requests superseded by a reuse were kept for the sessions' details only
// while the tape's list had room: b's was not named.)
func TestRunUnansweredNamedPerSession(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	ping := `> {"jsonrpc":"2.0","id":1,"method":"ping"}`
	var a []string
	for range analysis.DefaultMaxListed + 1 {
		a = append(a, ping)
	}
	recs := append(tapetest.Messages("a", start, a...), tapetest.Messages("b", start.Add(time.Second), ping, ping)...)
	res, err := Run(context.Background(), []string{writeRecords(t, "http", recs...)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cases {
		if c.Signal != SignalUnanswered || c.Session != "b" {
			continue
		}
		if want := []string{"record 22: ping id 1", "record 23: ping id 1"}; c.Count != 2 || !slices.Equal(c.Details, want) {
			t.Errorf("session b: count %d, details %q; want 2, %q", c.Count, c.Details, want)
		}
		return
	}
	t.Fatal("no unanswered case of session b")
}

// TestRunUnansweredNamesCutStream: a streamed answer the tape cuts before
// its end part counts as never answered in its session's unanswered case,
// which names the request too. (It was counted and not named.)
func TestRunUnansweredNamesCutStream(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	path := writeRecords(t, "http", tapetest.Messages("s", start,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat","arguments":{"query":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"type":"content_start"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"type":"content_delta","delta":"cut here"}}`,
	)...)
	res, err := Run(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cases {
		if c.Signal == SignalUnanswered {
			if want := []string{"record 1: tools/call id 2 chat"}; !c.Failed() || c.Count != 1 || !slices.Equal(c.Details, want) {
				t.Errorf("failed %v, count %d, details %q; want 1, %q", c.Failed(), c.Count, c.Details, want)
			}
			return
		}
	}
	t.Fatal("no unanswered case")
}

// TestRunAbandonedSameTool: MRTR operations of one tool in one session
// are told apart. The client calls ask (id 5), gets asked for input and
// gives up; calls it again (id 6) and gives up again; calls it a third
// time (id 7) and retries that one (id 8), which completes. Two
// operations were abandoned, ids 5 and 6. (A later operation of the same
// tool replaced the one pending: one abandoned, id 6, and the retry
// ended the other.)
func TestRunAbandonedSameTool(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`
	ask := func(id string) []string {
		return []string{`> {"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"ask",` + meta + `}}`,
			`< {"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"elicitation/create"}}}}`}
	}
	lines := append(append(ask("5"), ask("6")...), ask("7")...)
	lines = append(lines,
		`> {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ask","inputResponses":{"x":{"action":"decline"}},`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":8,"result":{"resultType":"complete","content":[]}}`)
	res, err := Run(context.Background(), []string{writeRecords(t, "stdio", tapetest.Messages("s", start, lines...)...)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cases {
		if c.Signal == SignalAbandoned {
			if want := []string{"record 1: tools/call id 5 ask", "record 3: tools/call id 6 ask"}; c.Count != 2 || !slices.Equal(c.Details, want) {
				t.Errorf("count %d, details %q; want 2, %q", c.Count, c.Details, want)
			}
			return
		}
	}
	t.Fatal("no abandoned case")
}

// TestRunSessionlessOperationsAcrossConnections: without a session id
// (2026-07-28 stateless HTTP) the recorder makes a session of each client
// connection, and a client may go on on another one: an MRTR retry and a
// task's result fetched on a second connection end the operations begun on
// the first. Neither is abandoned nor unfinished. (Both were, keyed by
// the connection.)
func TestRunSessionlessOperationsAcrossConnections(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC).UnixNano()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`
	var recs []*tape.Record
	var x uint64
	add := func(conn string, dir tape.Direction, frame string) {
		at += int64(time.Millisecond)
		if dir == tape.ClientToServer {
			x++
		}
		recs = append(recs, &tape.Record{Type: tape.TypeMessage, Time: at, Session: conn, Dir: dir, Exchange: x, Frame: []byte(frame)})
	}
	for i, conn := range []string{"conn-1", "conn-2"} {
		recs = append(recs, &tape.Record{Type: tape.TypeEvent, Time: at, Session: conn, Event: tape.EventOpen,
			Data: []byte(fmt.Sprintf(`{"kind":"connection","how":"connection","conn":%d}`, i+1))})
	}
	add("conn-1", tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask",`+meta+`}}`)
	add("conn-1", tape.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"elicitation/create"}}}}`)
	add("conn-1", tape.ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow",`+meta+`}}`)
	add("conn-1", tape.ServerToClient, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","task":{"taskId":"T1","status":"working"}}}`)
	add("conn-2", tape.ClientToServer, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","inputResponses":{"x":{"action":"decline"}},`+meta+`}}`)
	add("conn-2", tape.ServerToClient, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}`)
	add("conn-2", tape.ClientToServer, `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"T1",`+meta+`}}`)
	add("conn-2", tape.ServerToClient, `{"jsonrpc":"2.0","id":4,"result":{"taskId":"T1","status":"completed"}}`)
	res, err := Run(context.Background(), []string{writeRecords(t, "http", recs...)}, WithFailOn(SignalAbandoned, SignalUnfinished))
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != 2 || res.Failed() {
		t.Errorf("%d sessions, failed %q; want 2 sessions, none failed", res.Sessions, fired(res, false))
	}
}
