package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayServerLogLines checks a server that writes lines that are not
// JSON-RPC messages (log lines on stdout): as many as the recording holds
// are let through, not compared; one more fails the replay, as before.
func TestReplayServerLogLines(t *testing.T) {
	const logLine = "starting up... ok"
	msgs := [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`},
		{"s2c", logLine},
		{"s2c", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`},
		{"c2s", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{"s2c", `{"not":"a message"}`},
		{"s2c", `{"jsonrpc":"2.0","id":2,"result":{}}`},
	}
	// server answers initialize, and every other request after logs (lines
	// that are not messages).
	server := func(logs ...string) func([]byte) []string {
		return mcpServer(func(_ []byte, _ *jsonrpc.Info, id string) []string {
			return append(logs, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
		})
	}
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	if err := os.WriteFile(path, tapeBytes(t, msgs), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		streamed bool
		handle   func([]byte) []string
		exit     int
		failure  string
	}{
		{"as-recorded", false, func(f []byte) []string {
			if jsonrpc.Classify(f).Method == "initialize" {
				return append([]string{logLine}, server()(f)...)
			}
			return server(`{"not":"a message"}`)(f)
		}, 0, ""},
		{"as-recorded-streamed", true, func(f []byte) []string {
			if jsonrpc.Classify(f).Method == "initialize" {
				return append([]string{logLine}, server()(f)...)
			}
			return server(`{"not":"a message"}`)(f)
		}, 0, ""},
		{"other-lines-as-many", false, server("log: another line"), 0, ""},
		{"fewer", false, server(), 0, ""},
		{"one-more", false, server("a", "b", "c"), 2, `the server sent a frame that is not JSON: "c"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sessions []*Session
			if tc.streamed {
				sessions = openStreamed(t, path)
			} else {
				sessions = writeTape(t, msgs)
			}
			if got := sessions[0].Invalid; got != 2 {
				t.Fatalf("Session.Invalid = %d, want 2", got)
			}
			conn := newFakeConn(tc.handle)
			rep, err := Run(context.Background(), sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if rep.ExitCode() != tc.exit || (tc.exit == 0 && rep.Sessions[0].Matched != 2) {
				t.Fatalf("exit %d, want %d:\n%s", rep.ExitCode(), tc.exit, text.String())
			}
			if tc.failure != "" && !strings.Contains(text.String(), tc.failure) {
				t.Errorf("report does not say %q:\n%s", tc.failure, text.String())
			}
		})
	}
}

// TestDescribeStep checks how steps are named in messages.
func TestDescribeStep(t *testing.T) {
	tests := []struct {
		st   Step
		want string
	}{
		{Step{Kind: jsonrpc.KindRequest, Method: "tools/call", Name: "echo", IDKey: "1"}, "tools/call echo, recorded id 1"},
		{Step{Kind: jsonrpc.KindNotification, Method: "notifications/initialized"}, "notifications/initialized"},
		{Step{Kind: jsonrpc.KindResponse, IDKey: `"s-1"`}, `answer to server request "s-1"`},
		{Step{Kind: jsonrpc.KindError, IDKey: "4"}, "answer to server request 4"},
		{Step{Kind: jsonrpc.KindInvalid, Frame: []byte("")}, "a frame that is not a JSON-RPC message"},
		{Step{Kind: jsonrpc.KindBatch, Frame: []byte("[]")}, "a frame that is not a JSON-RPC message"},
		{Step{Kind: jsonrpc.KindInvalid, Closes: "7"}, "closing the stream of request 7"},
		// Names from the tape stay text: no escape sequence reaches a terminal.
		{Step{Kind: jsonrpc.KindRequest, Method: "to\x1b]0;t\x07ols/call", Name: "x\x1b[2J", IDKey: "2"}, "to·]0;t·ols/call x·[2J, recorded id 2"},
		{Step{Kind: jsonrpc.KindNotification, Method: "n\x1b[31m"}, "n·[31m"},
	}
	for _, tc := range tests {
		if got := describeStep(&tc.st); got != tc.want {
			t.Errorf("describeStep(%+v) = %q, want %q", tc.st, got, tc.want)
		}
	}
}

// TestReportTextKeepsControlCharactersOut checks that the text report
// writes the control characters of names from the tape as marks.
func TestReportTextKeepsControlCharactersOut(t *testing.T) {
	rep := &Report{Sessions: []*SessionReport{{Session: "s\x1b]0;t\x07", Problems: []Problem{{Kind: "missing", What: "response to x\x1b[2J"}}}}}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") || !strings.Contains(b.String(), "response to x·[2J") {
		t.Errorf("text report %q holds control characters", b.String())
	}
}

// TestReplayBlankLineOverHTTP replays a stdio tape holding a client's blank
// line: over stdio the line is sent as it was; over HTTP, where it is no
// message (an empty POST would be refused), it is not sent, with a note.
func TestReplayBlankLineOverHTTP(t *testing.T) {
	msgs := [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"s2c", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"mcptape-refserver","version":"1"}}}`},
		{"c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"c2s", ""},
		{"c2s", `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{"s2c", `{"jsonrpc":"2.0","id":2,"result":{}}`},
	}
	tests := []struct {
		name string
		dial func(t *testing.T) DialFunc
		sent int
		note bool
	}{
		{"over-stdio", func(*testing.T) DialFunc { return stdioDial("") }, 4, false},
		{"over-http", func(t *testing.T) DialFunc { return httpDial(refHTTP(t, refserver.HTTPConfig{})) }, 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), writeTape(t, msgs), tc.dial(t), WithMaxSpeed(), WithIgnore("result.serverInfo", "result.capabilities", "result.instructions"))
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			sr := rep.Sessions[0]
			if rep.ExitCode() != 0 || sr.Sent != tc.sent || strings.Contains(text.String(), "a blank line of a stdio client") != tc.note {
				t.Errorf("exit %d, sent %d (want 0, %d, a note: %v):\n%s", rep.ExitCode(), sr.Sent, tc.sent, tc.note, text.String())
			}
		})
	}
}
