package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// refHTTP serves a fresh reference server over Streamable HTTP and returns
// its endpoint URL.
func refHTTP(t *testing.T, cfg refserver.HTTPConfig, opts ...refserver.Option) string {
	t.Helper()
	srv, err := refserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	// Not httptest.Server: its Close waits for every handler, and a Go SDK
	// handler waiting for a client's answer that never comes (when a test
	// fails half-way) would hang the test.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: refserver.HTTPHandler(srv, cfg), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String() + refserver.Path
}

// httpDial dials endpoint, asking for the session's recorded version.
func httpDial(endpoint string) DialFunc {
	return func(ctx context.Context, s *Session) (transport.Conn, error) {
		return transport.DialHTTP(ctx, endpoint, HTTPOptions(s)...)
	}
}

// recordHTTP records a Go SDK client session over Streamable HTTP through
// the capture proxy in front of a reference server, and returns the tape.
func recordHTTP(t *testing.T, cfg refserver.HTTPConfig, version string, copts *mcp.ClientOptions, scenario func(ctx context.Context, cs *mcp.ClientSession)) string {
	t.Helper()
	base, finish := httpProxy(t, refHTTP(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "replay-test", Version: "1"}, copts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + refserver.Path},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	scenario(ctx, cs)
	cs.Close()
	return finish()
}

// httpProxy starts the HTTP capture proxy in front of the endpoint up,
// recording to a new tape, and returns its base URL ("http://host:port")
// and finish, which stops it and returns the tape's path.
func httpProxy(t *testing.T, up string) (base string, finish func() string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "http.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "http", Target: up})
	if err != nil {
		t.Fatal(err)
	}
	p, err := capture.NewHTTPProxy(up, w, capture.WithShutdownGrace(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() string {
		t.Helper()
		stop()
		if err := <-served; err != nil {
			t.Fatalf("proxy: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// TestReplayAcrossTransports replays a stdio tape over HTTP and HTTP tapes
// over stdio and HTTP, with server requests, progress and a cancel.
func TestReplayAcrossTransports(t *testing.T) {
	stdioTape := recordStdio(t, "2025-11-25", elicitOpts, richScenario(t))
	httpTape := recordHTTP(t, refserver.HTTPConfig{}, "2025-11-25", elicitOpts, richScenario(t))
	tests := []struct {
		name string
		tape string
		dial func(t *testing.T) DialFunc
	}{
		{"stdio-tape-over-http", stdioTape, func(t *testing.T) DialFunc { return httpDial(refHTTP(t, refserver.HTTPConfig{})) }},
		{"http-tape-over-stdio", httpTape, func(*testing.T) DialFunc { return stdioDial("") }},
		{"http-tape-over-http", httpTape, func(t *testing.T) DialFunc { return httpDial(refHTTP(t, refserver.HTTPConfig{})) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sessions := loadTape(t, tc.tape)
			if len(sessions) != 1 {
				t.Fatalf("%d sessions", len(sessions))
			}
			var out bytes.Buffer
			w := newTapeBuffer(t, &out)
			rep, err := Run(context.Background(), sessions, tc.dial(t), WithSpeed(10), WithTimeout(10*time.Second), WithTape(w))
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			var text bytes.Buffer
			rep.WriteText(&text)
			sr := rep.Sessions[0]
			if rep.ExitCode() != 0 || sr.ServerRequests != 2 || sr.Matched != 8 {
				t.Fatalf("exit %d, matched %d, server requests %d:\n%s", rep.ExitCode(), sr.Matched, sr.ServerRequests, text.String())
			}
			checkReplayTape(t, out.Bytes())
		})
	}
}

// TestReplay2026 replays 2026-07-28 sessions, where the server asks the
// client through multi round-trip results instead of requests: stdio, and
// stateless HTTP.
func TestReplay2026(t *testing.T) {
	scenario := func(ctx context.Context, cs *mcp.ClientSession) {
		call(t, ctx, cs, "echo", map[string]any{"message": "hello"})
		call(t, ctx, cs, "ask", map[string]any{"kind": "elicitation"})
		call(t, ctx, cs, "ask", map[string]any{"kind": "sampling"})
		p := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 30, "steps": 2}}
		p.SetProgressToken(7)
		if _, err := cs.CallTool(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	stateless := refserver.HTTPConfig{Stateless: true}
	tests := []struct {
		name string
		tape func(t *testing.T) string
		dial func(t *testing.T) DialFunc
	}{
		{"stdio", func(t *testing.T) string { return recordStdio(t, "2026-07-28", elicitOpts, scenario) },
			func(*testing.T) DialFunc { return stdioDial("") }},
		{"stateless-http", func(t *testing.T) string { return recordHTTP(t, stateless, "2026-07-28", elicitOpts, scenario) },
			func(t *testing.T) DialFunc { return httpDial(refHTTP(t, stateless)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sessions := loadTape(t, tc.tape(t))
			if len(sessions) == 0 || sessions[0].Version != "2026-07-28" {
				t.Fatalf("sessions %d, version %q", len(sessions), sessions[0].Version)
			}
			rep, err := Run(context.Background(), sessions, tc.dial(t), WithMaxSpeed(), WithTimeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			matched := 0
			for _, s := range rep.Sessions {
				matched += s.Matched
			}
			if rep.ExitCode() != 0 || matched < 4 {
				t.Fatalf("exit %d, matched %d:\n%s", rep.ExitCode(), matched, text.String())
			}
		})
	}
}

// pipelinedLines is a client that writes its whole session at once, without
// waiting for initialize's answer: over stdio the server reads it in order.
const pipelinedLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"r1","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"again"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}
`

// recordPipelined records lines sent all at once to the helper reference
// server on stdio, and returns the tape's path.
func recordPipelined(t *testing.T, lines string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipelined.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "stdio", Target: "refserver"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = capture.RunStdio(ctx, capture.StdioOptions{
		Command: refServerArgv(), Env: append(os.Environ(), helperEnv+"=1"), Stdin: strings.NewReader(lines), Stdout: io.Discard, Tape: w,
	})
	if err != nil {
		t.Fatalf("RunStdio: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayPipelinedStdioOverHTTP replays, 50 times, a stdio tape whose
// client sent everything before initialize was answered, over Streamable
// HTTP: initialize must be answered (the session id known) and the
// notification acknowledged before what follows is sent, or the server
// sees tools/list before notifications/initialized, or without a session.
func TestReplayPipelinedStdioOverHTTP(t *testing.T) {
	sessions := loadTape(t, recordPipelined(t, pipelinedLines))
	if len(sessions) != 1 || len(sessions[0].Steps) != 5 {
		t.Fatalf("%d sessions; want 1 of 5 steps", len(sessions))
	}
	dial := httpDial(refHTTP(t, refserver.HTTPConfig{}))
	for i := range 50 {
		rep, err := Run(context.Background(), sessions, dial, WithMaxSpeed(), WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if sr := rep.Sessions[0]; rep.ExitCode() != 0 || sr.Matched != 4 {
			var text bytes.Buffer
			rep.WriteText(&text)
			t.Fatalf("run %d: exit %d, matched %d; want 0, 4:\n%s", i+1, rep.ExitCode(), sr.Matched, text.String())
		}
	}
}

// TestReplayHTTPServerHoldsHeaders: a server that takes the POST of
// initialize (sent alone, before anything else) and never sends the
// answer's headers fails the session after the timeout, not never.
func TestReplayHTTPServerHoldsHeaders(t *testing.T) {
	sessions := loadTape(t, recordPipelined(t, pipelinedLines))
	release := make(chan struct{})
	defer close(release)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		select {
		case <-release:
		case <-req.Context().Done():
		}
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := Run(ctx, sessions, httpDial("http://"+ln.Addr().String()+"/mcp"), WithMaxSpeed(), WithTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the replay waited for the headers past its timeout")
	}
	sr := rep.Sessions[0]
	if rep.ExitCode() != 2 || sr.Error == "" || !strings.Contains(sr.Error, "within 300ms") {
		t.Fatalf("exit %d, error %q; want 2 and a step not answered within 300ms", rep.ExitCode(), sr.Error)
	}
}

// TestReplayHTTPAnswerBrokenOff: a server that dies while it streams the
// answer to a request (its connection cut after the event stream's
// headers) fails the session at once, naming the request, rather than
// after the timeout.
func TestReplayHTTPAnswerBrokenOff(t *testing.T) {
	sessions := loadTape(t, recordPipelined(t, pipelinedLines))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		switch {
		case bytes.Contains(body, []byte(`"initialize"`)):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			id := body[bytes.Index(body, []byte(`"id":`))+5:]
			id = id[:bytes.IndexAny(id, ",}")]
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"f","version":"1"}}}`, id)
		case !bytes.Contains(body, []byte(`"id"`)):
			w.WriteHeader(http.StatusAccepted)
		default: // a request: the stream starts, then the server dies
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, sessions, httpDial("http://"+ln.Addr().String()+"/mcp"), WithMaxSpeed(), WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	sr := rep.Sessions[0]
	if rep.ExitCode() != 2 || !strings.Contains(sr.Error, "ended the answer") || took > 15*time.Second {
		t.Fatalf("exit %d, error %q after %v; want 2 and an answer broken off, well before the 30s timeout", rep.ExitCode(), sr.Error, took)
	}
}

// TestReplayStdioServerDoesNotRead: a stdio server that stops reading its
// input once it answered initialize cannot hold the replay past the
// timeout when a recorded line is longer than the pipe holds: the write
// is bounded.
func TestReplayStdioServerDoesNotRead(t *testing.T) {
	needShell(t)
	big := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", 300_000) + `"}}}` + "\n"
	// Nothing but initialize is awaited before the big line: an answer
	// awaited meanwhile would time out at the same moment as the write.
	initLines := strings.Join(strings.SplitAfter(pipelinedLines, "\n")[:2], "")
	sessions := loadTape(t, recordPipelined(t, initLines+big))
	dial := func(ctx context.Context, _ *Session) (transport.Conn, error) {
		const script = `read -r x; id=$(printf '%s' "$x" | sed 's/.*"id":\([^,}]*\).*/\1/'); printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"; exec sleep 30`
		return transport.DialStdio(ctx, []string{"sh", "-c", script}, transport.WithGrace(100*time.Millisecond))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := Run(ctx, sessions, dial, WithMaxSpeed(), WithTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the replay waited for the server to read past its timeout")
	}
	if sr := rep.Sessions[0]; rep.ExitCode() != 2 || !strings.Contains(sr.Error, "did not read it within 300ms") {
		t.Fatalf("exit %d, error %q; want 2 and a step the server did not read within 300ms", rep.ExitCode(), sr.Error)
	}
}
