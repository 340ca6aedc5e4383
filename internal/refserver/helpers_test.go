package refserver

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transports the tests run the server on.
const (
	onStdio     = "stdio"          // ServeStdio over in-process pipes
	onHTTP      = "http"           // stateful Streamable HTTP, SSE answers
	onStateless = "http-stateless" // stateless Streamable HTTP
	onJSON      = "http-json"      // stateful Streamable HTTP, JSON answers
)

// allTransports lists every transport the server is tested on.
var allTransports = []string{onStdio, onHTTP, onStateless, onJSON}

// allVersions lists the protocol versions of the SDK, oldest first.
var allVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// wantVersion is the version a client asking for v negotiates on transport
// kind: stateful HTTP serves 2026-07-28 only statelessly, so the SDK client
// falls back to 2025-11-25.
func wantVersion(kind, v string) string {
	if v == "2026-07-28" && (kind == onHTTP || kind == onJSON) {
		return "2025-11-25"
	}
	return v
}

// newServer returns a reference server, failing the test on error.
func newServer(t testing.TB, opts ...Option) *mcp.Server {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// connect serves s on transport kind and returns a client session that
// asked for protocol version (empty: the SDK's default). Closing happens at
// the end of the test; for stdio it also checks that ServeStdio returned nil
// once the client closed.
func connect(t testing.TB, s *mcp.Server, kind, version string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	// The server lives until the test ends (a benchmark may run it far longer
	// than any fixed timeout); only connecting has a deadline.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var transport mcp.Transport
	var served chan error
	switch kind {
	case onStdio:
		c2sR, c2sW := io.Pipe()
		s2cR, s2cW := io.Pipe()
		served = make(chan error, 1)
		go func() {
			served <- ServeStdio(ctx, s, c2sR, s2cW)
			s2cW.Close()
		}()
		transport = &mcp.IOTransport{Reader: s2cR, Writer: c2sW, MaxLineLength: -1}
	case onHTTP, onStateless, onJSON:
		ts := httptest.NewServer(HTTPHandler(s, HTTPConfig{Stateless: kind == onStateless, JSONResponse: kind == onJSON}))
		t.Cleanup(ts.Close)
		transport = &mcp.StreamableClientTransport{Endpoint: ts.URL + Path}
	default:
		t.Fatalf("unknown transport %q", kind)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "refserver-test", Version: "1"}, copts)
	connectCtx, connectCancel := context.WithTimeout(ctx, 20*time.Second)
	defer connectCancel()
	cs, err := client.Connect(connectCtx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("%s %s: connect: %v", kind, version, err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if served == nil {
			return
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeStdio after the client closed: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("ServeStdio did not return after the client closed")
		}
	})
	return cs
}

// call calls tool name with args and fails the test on a protocol error.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s %v: %v", name, args, err)
	}
	return res
}

// text is the text of a result's text contents, joined.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "")
}

// logSink is a slog handler that keeps the messages it gets and signals
// each one.
type logSink struct {
	mu   sync.Mutex
	msgs []string
	got  chan string
}

func newLogSink() *logSink { return &logSink{got: make(chan string, 1000)} }

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logSink) WithGroup(string) slog.Handler            { return l }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Message)
	l.mu.Unlock()
	select {
	case l.got <- r.Message:
	default:
	}
	return nil
}

// waitFor waits up to d for a log message equal to msg.
func (l *logSink) waitFor(t testing.TB, msg string, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case m := <-l.got:
			if m == msg {
				return
			}
		case <-timeout:
			t.Fatalf("no log message %q within %v", msg, d)
		}
	}
}
