package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/loadgen"
)

// chatClientLines calls the chat tool twice without waiting: the two
// streamed answers interleave.
const chatClientLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat","arguments":{"query":"Hello"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chat","arguments":{"query":"Bye now"}}}
`

// pythonPeer returns the command of the independent Python streaming
// server, or skips the test without python3 (make sysdeps installs it).
func pythonPeer(t *testing.T) []string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found (make sysdeps installs it): the Python streaming peer cannot run")
	}
	return []string{py, filepath.Join("..", "..", "testdata", "streampeer", "chat_stream.py")}
}

// streamFigures is what the tests read of inspect's JSON.
type streamFigures struct {
	Streams *struct {
		Operations int64 `json:"operations"`
		Chunks     int64 `json:"chunks"`
		Unfinished int64 `json:"unfinished"`
		AfterEnd   int64 `json:"after_end"`
		Usage      struct {
			TotalTokens int64 `json:"total_tokens"`
		} `json:"usage"`
	} `json:"streams"`
	Violations []struct {
		Rule  string `json:"rule"`
		Count int64  `json:"count"`
	} `json:"violations"`
}

// TestStreamedAnswersRecordInspectReplay records the two streaming peers
// (the reference server's chat tool and the Python server), inspects the
// tapes and replays them: whole, cut before the end and with a part after
// the end.
func TestStreamedAnswersRecordInspectReplay(t *testing.T) {
	serve := []string{serveBinary(t), "serve", "--stream-chunks", "3", "--chunk-delay", "2ms"}
	tests := []struct {
		name       string
		env        map[string]string
		python     bool
		unfinished int64
		afterEnd   int64
		replayCode int // against the same server
	}{
		{name: "refserver", replayCode: 0},
		{name: "python", python: true, replayCode: 0},
		{name: "python-cut", python: true, env: map[string]string{"CUT": "1"}, unfinished: 2, replayCode: 1},
		{name: "python-late-delta", python: true, env: map[string]string{"LATE": "1"}, afterEnd: 2, replayCode: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := serve
			if tt.python {
				server = pythonPeer(t)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
			// The client's input ends at once: the recorder then gives the
			// server --grace to answer and exit by itself before SIGTERM,
			// and the default 5s ran out on a loaded machine while the
			// Python peer started (exit 143). Each peer exits at the end
			// of its input: a longer grace only waits for a slow one.
			if code, _, stderr := runCLI(t, chatClientLines, append([]string{"record", "-o", tp, "--grace", "1m", "--"}, server...)...); code != 0 {
				t.Fatalf("record: exit %d: %s", code, stderr)
			}
			_, out, stderr := runCLI(t, "", "inspect", "--format", "json", tp)
			var rep streamFigures
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("inspect: %v: %s %s", err, out, stderr)
			}
			st := rep.Streams
			if st == nil || st.Operations != 2-tt.unfinished || st.Unfinished != tt.unfinished || st.AfterEnd != tt.afterEnd {
				t.Fatalf("streams %+v, want %d finished, %d unfinished, %d after the end", st, 2-tt.unfinished, tt.unfinished, tt.afterEnd)
			}
			if tt.unfinished == 0 && st.Usage.TotalTokens == 0 {
				t.Errorf("no usage tokens summed: %+v", st)
			}
			for _, v := range rep.Violations {
				if v.Rule == "response-unknown-id" {
					t.Errorf("streamed parts reported as %s ×%d", v.Rule, v.Count)
				}
			}
			// The timeout bounds the wait for each live answer, the Python
			// peer's start included (5s was not enough on a loaded
			// machine). A peer that cut its streams ends at the end of its
			// input, and the replay reports them unfinished then, without
			// waiting out the timeout: one that took the timeout waited.
			const timeout = time.Minute
			start := time.Now()
			code, out, stderr := runCLI(t, "", append([]string{"replay", "--timeout", timeout.String(), tp, "--"}, server...)...)
			if code != tt.replayCode {
				t.Errorf("replay: exit %d, want %d:\n%s%s", code, tt.replayCode, out, stderr)
			}
			if took := time.Since(start); tt.unfinished > 0 && (!strings.Contains(out, "unfinished") || took >= timeout) {
				t.Errorf("replay of a cut stream: %s, took %v; want it reported unfinished, before the %v timeout", out, took, timeout)
			}
		})
	}
}

// TestReplayStreamedChunkBoundaries replays a tape of 3-part answers
// against a server streaming 7: the same joined text matches, unless
// --exact-chunks.
func TestReplayStreamedChunkBoundaries(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	bin := serveBinary(t)
	if code, _, stderr := runCLI(t, chatClientLines, "record", "-o", tp, "--", bin, "serve", "--stream-chunks", "3"); code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		exact bool
		want  int
	}{{false, 0}, {true, 1}} {
		args := []string{"replay", tp}
		if c.exact {
			args = append(args, "--exact-chunks")
		}
		code, out, stderr := runCLI(t, "", append(args, "--", bin, "serve", "--stream-chunks", "7")...)
		if code != c.want || !strings.Contains(out, "2 streamed answers") {
			t.Errorf("exact %v: exit %d, want %d:\n%s%s", c.exact, code, c.want, out, stderr)
		}
		if c.exact && !strings.Contains(out, "result.stream.parts") {
			t.Errorf("--exact-chunks: the difference does not name the parts:\n%s", out)
		}
	}
}

// checkFirstBeforeEnd fails the test unless first, a "first chunk"
// series, and complete, the "complete" series of the same streamed calls,
// show each call's first part no later than its end: each order
// statistic of the first parts' times is then at most the ends' (not
// every first part before every end, nor the medians apart: on a loaded
// machine a stall can hold a call's first part until its end is read
// too, and the slowest first part can come after the quickest end). The
// mean is strictly below: the servers of these tests pause between a
// call's first part and its end, and a stall would have to swallow that
// pause for every call to make them equal. A load that reported the end
// before the first part, or the first part at the end, fails.
func checkFirstBeforeEnd(t *testing.T, first, complete *loadgen.Series) {
	t.Helper()
	stats := []struct {
		name        string
		first, last time.Duration
	}{
		{"min", first.Min, complete.Min},
		{"p50", first.P50, complete.P50},
		{"p90", first.P90, complete.P90},
		{"p99", first.P99, complete.P99},
		{"p99.9", first.P999, complete.P999},
		{"max", first.Max, complete.Max},
	}
	for _, s := range stats {
		if s.first > s.last {
			t.Errorf("first chunk %s %v after complete %s %v: a call's first part came after its end", s.name, s.first, s.name, s.last)
		}
	}
	if first.Mean >= complete.Mean {
		t.Errorf("first chunk mean %v, complete mean %v: want the first parts earlier on the whole", first.Mean, complete.Mean)
	}
}
