package analysis

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// recordFixtures re-records the real-peer fixture tapes of
// testdata/analysis (then run with -update to refresh the goldens).
var recordFixtures = flag.Bool("record", false, "re-record the real-peer fixture tapes in ../testdata/analysis")

// mcptapeBin builds the mcptape command into a temporary directory.
func mcptapeBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcptape")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/mcptape")
	cmd.Dir = peertest.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building mcptape: %v\n%s", err, out)
	}
	return bin
}

// peerScenario records one real session into a tape.
type peerScenario struct {
	name   string
	record func(t *testing.T, ctx context.Context, bin, out string)
	check  func(t *testing.T, rep *Report, path string)
}

var peerScenarios = []peerScenario{
	{"everything-stdio", recordEverythingStdio, checkEverythingStdio},
	{"gosdk-refserver", recordRefserver, checkRefserver},
	{"gosdk-everything", recordGoEverything, checkGoEverything},
	{"everything-http", recordEverythingHTTP, checkEverythingHTTP},
	{"gosdk-http", recordGoHTTP, checkGoHTTP},
}

// TestRealPeers records sessions between real MCP peers through mcptape
// record, then checks what Inspect and Show make of them. With -record the
// tapes become the fixtures of testdata/analysis.
func TestRealPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers: not in -short mode")
	}
	bin := mcptapeBin(t)
	for _, sc := range peerScenarios {
		t.Run(sc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out := filepath.Join(t.TempDir(), sc.name+".jsonl.zst")
			sc.record(t, ctx, bin, out)
			rep, err := Inspect(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Tape.Warning != "" {
				t.Errorf("warning: %s", rep.Tape.Warning)
			}
			sc.check(t, rep, out)
			checkRawClientSide(t, out)
			if *recordFixtures {
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(fixtureDir, sc.name+".jsonl.zst"), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// recordEverythingStdio: the MCP Inspector CLI calls echo on
// server-everything (stdio) through mcptape record.
func recordEverythingStdio(t *testing.T, ctx context.Context, bin, out string) {
	server := append(peertest.ServerEverything(t), "stdio")
	args := append([]string{bin, "record", "-o", out, "--"}, server...)
	args = append(args, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello from the inspector")
	cmd := peertest.InspectorCommand(t, ctx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspector: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(res), "Echo: hello from the inspector") {
		t.Fatalf("inspector output: %s", res)
	}
}

func checkEverythingStdio(t *testing.T, rep *Report, _ string) {
	if len(rep.Sessions) != 1 {
		t.Fatalf("%d sessions", len(rep.Sessions))
	}
	s := rep.Sessions[0]
	if s.Client == nil || s.Client.Name != "inspector" || s.Server == nil || !strings.Contains(s.Server.Name, "everything") || s.ProtocolVersion == "" {
		t.Errorf("session %+v client %+v server %+v", s, s.Client, s.Server)
	}
	if len(s.ToolsCalled) != 1 || s.ToolsCalled[0] != (NameCount{"echo", 1}) {
		t.Errorf("tools called %+v", s.ToolsCalled)
	}
	if s.Exit == nil || s.Exit.Code != 0 || s.Stderr == nil {
		t.Errorf("exit %+v stderr %+v", s.Exit, s.Stderr)
	}
	if len(rep.Violations) != 0 || rep.Unanswered.Count != 0 || len(rep.Errors) != 0 {
		t.Errorf("problems: %+v", rep.Problems)
	}
	if l := latencyOf(t, rep, tape.ClientToServer, "tools/call"); l.Count != 1 || l.MaxNS <= 0 {
		t.Errorf("tools/call latency %+v", l)
	}
}

// goClient connects a Go SDK client to a server run under mcptape record
// and runs script.
func goClient(t *testing.T, ctx context.Context, bin, out, version string, server []string, script func(context.Context, *mcp.ClientSession, *canceller)) {
	cl := newCanceller()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptape-fixture", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "tape"}}, nil
		},
		ProgressNotificationHandler: cl.progressHandler,
	})
	// The commands run by name from PATH, so that the tape's target does
	// not name a temporary directory.
	path := filepath.Dir(bin)
	for i, arg := range server {
		if filepath.IsAbs(arg) {
			path += string(os.PathListSeparator) + filepath.Dir(arg)
			server[i] = filepath.Base(arg)
		}
	}
	args := append([]string{"record", "-o", out, "--"}, server...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stderr = io.Discard
	cs, err := client.Connect(ctx, cl.transport(&mcp.CommandTransport{Command: cmd}), &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	script(ctx, cs, cl)
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	// mcptape record exits once the server is down and the tape closed.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := tape.Open(out); err == nil {
			ok := false
			for {
				rec, err := r.Next()
				if err != nil {
					break
				}
				ok = ok || rec.Event == tape.EventStats
			}
			r.Close()
			if ok {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the tape was not closed")
}

// call calls a tool and fails the test on a transport error.
func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, token any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Logf("%s: %v", name, err)
	}
	return res
}

// recordRefserver: a Go SDK client (2026-07-28: server/discover, MRTR)
// against mcptape serve, with progress, a tool error, a JSON-RPC error,
// an MRTR elicitation and a cancelled call.
func recordRefserver(t *testing.T, ctx context.Context, bin, out string) {
	goClient(t, ctx, bin, out, "", []string{bin, "serve"}, func(ctx context.Context, cs *mcp.ClientSession, cl *canceller) {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		call(t, ctx, cs, "echo", map[string]any{"message": "hello"}, nil)
		call(t, ctx, cs, "sleep", map[string]any{"ms": 60, "steps": 3}, "p-1")
		call(t, ctx, cs, "ask", map[string]any{"kind": "elicitation"}, nil)
		call(t, ctx, cs, "fail", map[string]any{"mode": "tool"}, nil)
		call(t, ctx, cs, "fail", map[string]any{"mode": "rpc"}, nil)
		cl.cancelAfterProgress(t, ctx, cs, "sleep", map[string]any{"ms": 5000, "steps": 50})
		call(t, ctx, cs, "add", map[string]any{"a": 2, "b": 40}, nil)
	})
}

func checkRefserver(t *testing.T, rep *Report, _ string) {
	s := rep.Sessions[0]
	if s.ProtocolVersion != "2026-07-28" || s.Client == nil || s.Client.Name != "mcptape-fixture" || s.Server == nil {
		t.Errorf("session %+v", s)
	}
	if m := rep.Operations.MRTR; m.Operations != 1 || m.Rounds != 2 {
		t.Errorf("MRTR %+v, want one operation of 2 rounds", m)
	}
	if p := rep.Progress; p.Streams < 2 || p.Notifications < 4 {
		t.Errorf("progress %+v", p)
	}
	if c := rep.Cancellations; c.Count != 1 || c.UnknownTarget != 0 {
		t.Errorf("cancellations %+v", c)
	}
	if !slices.ContainsFunc(rep.Errors, func(e ErrorCount) bool { return e.Code == -32010 }) {
		t.Errorf("errors %+v, want the fail tool's -32010", rep.Errors)
	}
	if fail := toolOf(t, rep, "fail"); fail.ToolErrors != 1 || fail.Errors != 1 {
		t.Errorf("fail %+v", fail)
	}
	if len(rep.Violations) != 0 {
		t.Errorf("violations %+v", rep.Violations)
	}
}

// recordGoEverything: a Go SDK client on protocol 2025-06-18 against the
// go-sdk conformance everything-server: progress, an error, a cancel.
func recordGoEverything(t *testing.T, ctx context.Context, bin, out string) {
	server := []string{peertest.GoEverythingServer(t)}
	goClient(t, ctx, bin, out, "2025-06-18", server, func(ctx context.Context, cs *mcp.ClientSession, cl *canceller) {
		call(t, ctx, cs, "test_simple_text", nil, nil)
		call(t, ctx, cs, "test_tool_with_progress", nil, "tok-1")
		call(t, ctx, cs, "test_error_handling", nil, nil)
		cl.cancelAfterProgress(t, ctx, cs, "test_tool_with_progress", nil)
		if _, err := cs.ListPrompts(ctx, nil); err != nil {
			t.Logf("prompts: %v", err)
		}
	})
}

func checkGoEverything(t *testing.T, rep *Report, _ string) {
	s := rep.Sessions[0]
	if s.ProtocolVersion != "2025-06-18" || s.Server == nil || s.Server.Name != "mcp-conformance-test-server" {
		t.Errorf("session %+v", s)
	}
	if p := rep.Progress; p.Streams < 2 || p.Notifications < 4 {
		t.Errorf("progress %+v", p)
	}
	if c := rep.Cancellations; c.Count != 1 {
		t.Errorf("cancellations %+v", c)
	}
	if tl := toolOf(t, rep, "test_error_handling"); tl.ToolErrors != 1 {
		t.Errorf("test_error_handling %+v", tl)
	}
}

// checkRawClientSide checks that show --dir in --format raw gives back
// exactly the client's frames.
func checkRawClientSide(t *testing.T, path string) {
	var want bytes.Buffer
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Type == tape.TypeMessage && rec.Dir == tape.ClientToServer {
			want.Write(rec.Frame)
			want.WriteByte('\n')
		}
	}
	r.Close()
	var got bytes.Buffer
	if _, err := Show(context.Background(), path, &got, WithDir(tape.ClientToServer), WithFormat(FormatRaw)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) || want.Len() == 0 {
		t.Errorf("raw client side differs from the recorded frames:\n%s\nwant:\n%s", got.Bytes(), want.Bytes())
	}
}

// fixtureDir holds the fixture tapes and their golden outputs.
const fixtureDir = "../testdata/analysis"

// httpProxy records the traffic to upstream through a capture.HTTPProxy
// into out while fn runs against the proxy's URL (same path as upstream).
func httpProxy(t *testing.T, ctx context.Context, upstream, out string, fn func(url string)) {
	w, err := tape.Create(out, tape.Header{Version: "fixture", Transport: "http", Target: upstream})
	if err != nil {
		t.Fatal(err)
	}
	p, err := capture.NewHTTPProxy(upstream, w)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- p.Serve(sctx, ln) }()
	fn("http://" + ln.Addr().String() + "/mcp")
	stop()
	if err := <-served; err != nil {
		t.Errorf("proxy: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// recordEverythingHTTP: the Inspector CLI lists tools and calls echo on
// server-everything over Streamable HTTP, through the recording proxy.
func recordEverythingHTTP(t *testing.T, ctx context.Context, _ string, out string) {
	srv := peertest.EverythingHTTP(t, ctx)
	httpProxy(t, ctx, srv.URL, out, func(url string) {
		for _, args := range [][]string{
			{url, "--transport", "http", "--method", "tools/list"},
			{url, "--transport", "http", "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello over http"},
		} {
			cmd := peertest.InspectorCommand(t, ctx, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if res, err := cmd.Output(); err != nil {
				t.Fatalf("inspector %v: %v\n%s%s", args, err, res, stderr.String())
			}
		}
	})
}

func checkEverythingHTTP(t *testing.T, rep *Report, _ string) {
	var calls int64
	for _, s := range rep.Sessions {
		for _, tc := range s.ToolsCalled {
			calls += tc.Count
		}
		if s.Server != nil && !strings.Contains(s.Server.Name, "everything") {
			t.Errorf("server %+v", s.Server)
		}
	}
	if calls != 1 {
		t.Errorf("%d tool calls, want 1; sessions %+v", calls, rep.Sessions)
	}
	if l := latencyOf(t, rep, tape.ClientToServer, "initialize"); l.Count != 2 {
		t.Errorf("initialize %+v, want one per Inspector run", l)
	}
	if n := violationCount(rep, RuleMissingSessionHeader); n != 0 {
		t.Errorf("%d requests without the session header", n)
	}
}

// recordGoHTTP: a Go SDK client on 2025-11-25 sessions against the go-sdk
// everything-server (stateful Streamable HTTP): progress and a cancel.
func recordGoHTTP(t *testing.T, ctx context.Context, _ string, out string) {
	srv := peertest.GoEverythingHTTP(t, ctx, false)
	cl := newCanceller()
	httpProxy(t, ctx, peertest.HoldFront(t, srv.URL, `"`+cancelToken+`"`, cl.hold.CancelSent()), out, func(url string) {
		client := mcp.NewClient(&mcp.Implementation{Name: "mcptape-fixture", Version: "1.0.0"}, &mcp.ClientOptions{
			ProgressNotificationHandler: cl.progressHandler,
		})
		cs, err := client.Connect(ctx, cl.transport(&mcp.StreamableClientTransport{Endpoint: url}), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		call(t, ctx, cs, "test_simple_text", nil, nil)
		call(t, ctx, cs, "test_tool_with_progress", nil, "tok-1")
		cl.cancelAfterProgress(t, ctx, cs, "test_tool_with_progress", nil)
		if err := cs.Close(); err != nil {
			t.Logf("close: %v", err)
		}
	})
}

func checkGoHTTP(t *testing.T, rep *Report, _ string) {
	var s *SessionReport
	for i := range rep.Sessions {
		if rep.Sessions[i].Server != nil {
			s = &rep.Sessions[i]
		}
	}
	if s == nil || s.ProtocolVersion != "2025-11-25" || s.Server.Name != "mcp-conformance-test-server" {
		t.Fatalf("sessions %+v", rep.Sessions)
	}
	if p := rep.Progress; p.Streams < 2 {
		t.Errorf("progress %+v", p)
	}
	// The Go SDK closes the stream, and may send notifications/cancelled
	// too (which can cross the end of the request).
	if c := rep.Cancellations; c.Count < 1 || c.Count-c.UnknownTarget != 1 {
		t.Errorf("cancellations %+v", c)
	}
	if n := violationCount(rep, RuleMissingSessionHeader); n != 0 {
		t.Errorf("%d requests without the session header", n)
	}
}
