package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// Tests against real peers (internal/peertest installs them once per
// machine). They are skipped with -short.

// recordEnv makes TestHelperRecord a stdio recording proxy: the value is
// the tape's path; recordArgvEnv holds the server's argv as JSON.
const (
	recordEnv     = "MCPTAPE_REPLAY_RECORD"
	recordArgvEnv = "MCPTAPE_REPLAY_RECORD_ARGV"
)

// TestHelperRecord is not a test: with recordEnv set it is a stdio
// recording proxy (like mcptape record) in front of the server in
// recordArgvEnv, for clients that start their server themselves.
func TestHelperRecord(t *testing.T) {
	path := os.Getenv(recordEnv)
	if path == "" {
		t.Skip("helper process for the replay tests")
	}
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv(recordArgvEnv)), &argv); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "stdio"})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	res, err := capture.RunStdio(context.Background(), capture.StdioOptions{
		Command: argv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Tape: w, CloseStdout: true,
	})
	w.Close()
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	os.Exit(res.ExitCode)
}

// recorderScript writes a script that runs TestHelperRecord in front of
// argv, recording to the returned tape path: a command line with no
// arguments for clients that take a server command.
func recorderScript(t *testing.T, argv []string) (script, tapePath string) {
	t.Helper()
	dir := t.TempDir()
	tapePath = filepath.Join(dir, "stdio.jsonl.zst")
	js, _ := json.Marshal(argv)
	script = filepath.Join(dir, "record.sh")
	body := "#!/bin/sh\n" + recordEnv + "='" + tapePath + "' " + recordArgvEnv + "='" + string(js) + "' exec '" + os.Args[0] + "' -test.run='^TestHelperRecord$'\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script, tapePath
}

// httpRecorder serves a capture proxy in front of upstream and returns its
// endpoint URL and a function that stops it and closes the tape.
func httpRecorder(t *testing.T, upstream string) (endpoint, tapePath string, stop func()) {
	t.Helper()
	tapePath = filepath.Join(t.TempDir(), "http.jsonl.zst")
	w, err := tape.Create(tapePath, tape.Header{Tool: "mcptape", Transport: "http", Target: upstream})
	if err != nil {
		t.Fatal(err)
	}
	p, err := capture.NewHTTPProxy(upstream, w, capture.WithShutdownGrace(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	u := "http://" + ln.Addr().String() + "/mcp"
	return u, tapePath, func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("proxy: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	}
}

// inspectorCalls are the Inspector CLI invocations recorded against
// server-everything: one session each.
var inspectorCalls = [][]string{
	{"--method", "tools/list"},
	{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello"},
	{"--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "--tool-arg", "b=3"},
}

// replayExpect replays every session of tapePath with dial and fails unless
// everything matched.
func replayExpect(t *testing.T, tapePath string, dial DialFunc, want int, opts ...Option) *Report {
	t.Helper()
	sessions := loadTape(t, tapePath)
	opts = append([]Option{WithSpeed(10), WithTimeout(20 * time.Second)}, opts...)
	rep, err := Run(context.Background(), sessions, dial, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if code := rep.ExitCode(); code != want {
		t.Fatalf("exit code %d, want %d:\n%s", code, want, text.String())
	}
	for _, s := range rep.Sessions {
		if want == 0 && s.Matched == 0 {
			t.Errorf("session %s: nothing compared:\n%s", s.Session, text.String())
		}
	}
	return rep
}

func TestReplayInspectorEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	everything := append(peertest.ServerEverything(t), "stdio")

	// Record: Inspector CLI over stdio (through the recording helper) and
	// over Streamable HTTP (through the capture proxy).
	script, stdioTape := recorderScript(t, everything)
	httpServer := peertest.EverythingHTTP(t, ctx)
	endpoint, httpTape, stop := httpRecorder(t, httpServer.URL)
	for _, c := range inspectorCalls {
		peertest.Inspector(t, ctx, append([]string{endpoint, "--transport", "http"}, c...)...)
	}
	stop()
	// The stdio recording helper writes one session per tape: the echo call.
	peertest.Inspector(t, ctx, append([]string{script}, inspectorCalls[1]...)...)
	waitFile(t, stdioTape)

	stdioDialEverything := func(ctx context.Context, _ *Session) (transport.Conn, error) {
		return transport.DialStdio(ctx, everything, transport.WithGrace(300*time.Millisecond))
	}
	liveHTTP := peertest.EverythingHTTP(t, ctx)
	liveSSE := peertest.EverythingSSE(t, ctx)
	sseDial := func(ctx context.Context, _ *Session) (transport.Conn, error) {
		return transport.DialLegacySSE(ctx, liveSSE.URL)
	}
	tests := []struct {
		name, tape string
		dial       DialFunc
		sessions   int
	}{
		{"stdio-over-stdio", stdioTape, stdioDialEverything, 1},
		{"stdio-over-http", stdioTape, httpDial(liveHTTP.URL), 1},
		{"http-over-http", httpTape, httpDial(liveHTTP.URL), len(inspectorCalls)},
		{"http-over-stdio", httpTape, stdioDialEverything, len(inspectorCalls)},
		{"http-over-legacy-sse", httpTape, sseDial, len(inspectorCalls)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := replayExpect(t, tc.tape, tc.dial, 0, WithConcurrency(4))
			if len(rep.Sessions) != tc.sessions {
				t.Errorf("%d sessions replayed, want %d", len(rep.Sessions), tc.sessions)
			}
		})
	}
}

// TestReplayGoEverything records a Go SDK client session with progress, a
// cancelled call and server-to-client requests against the go-sdk
// conformance everything-server, and replays it against a fresh one.
func TestReplayGoEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	server := []string{peertest.GoEverythingServer(t)}
	script, tapePath := recorderScript(t, server)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The call cancelled below is cancelled on its first progress, and its
	// answer (the tool's, ~150 ms after its start) is held from the client
	// until the call has returned: a fixed 60 ms timer fired before the
	// call was sent on a loaded machine, and a cancel later than the
	// answer is not sent at all.
	opts := *elicitOpts
	progressed := make(chan struct{})
	var once sync.Once
	opts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		if r.Params.ProgressToken == "progress-2" {
			once.Do(func() { close(progressed) })
		}
	}
	hold := peertest.NewAnswerHold(`"progress-2"`)
	client := mcp.NewClient(&mcp.Implementation{Name: "replay-test", Version: "1"}, &opts)
	cs, err := client.Connect(ctx, hold.Transport(&mcp.CommandTransport{Command: peertest.Command(ctx, []string{script}, nil)}),
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: "test_tool_with_progress"}
	p.SetProgressToken("progress-1")
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	call(t, ctx, cs, "test_elicitation", map[string]any{"message": "name?"})
	call(t, ctx, cs, "test_sampling", map[string]any{"prompt": "say hi"})
	// The progress tool takes 150 ms: cancel it once it reports progress.
	cctx, ccancel := context.WithCancel(ctx)
	p = &mcp.CallToolParams{Name: "test_tool_with_progress"}
	p.SetProgressToken("progress-2")
	errc := make(chan error, 1)
	go func() { _, err := cs.CallTool(cctx, p); errc <- err }()
	select {
	case <-progressed:
	case <-ctx.Done():
		t.Fatal("no progress from the call to cancel")
	}
	ccancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled call did not fail")
	}
	hold.Release()
	call(t, ctx, cs, "test_simple_text", nil)
	cs.Close()
	waitFile(t, tapePath)

	var out bytes.Buffer
	w := newTapeBuffer(t, &out)
	rep := replayExpect(t, tapePath, func(ctx context.Context, _ *Session) (transport.Conn, error) {
		return transport.DialStdio(ctx, server, transport.WithGrace(300*time.Millisecond))
	}, 0, WithTape(w))
	w.Close()
	if s := rep.Sessions[0]; s.ServerRequests != 2 {
		t.Errorf("%d server requests answered from the recording, want 2", s.ServerRequests)
	}
	// The cancel names the live id of the second progress call (its token
	// is the second one the replay made), and both server requests were
	// answered under their live ids.
	checkReplayTapeCancel(t, out.Bytes(), `"mcptape-progress-2"`, 2)
}

// waitFile waits until the recording helper has closed its tape.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := tape.Open(path); err == nil {
			_, _, err := Load(r)
			r.Close()
			if err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("tape %s not written", path)
}
