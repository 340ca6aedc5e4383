package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/tape"
)

// TestErrorDetails: the error case of a session lists its JSON-RPC error
// responses (the request, its method and tool, the code and message), the
// first maxDetails of them, in the text, JSON and JUnit outputs.
func TestErrorDetails(t *testing.T) {
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	var recs []*tape.Record
	msg := func(sess string, dir tape.Direction, frame string) {
		recs = append(recs, &tape.Record{Type: tape.TypeMessage, Time: at + int64(len(recs)), Session: sess, Dir: dir, Frame: []byte(frame)})
	}
	msg("a", tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{}}}`)
	msg("a", tape.ServerToClient, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad arguments"}}`)
	msg("a", tape.ServerToClient, `{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"oops"}}`)
	for i := range maxDetails + 2 {
		msg("b", tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
		msg("b", tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"no ping"}}`, i))
	}
	res, err := Run(context.Background(), []string{writeRecords(t, "stdio", recs...)}, WithFailOn(SignalError))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		session, message string
		details          []string
	}{
		{"a", "2 error responses", []string{
			"record 2: tools/call id 1 search: error -32602 bad arguments",
			"record 3: unpaired response id \"x\": error -32603 oops"}},
		{"b", "7 error responses", []string{
			"record 5: ping id 0: error -32601 no ping", "record 7: ping id 1: error -32601 no ping",
			"record 9: ping id 2: error -32601 no ping", "record 11: ping id 3: error -32601 no ping",
			"record 13: ping id 4: error -32601 no ping"}},
	}
	var text, js, junit bytes.Buffer
	for _, write := range []struct {
		w *bytes.Buffer
		f func(io.Writer, *Result) error
	}{{&text, WriteText}, {&js, WriteJSON}, {&junit, WriteJUnit}} {
		if err := write.f(write.w, res); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range tests {
		t.Run(tt.session, func(t *testing.T) {
			for _, c := range res.Cases {
				if c.Signal != SignalError || c.Session != tt.session {
					continue
				}
				if !c.Failed() || c.Message != tt.message || !slices.Equal(c.Details, tt.details) {
					t.Errorf("case: failed %v, message %q, details %q; want %q, %q", c.Failed(), c.Message, c.Details, tt.message, tt.details)
				}
			}
			for _, d := range tt.details {
				q, _ := json.Marshal(d)
				x := strings.ReplaceAll(d, `"`, "&#34;")
				if !strings.Contains(text.String(), d) || !strings.Contains(js.String(), string(q)) || !strings.Contains(junit.String(), x) {
					t.Errorf("%q missing from an output:\n%s\n%s\n%s", d, text.String(), js.String(), junit.String())
				}
			}
		})
	}
}

// TestErrorDetailsPerSession: in a tape of many sessions, each with more
// error responses than a case shows, every session's error case lists
// its first ones, the last session's too (the details were the tape's
// first 20 error responses: the late sessions' cases had none), and its
// refused requests are all counted, past the tape's first 20.
func TestErrorDetailsPerSession(t *testing.T) {
	const sessions, errs = 30, maxDetails + 2
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	var recs []*tape.Record
	add := func(rec tape.Record) {
		rec.Time = at + int64(len(recs))
		recs = append(recs, &rec)
	}
	for s := range sessions {
		sess := fmt.Sprintf("s%02d", s)
		for i := range errs {
			x := uint64(s*100 + i + 1)
			add(tape.Record{Type: tape.TypeMessage, Session: sess, Dir: tape.ClientToServer, Exchange: x, Frame: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))})
			add(tape.Record{Type: tape.TypeMessage, Session: sess, Dir: tape.ServerToClient, Exchange: x, Frame: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"no ping"}}`, i))})
			add(tape.Record{Type: tape.TypeEvent, Session: sess, Exchange: x, Event: tape.EventHTTP, Data: []byte(`{"phase":"end","method":"POST","path":"/mcp","status":200,"closed_by":"server"}`)})
		}
		x := uint64(s*100 + 99) // and one request refused with a 403
		add(tape.Record{Type: tape.TypeMessage, Session: sess, Dir: tape.ClientToServer, Exchange: x, Frame: []byte(`{"jsonrpc":"2.0","id":"r","method":"tools/list"}`)})
		add(tape.Record{Type: tape.TypeEvent, Session: sess, Exchange: x, Event: tape.EventHTTP, Data: []byte(`{"phase":"end","method":"POST","path":"/mcp","status":403,"closed_by":"server"}`)})
	}
	res, err := Run(context.Background(), []string{writeRecords(t, "http", recs...)}, WithFailOn(SignalError))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range res.Cases {
		if c.Signal != SignalError || c.Session == "" {
			continue
		}
		n++
		want := fmt.Sprintf("%d error responses, 1 request refused with an HTTP error", errs)
		if c.Count != errs+1 || c.Message != want || len(c.Details) != maxDetails || !strings.Contains(c.Details[0], "ping id 0: error -32601 no ping") {
			t.Errorf("session %s: count %d, message %q, details %q; want %d, %q and the first %d error responses", c.Session, c.Count, c.Message, c.Details, errs+1, want, maxDetails)
		}
	}
	if n != sessions {
		t.Errorf("%d error cases, want %d", n, sessions)
	}
}

// TestCutRequests: of the real tapes whose one request was cut (see
// analysis.TestRecordedCutOutcomes), one the server's response broke off
// fires the unanswered signal, saying so; one the recorder's own shutdown
// cut (before or after the response started) does not: not the server's
// doing. Either is a request sent, for the thresholds ("errors<1%").
func TestCutRequests(t *testing.T) {
	tests := []struct {
		tape, message string
	}{
		{"http-broken-off", "1 request the server broke off before answering (its response or the session)"},
		{"http-cut-before-response", ""},
		{"http-cut-mid-response", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tape, func(t *testing.T) {
			res, err := Run(context.Background(), []string{fixture(tt.tape)})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := analysis.Inspect(context.Background(), fixture(tt.tape))
			if err != nil {
				t.Fatal(err)
			}
			if n := loadView(rep).Requests; n != 1 {
				t.Errorf("thresholds count %d requests, want the one sent", n)
			}
			for _, c := range res.Cases {
				if c.Signal != SignalUnanswered {
					continue
				}
				if c.Failed() != (tt.message != "") || c.Message != tt.message {
					t.Errorf("unanswered case: failed %v, message %q; want %q", c.Failed(), c.Message, tt.message)
				}
				if tt.message != "" && (len(c.Details) != 1 || !strings.Contains(c.Details[0], "tools/call id 1 slow broken off after HTTP 200")) {
					t.Errorf("details %q: want the tools/call broken off", c.Details)
				}
			}
		})
	}
}

// TestClientGoneRequest: a request in flight when a stdio client closed
// its input, which the server left unanswered as it exited, does not fire
// the unanswered signal (the client left before the answer), and is a
// request sent for the thresholds.
func TestClientGoneRequest(t *testing.T) {
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	path := writeRecords(t, "stdio",
		&tape.Record{Type: tape.TypeMessage, Time: at, Session: "1", Dir: tape.ClientToServer,
			Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)},
		&tape.Record{Type: tape.TypeEvent, Time: at + 1e6, Session: "1", Event: tape.EventExit, Data: []byte(`{"code":0}`)},
		&tape.Record{Type: tape.TypeEvent, Time: at + 1e6, Session: "1", Event: tape.EventClose, Data: []byte(`{"by":"client-eof"}`)})
	res, err := Run(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Inspect(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if n := loadView(rep).Requests; n != 1 {
		t.Errorf("thresholds count %d requests, want the one sent", n)
	}
	for _, c := range res.Cases {
		if c.Signal == SignalUnanswered && c.Fired {
			t.Errorf("unanswered fired: %s", c.Message)
		}
	}
}
