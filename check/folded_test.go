package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/tape"
)

// TestFoldedSessionsAreChecked: the sessions beyond the inspection's
// listing bound (analysis.DefaultMaxSessions) have no cases of their own,
// but what went wrong in them fires the signals and assertions of one
// case per signal that covers them all: the verdict is the whole tape's,
// and the sessions are all counted.
func TestFoldedSessionsAreChecked(t *testing.T) {
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)
	const listed, folded = analysis.DefaultMaxSessions, 3
	var recs []*tape.Record
	add := func(session string, dir tape.Direction, frame string) {
		at = at.Add(time.Millisecond)
		recs = append(recs, &tape.Record{Type: tape.TypeMessage, Time: at.UnixNano(), Session: session, Dir: dir, Frame: []byte(frame)})
	}
	for i := range listed + folded {
		s := fmt.Sprintf("s%d", i)
		add(s, tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		add(s, tape.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}
	// In the folded sessions: a tool call never answered, an answer to no
	// request, an error response, an MRTR operation abandoned, a task
	// never finished.
	add("s1000", tape.ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete","arguments":{}}}`)
	add("s1001", tape.ServerToClient, `{"jsonrpc":"2.0","id":99,"result":{}}`)
	add("s1002", tape.ClientToServer, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	add("s1002", tape.ServerToClient, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`)
	add("s1002", tape.ClientToServer, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	add("s1002", tape.ServerToClient, `{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"roots/list"}}}}`)
	add("s1001", tape.ClientToServer, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{},"task":{}}}`)
	add("s1001", tape.ServerToClient, `{"jsonrpc":"2.0","id":5,"result":{"task":{"taskId":"T1","status":"working"}}}`)

	res, err := Run(context.Background(), []string{writeRecords(t, "stdio", recs...)},
		WithForbidTool("delete"), WithExpectTool("delete"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != listed+folded {
		t.Errorf("%d sessions, want %d", res.Sessions, listed+folded)
	}
	want := []string{"forbid-tool delete", SignalUnanswered, SignalViolation}
	if got := fired(res, false); !slices.Equal(got, want) {
		t.Errorf("failed %q, want %q", got, want)
	}
	if got, want := fired(res, true), []string{SignalAbandoned, SignalError, SignalUnfinished}; !slices.Equal(got, want) {
		t.Errorf("notes %q, want %q", got, want)
	}
	var b strings.Builder
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[3 more sessions]: 1 request never answered", "1003 sessions"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	for _, c := range res.Cases {
		if c.Fired && c.Folded != folded {
			t.Errorf("case %s fired for session %q, folded %d; want the %d folded sessions", c.Name, c.Session, c.Folded, folded)
		}
	}
}
