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

// TestLoadTapeStreamedCalls records streamed chat calls of the reference
// server (serve --stream-chunks) over stdio, Streamable HTTP and
// WebSocket, then amplifies each tape with `load --tape` against the same
// server: every chat call stays in flight until its end part and gets the
// first-chunk and complete series and its usage tokens, as `load --call`
// gives them.
func TestLoadTapeStreamedCalls(t *testing.T) {
	const delay = 20 * time.Millisecond // four pauses between the first part and the end
	bin := serveBinary(t)
	chat := refserver.Chat{Chunks: 3, Delay: delay}
	tests := []struct {
		name   string
		calls  int64 // chat calls in the recorded session
		record func(t *testing.T, tp string) []string
	}{
		{"stdio", 2, func(t *testing.T, tp string) []string {
			server := []string{bin, "serve", "--stream-chunks", "3", "--chunk-delay", delay.String()}
			if code, _, stderr := runCLI(t, chatClientLines, append([]string{"record", "-o", tp, "--"}, server...)...); code != 0 {
				t.Fatalf("record: exit %d: %s", code, stderr)
			}
			return append([]string{"--"}, server...)
		}},
		{"http", 4, func(t *testing.T, tp string) []string {
			s, err := refserver.New(refserver.WithChat(chat))
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(refserver.HTTPHandler(s, refserver.HTTPConfig{Chat: chat}))
			t.Cleanup(ts.Close)
			url := ts.URL + refserver.Path
			rec := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", url, "-o", tp)
			if code, out, stderr := runCLI(t, "", "load", "--url", rec.url, "--sessions", "1", "--inflight", "2", "--requests", "4", "-q",
				"--call", `tools/call chat {"query":"hi there"}`); code != 0 {
				t.Fatalf("load through the proxy: exit %d\n%s%s", code, out, stderr)
			}
			if err := rec.stop(); err != nil {
				t.Fatalf("record: %v\n%s", err, rec.stderr)
			}
			return []string{"--url", url}
		}},
		{"websocket", 2, func(t *testing.T, tp string) []string {
			upstream := wsPath(serveWS(t, "--stream-chunks", "3", "--chunk-delay", delay.String()))
			rec, proxy := startWSRecord(t, upstream, tp)
			wsChat(t, proxy, nil).check(t, 3)
			stopWSRecord(t, rec)
			return []string{"--url", upstream, "--ws-subprotocol", ""}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := filepath.Join(t.TempDir(), "chat.jsonl.zst")
			target := tt.record(t, tp)
			const sessions = 2
			args := append([]string{"load", "-q", "--tape", tp, "--sessions", "2", "--speed", "max", "--json", "-",
				"--threshold", "tools/call chat#complete:count>=1", "--threshold", "tools/call chat:tokens_per_s>0"}, target...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("load --tape: exit %d\n%s\n%s", code, stdout, stderr)
			}
			var rep loadgen.Report
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, stdout)
			}
			want := tt.calls * sessions
			first, complete, chat := rep.Find("tools/call chat"+loadgen.FirstChunkSuffix), rep.Find("tools/call chat"+loadgen.CompleteSuffix), rep.Find("tools/call chat")
			if first == nil || complete == nil || chat == nil {
				t.Fatalf("series %+v lack the streamed ones", rep.Series)
			}
			if chat.Count != want || first.Count != want || complete.Count != want || chat.Errors != 0 || chat.Tokens == 0 || chat.TokensPerSec <= 0 {
				t.Errorf("chat %d (errors %d, %d tokens, %v/s), first chunk %d, complete %d; want %d each, tokens counted",
					chat.Count, chat.Errors, chat.Tokens, chat.TokensPerSec, first.Count, complete.Count, want)
			}
			// The call is in flight until its end part, four pauses after
			// its first part: not measured at its first chunk.
			if complete.Min < 4*delay || chat.Min < 4*delay {
				t.Errorf("complete min %v, call min %v: want the end after %v", complete.Min, chat.Min, 4*delay)
			}
			checkFirstBeforeEnd(t, first, complete)
			if len(rep.Warnings) != 0 {
				t.Errorf("warnings %v", rep.Warnings)
			}
		})
	}
}
