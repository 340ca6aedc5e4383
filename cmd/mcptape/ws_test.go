package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/internal/refserver/refservertest"
	"github.com/mcptape/mcptape/loadgen"
)

// refWSURL serves the reference server over WebSocket for the test and
// returns its ws:// URL.
func refWSURL(t *testing.T) string { return refservertest.WS{}.Start(t) }

// serveWS starts `mcptape serve --ws 127.0.0.1:0` and returns its URL.
func serveWS(t *testing.T, args ...string) string {
	t.Helper()
	p := startServe(t, append([]string{"--ws", "127.0.0.1:0"}, args...)...)
	l := p.line(t)
	url, ok := strings.CutPrefix(l, "listening on ")
	if !ok || !strings.HasPrefix(url, "ws://127.0.0.1:") || !strings.HasSuffix(url, refserver.Path) {
		t.Fatalf("first stderr line %q is not 'listening on ws://ADDR/mcp'", l)
	}
	return url
}

func TestLoadWebSocket(t *testing.T) {
	url := refWSURL(t)
	echo := `tools/call echo {"message":"hi"}`
	tests := []struct {
		name  string
		args  []string
		check func(*loadgen.Report) bool
	}{
		{"closed", []string{"--call", echo, "--sessions", "3", "--requests", "60"},
			func(r *loadgen.Report) bool { return r.Answered == 60 }},
		{"open", []string{"--call", echo, "--sessions", "2", "--rate", "200/s", "--requests", "40"},
			func(r *loadgen.Report) bool { return r.Answered == 40 }},
		{"batch", []string{"--call", echo, "--sessions", "2", "--requests", "40", "--batch", "4", "--protocol", "2025-03-26"},
			func(r *loadgen.Report) bool { return r.Answered == 40 && r.Batch != nil && r.Batch.InSpec }},
		{"progress", []string{"--call", `tools/call sleep {"ms":20,"steps":2}`, "--requests", "4", "--progress"},
			func(r *loadgen.Report) bool {
				return r.Answered == 4 && r.Progress != nil && r.Progress.Notifications == 8
			}},
		{"cancel", []string{"--call", `tools/call sleep {"ms":5000}`, "--requests", "2", "--cancel-after", "50ms"},
			func(r *loadgen.Report) bool { return r.Cancel != nil && r.Cancel.Sent == 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"load", "--url", url, "-q", "--json", "-"}, tt.args...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			var rep loadgen.Report
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, stdout)
			}
			if !tt.check(&rep) || rep.Setups == 0 || rep.Failure != "" {
				t.Errorf("report:\n%s\n%s", stdout, stderr)
			}
		})
	}
}

// TestReplayStdioTapeOverWebSocket replays a tape recorded over stdio
// against the WebSocket server, and loads it there too.
func TestReplayStdioTapeOverWebSocket(t *testing.T) {
	multi := recordServeTape(t, 3)
	url := serveWS(t)
	code, stdout, stderr := runCLI(t, "", "replay", multi, "--all", "--speed", "max", "--format", "json", "--url", url)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var rep struct {
		Sessions []struct{ Matched, Differed, Missing, Extra int }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Sessions) != 3 {
		t.Fatalf("report %v: %s", err, stdout)
	}
	for i, s := range rep.Sessions {
		if s.Matched != 3 || s.Differed+s.Missing+s.Extra != 0 {
			t.Errorf("session %d: %+v", i, s)
		}
	}
	code, stdout, stderr = runCLI(t, "", "load", "--tape", multi, "--url", url, "-q", "--json", "-")
	if code != 0 {
		t.Fatalf("load --tape: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var lrep loadgen.Report
	if err := json.Unmarshal([]byte(stdout), &lrep); err != nil || lrep.Answered == 0 || lrep.ErrorTotal != 0 {
		t.Errorf("load --tape report %v: %s", err, stdout)
	}
}

// TestRecordWebSocket records a replay that goes through `mcptape record
// --upstream ws://...`, then reads the tape back with inspect and replays
// the WebSocket tape over stdio.
func TestRecordWebSocket(t *testing.T) {
	bin := serveBinary(t)
	upstream := serveWS(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "ws.jsonl.zst")
	rec, proxy := startWSRecord(t, upstream, out)

	multi := recordServeTape(t, 2)
	if code, stdout, stderr := runCLI(t, "", "replay", multi, "--all", "--speed", "max", "--url", proxy); code != 0 {
		t.Fatalf("replay through the recorder: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stopWSRecord(t, rec)
	fi, err := os.Stat(out)
	if err != nil || !privateMode(fi) {
		t.Fatalf("tape: %v %v", fi, err)
	}
	code, stdout, stderr := runCLI(t, "", "inspect", out)
	for _, want := range []string{" · ws · ", "2 sessions", "ws-1", "ws-2", "closed by client", "PROBLEMS  (worst first; +1.234s: time since the tape started)\n  none"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("inspect: exit %d, output lacks %q\n%s\n%s", code, want, stdout, stderr)
		}
	}
	checkWSAnalysis(t, out, multi)
	// The WebSocket tape replays over stdio, matching.
	code, stdout, stderr = runCLI(t, "", "replay", out, "--all", "--speed", "max", "--", bin, "serve")
	if code != 0 {
		t.Fatalf("replay of the ws tape over stdio: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// checkWSAnalysis runs show, report, diff and the HAR export on ws, a
// WebSocket tape of the conversations of stdio, a stdio tape.
func checkWSAnalysis(t *testing.T, ws, stdio string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", "show", ws, "--session", "ws-2")
	if code != 0 || !strings.Contains(stdout, "tools/call") || strings.Contains(stdout, "ws-1") {
		t.Errorf("show: exit %d\n%s\n%s", code, stdout, stderr)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, stdout, stderr := runCLI(t, "", "report", ws, "-o", html); code != 0 {
		t.Errorf("report: exit %d\n%s\n%s", code, stdout, stderr)
	} else if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "ws-2") {
		t.Errorf("report lacks the sessions: %v", err)
	}
	// The same conversations over stdio and WebSocket: diff finds them equal.
	if code, stdout, stderr := runCLI(t, "", "diff", stdio, ws); code != 0 {
		t.Errorf("diff stdio ws: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "export", ws, "--format", "har")
	if code != 0 {
		t.Fatalf("export har: exit %d\n%s", code, stderr)
	}
	var har struct {
		Log struct {
			Entries []struct {
				Request      struct{ URL string }
				Response     struct{ Status int }
				ResourceType string `json:"_resourceType"`
				Messages     []struct {
					Type   string
					Time   float64
					Opcode int
					Data   string
				} `json:"_webSocketMessages"`
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &har); err != nil {
		t.Fatalf("har: %v\n%s", err, stdout)
	}
	if len(har.Log.Entries) != 2 {
		t.Fatalf("%d HAR entries, want one per connection:\n%s", len(har.Log.Entries), stdout)
	}
	for _, e := range har.Log.Entries {
		if e.ResourceType != "websocket" || e.Response.Status != 101 || !strings.HasPrefix(e.Request.URL, "ws://") || len(e.Messages) != 7 {
			t.Errorf("HAR entry %+v", e)
			continue
		}
		if m := e.Messages[0]; m.Type != "send" || m.Opcode != 1 || !strings.Contains(m.Data, `"initialize"`) || m.Time < 1e9 {
			t.Errorf("first message %+v", m)
		}
	}
}

// startWSRecord starts `mcptape record --upstream upstream --listen
// 127.0.0.1:0 -o out` and returns it and the ws:// URL it proxies at.
func startWSRecord(t *testing.T, upstream, out string) (*exec.Cmd, string) {
	t.Helper()
	rec := exec.Command(serveBinary(t), "record", "--upstream", upstream, "--listen", "127.0.0.1:0", "-o", out)
	recErr, err := rec.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Process.Kill(); _ = rec.Wait() })
	sc := bufio.NewScanner(recErr)
	if !sc.Scan() {
		t.Fatal("record printed nothing")
	}
	m := regexp.MustCompile(`proxying (ws://127\.0\.0\.1:\d+/\S*) to `).FindStringSubmatch(sc.Text())
	if m == nil {
		t.Fatalf("first line %q", sc.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, recErr) }()
	return rec, m[1]
}

// stopWSRecord interrupts the recorder as Ctrl-C does and checks that it
// exits cleanly.
func stopWSRecord(t *testing.T, rec *exec.Cmd) {
	t.Helper()
	if err := rec.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := rec.Wait(); err != nil {
		t.Fatalf("record: %v", err)
	}
}

// TestWebSocketInsecure: replay and load reach a wss:// server with a
// self-signed certificate with --insecure, and fail without it.
func TestWebSocketInsecure(t *testing.T) {
	url := refservertest.WS{TLS: true}.Start(t)
	// The replayed tape comes from the built binary, whose version the
	// in-process server does not share: --ignore it.
	multi := recordServeTape(t, 1)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"load", []string{"load", "--url", url, "--requests", "5", "--call", "ping", "-q"}, ": 5 ok (100.00%"},
		{"replay", []string{"replay", multi, "--speed", "max", "--ignore", "result.serverInfo.version", "--url", url}, "3 matched"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, stderr := runCLI(t, "", tt.args...); code == 0 || !strings.Contains(stderr, "certificate") {
				t.Errorf("without --insecure: exit %d, stderr %q", code, stderr)
			}
			code, stdout, stderr := runCLI(t, "", append(tt.args, "--insecure")...)
			if code != 0 || !strings.Contains(stdout, tt.want) {
				t.Errorf("with --insecure: exit %d, want %q\n%s\n%s", code, tt.want, stdout, stderr)
			}
		})
	}
}

// TestMockWebSocket: a tape replayed against its own mock served over
// WebSocket matches, and the mock's flags exclude each other.
func TestMockWebSocket(t *testing.T) {
	multi := recordServeTape(t, 1)
	mockCmd := exec.Command(serveBinary(t), "mock", multi, "--ws", "127.0.0.1:0", "--speed", "max")
	errOut, err := mockCmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := mockCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mockCmd.Process.Kill(); _ = mockCmd.Wait() })
	sc := bufio.NewScanner(errOut)
	if !sc.Scan() {
		t.Fatal("mock printed nothing")
	}
	url, ok := strings.CutPrefix(sc.Text(), "listening on ")
	if !ok || !strings.HasPrefix(url, "ws://127.0.0.1:") {
		t.Fatalf("first line %q", sc.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, errOut) }()
	if code, stdout, stderr := runCLI(t, "", "replay", multi, "--all", "--speed", "max", "--url", url); code != 0 {
		t.Errorf("replay against the ws mock: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr := runCLI(t, "", "mock", multi, "--ws", "127.0.0.1:0", "--http", "127.0.0.1:0")
	if code != 2 || !strings.Contains(stderr, "--ws serves WebSocket: give it without --http or --sse") {
		t.Errorf("--ws with --http: exit %d, %q", code, stderr)
	}
}

// TestRecordWebSocketUsage: HTTP-only flags are refused with a ws:// upstream.
func TestRecordWebSocketUsage(t *testing.T) {
	for _, flag := range []string{"--rotate=1h", "--sample=0.5", "--metrics=127.0.0.1:0", "--skip=ping"} {
		code, _, stderr := runCLI(t, "", "record", "--upstream", "ws://127.0.0.1:1/mcp", "-o", filepath.Join(t.TempDir(), "t.jsonl.zst"), flag)
		name, _, _ := strings.Cut(flag, "=")
		if code != 2 || !strings.Contains(stderr, name+" is not supported with a WebSocket --upstream") {
			t.Errorf("%s: exit %d, stderr %q", flag, code, stderr)
		}
	}
}
