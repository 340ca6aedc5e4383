package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/syncio"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveScript is a scripted stdio session: initialize, then an echo call.
const serveScript = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}
`

// TestServeUsage checks that wrong invocations fail with exit code 2 and
// one line on stderr.
func TestServeUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra"}, "serve takes no arguments"},
		{[]string{"serve", "--json"}, "need --http"},
		{[]string{"serve", "--stateless"}, "need --http"},
		{[]string{"serve", "--http", "nonsense"}, "--http: want HOST:PORT or PORT"},
		{[]string{"serve", "--ws", "nonsense"}, "--ws: want HOST:PORT or PORT"},
		{[]string{"serve", "--ws", "127.0.0.1:0", "--http", "127.0.0.1:0"}, "--http and --ws exclude each other"},
		{[]string{"serve", "--http", "127.0.0.1:99999"}, `bad port "99999"`},
		{[]string{"serve", "--http", "127.0.0.1:0", "--session-timeout", "-1s"}, "must not be negative"},
		{[]string{"serve", "--log-level", "loud"}, "--log-level"},
		{[]string{"serve", "--protocol-version", "1999-01-01"}, `protocol version "1999-01-01" is not supported`},
		{[]string{"serve", "--no-such-flag"}, "unknown flag"},
		{[]string{"serve", "--chunk-delay", "5ms"}, "--chunk-delay needs --stream-chunks"},
		{[]string{"serve", "--stream-chunks", "-2"}, "chunks -2 out of range"},
		{[]string{"serve", "--dialect", "langgraph"}, "--dialect langgraph needs --http"},
		{[]string{"serve", "--http", "0", "--dialect", "langgraph", "--json"}, "stateless with JSON answers already"},
		{[]string{"serve", "--http", "0", "--dialect", "sse"}, `--dialect: want streamable or langgraph (got "sse")`},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(context.Background(), &stdio{in: strings.NewReader(""), out: &out, err: &errOut}, tt.args)
		msg := errOut.String()
		if code != 2 || !strings.HasPrefix(msg, "mcptape serve: ") || !strings.Contains(msg, tt.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", tt.args, code, msg, tt.want)
		}
	}
}

// TestListenAddr checks the --http values accepted.
func TestListenAddr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"8080", "127.0.0.1:8080"},
		{"0", "127.0.0.1:0"},
		{"127.0.0.1:0", "127.0.0.1:0"},
		{"[::1]:9", "[::1]:9"},
		{":8080", ":8080"},
		{"localhost:1", "localhost:1"},
		{"70000", ""},
		{"host", ""},
		{"host:port", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := listenAddr(tt.in)
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("listenAddr(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestServeStdioInProcess runs the command on a scripted stdin.
func TestServeStdioInProcess(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), &stdio{in: strings.NewReader(serveScript), out: &out, err: &errOut},
		[]string{"serve", "--echo-prefix", "v2: "})
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), `"text":"v2: hi"`) || !strings.Contains(out.String(), `"version":"`+version+`"`) {
		t.Errorf("stdout lacks the echo answer or the tool version:\n%s", out.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %q", errOut.String())
	}
}

var (
	serveBinOnce sync.Once
	serveBin     string
	serveBinErr  error
)

// serveBinary builds mcptape once for the tests that run it as a process.
func serveBinary(t *testing.T) string {
	t.Helper()
	serveBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcptape-serve-test")
		if err != nil {
			serveBinErr = err
			return
		}
		serveBin = filepath.Join(dir, "mcptape")
		out, err := exec.Command("go", "build", "-o", serveBin, ".").CombinedOutput()
		if err != nil {
			serveBinErr = err
			serveBin = string(out)
		}
	})
	if serveBinErr != nil {
		t.Fatalf("go build: %v\n%s", serveBinErr, serveBin)
	}
	return serveBin
}

// serveProc is a running mcptape: `mcptape serve`, or another command
// (startMcptape).
type serveProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout syncio.Buffer // written by the process while a test reads it
	lines  chan string   // stderr, line by line
	done   chan error
}

// startServe starts `mcptape serve args...`.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return startMcptape(t, append([]string{"serve"}, args...)...)
}

// startMcptape starts the built mcptape with args.
func startMcptape(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return startMcptapeEnv(t, nil, args...)
}

// startMcptapeEnv starts the built mcptape with args and the variables
// env added to the environment.
func startMcptapeEnv(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	p := newMcptape(t, args...)
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.start(t)
	return p
}

// newMcptape returns the built mcptape with args, to be started (start)
// once its command is set up.
func newMcptape(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return &serveProc{cmd: exec.Command(serveBinary(t), args...), lines: make(chan string, 100), done: make(chan error, 1)}
}

// start starts p, its stderr read line by line into p.lines; it is
// killed at the end of the test.
func (p *serveProc) start(t *testing.T) {
	t.Helper()
	p.cmd.Stdout = &p.stdout
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
}

// line returns the next stderr line, failing after 10 s.
func (p *serveProc) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatal("mcptape closed its stderr")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no stderr line from mcptape within 10 s")
	}
	return ""
}

// wait returns the exit code, failing after 5 s.
func (p *serveProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(5 * time.Second):
		t.Fatal("mcptape did not exit within 5 s")
	}
	return -1
}

var listeningRE = regexp.MustCompile(`^listening on (http://(127\.0\.0\.1|0\.0\.0\.0):[1-9][0-9]*/mcp)$`)

// TestServeHTTPProcess runs `mcptape serve --http 127.0.0.1:0`, talks to it
// with the Go SDK client and stops it with SIGTERM.
func TestServeHTTPProcess(t *testing.T) {
	for _, tt := range []struct {
		args []string
		sig  syscall.Signal
	}{
		{[]string{"--http", "127.0.0.1:0"}, syscall.SIGTERM},
		{[]string{"--http", "127.0.0.1:0", "--stateless", "--json", "--echo-prefix", "s:"}, syscall.SIGINT},
		{[]string{"--http", "127.0.0.1:0", "--stateless"}, syscall.SIGHUP}, // the terminal closed: a clean stop too
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			p := startServe(t, tt.args...)
			m := listeningRE.FindStringSubmatch(p.line(t))
			if m == nil {
				t.Fatal("first stderr line is not 'listening on http://ADDR/mcp'")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m[1]}, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}})
			if err != nil {
				t.Fatal(err)
			}
			want := "x"
			if strings.Contains(strings.Join(tt.args, " "), "--echo-prefix") {
				want = "s:x"
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != want {
				t.Errorf("echo: %q, want %q", got, want)
			}
			cs.Close()
			_ = p.cmd.Process.Signal(tt.sig)
			if code := p.wait(t); code != 0 {
				t.Errorf("exit code %d after %v, want 0", code, tt.sig)
			}
			for l := range p.lines {
				t.Errorf("unexpected stderr line after a clean session: %q", l)
			}
		})
	}
}

// TestServeHTTPProcessErrors checks a port in use (exit 1, one line) and
// the warning for a non-loopback address.
func TestServeHTTPProcessErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := startServe(t, "--http", ln.Addr().String())
	msg := p.line(t)
	if !strings.HasPrefix(msg, "mcptape serve: ") || !strings.Contains(msg, "address already in use") {
		t.Errorf("port in use: stderr %q", msg)
	}
	if code := p.wait(t); code != 1 {
		t.Errorf("port in use: exit %d, want 1", code)
	}

	p = startServe(t, "--http", "0.0.0.0:0")
	if w := p.line(t); !strings.Contains(w, "warning: listening on 0.0.0.0:") {
		t.Errorf("non-loopback address: first stderr line %q, want a warning", w)
	}
	if l := p.line(t); !listeningRE.MatchString(l) {
		t.Errorf("non-loopback address: second stderr line %q", l)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// TestServeStdioProcess checks the stdio server as a process: it answers a
// script and exits 0 at stdin EOF; with stdin open, SIGTERM stops it with 0.
func TestServeStdioProcess(t *testing.T) {
	p := startServe(t)
	if _, err := io.WriteString(p.stdin, serveScript); err != nil {
		t.Fatal(err)
	}
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d at stdin EOF, want 0", code)
	}
	if n := strings.Count(p.stdout.String(), "\n"); n != 2 || !strings.Contains(p.stdout.String(), `"text":"hi"`) {
		t.Errorf("stdout (%d lines): %s", n, p.stdout.String())
	}

	p = startServe(t)
	if _, err := io.WriteString(p.stdin, serveScript); err != nil {
		t.Fatal(err)
	}
	// Its answers show that it is serving, so past main's signal handler:
	// a SIGTERM before that kills it (exit -1; a fixed 100 ms wait
	// stood for this before).
	for deadline := time.Now().Add(10 * time.Second); strings.Count(p.stdout.String(), "\n") < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no answers within 10 s: %q", p.stdout.String())
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// TestServeStreamChunksInProcess checks that --stream-chunks answers a chat
// call with start, N deltas and an end carrying usage, on one id.
func TestServeStreamChunksInProcess(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"chat","arguments":{"query":"two words"}}}` + "\n"
	var out, errOut bytes.Buffer
	code := run(context.Background(), &stdio{in: strings.NewReader(in), out: &out, err: &errOut},
		[]string{"serve", "--stream-chunks", "2", "--chunk-delay", "1ms"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := []string{`"type":"content_start"`, `"type":"content_delta"`, `"type":"content_delta"`,
		`"usage":{"prompt_tokens":2,"completion_tokens":11,"total_tokens":13}`}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d frames, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		if !strings.Contains(l, `"id":5,`) || !strings.Contains(l, want[i]) {
			t.Errorf("frame %d = %s, want id 5 and %s", i, l, want[i])
		}
	}
}
