package main

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/loadgen"
)

// TestLoadCancelsStreamedChat loads the chat tool of the reference
// server with every call cancelled 30 ms in (`load --cancel-after`),
// through the recorder, over stdio, Streamable HTTP, the LangGraph HTTP
// dialect and WebSocket: each call is counted cancelled, and the server
// stops its stream (no end result comes in the quiet window of 1 s, though
// a whole stream takes 810 ms). The tape, holding the cancelled streams cut
// short, then replays against the same server with exit 0. (With streams
// of 210 ms, a cancel that reached the server 180 ms late on a loaded
// machine let a stream end: "answered anyway".)
func TestLoadCancelsStreamedChat(t *testing.T) {
	const chunks, delay = "80", "10ms"
	bin := serveBinary(t)
	chat := refserver.Chat{Chunks: 80, Delay: 10 * time.Millisecond}
	call := []string{"--cancel-after", "30ms", "--requests", "4", "--sessions", "1", "-q", "--json", "-",
		"--call", `tools/call chat {"query":"hi there"}`, "--inflight"}
	tests := []struct {
		name string
		// run records load's traffic at tp and returns load's output and
		// the replay's target flags
		run func(t *testing.T, tp string) (string, []string)
	}{
		{"stdio", func(t *testing.T, tp string) (string, []string) {
			server := []string{bin, "serve", "--stream-chunks", chunks, "--chunk-delay", delay}
			out := loadOK(t, append(append(call, "2", "--", bin, "record", "-o", tp, "--"), server...))
			return out, append([]string{"--"}, server...)
		}},
		{"streamable http", func(t *testing.T, tp string) (string, []string) {
			s, err := refserver.New(refserver.WithChat(chat))
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(refserver.HTTPHandler(s, refserver.HTTPConfig{Chat: chat}))
			t.Cleanup(ts.Close)
			url := ts.URL + refserver.Path
			rec := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", url, "-o", tp)
			out := loadOK(t, append(call, "2", "--url", rec.url))
			if err := rec.stop(); err != nil {
				t.Fatalf("record: %v\n%s", err, rec.stderr)
			}
			return out, []string{"--url", url}
		}},
		{"langgraph http", func(t *testing.T, tp string) (string, []string) {
			_, url := startLangGraph(t, chunks, delay)
			rec := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", url, "-o", tp)
			// Two calls at once: a cancel POSTed on another connection
			// than its call is recorded in its call's session
			// (TestSessionlessCancelOnAnotherConnection).
			out := loadOK(t, append(call, "2", "--url", rec.url, "--stream-path", refserver.StreamPath))
			if err := rec.stop(); err != nil {
				t.Fatalf("record: %v\n%s", err, rec.stderr)
			}
			return out, []string{"--url", url}
		}},
		{"websocket", func(t *testing.T, tp string) (string, []string) {
			upstream := wsPath(serveWS(t, "--stream-chunks", chunks, "--chunk-delay", delay))
			rec, proxy := startWSRecord(t, upstream, tp)
			out := loadOK(t, append(call, "2", "--url", proxy, "--ws-subprotocol", ""))
			stopWSRecord(t, rec)
			return out, []string{"--url", upstream, "--ws-subprotocol", ""}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := filepath.Join(t.TempDir(), "cancel.jsonl.zst")
			out, target := tt.run(t, tp)
			var rep loadgen.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, out)
			}
			if c := rep.Cancel; c == nil || c.Chosen != 4 || c.Sent != 4 || c.AnsweredAnyway != 0 || rep.Answered != 0 || rep.ErrorTotal != 0 {
				t.Errorf("cancel %+v, answered %d, errors %v: want 4 cancelled, none answered after", rep.Cancel, rep.Answered, rep.Errors)
			}
			args := append([]string{"replay", tp, "--all", "--timeout", "5s"}, target...)
			if code, stdout, stderr := runCLI(t, "", args...); code != 0 {
				t.Errorf("replay of the cancelled chats: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// loadOK runs `mcptape load` with args and returns its standard output,
// failing the test unless it exits 0.
func loadOK(t *testing.T, args []string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", append([]string{"load"}, args...)...)
	if code != 0 {
		t.Fatalf("load: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return stdout
}
