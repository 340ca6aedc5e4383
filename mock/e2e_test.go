package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
)

// helperTapeEnv switches TestHelperMock into a mock of the tape it names,
// on stdio.
const helperTapeEnv = "MCPTAPE_MOCK_HELPER_TAPE"

// TestHelperMock is not a test: run with helperTapeEnv set, it is the mock
// of that tape on stdio (the stdio target of the replay tests).
func TestHelperMock(t *testing.T) {
	path := os.Getenv(helperTapeEnv)
	if path == "" {
		t.Skip("helper process for the mock tests")
	}
	m, err := New(loadSessions(t, path))
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	if err := m.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// scenario is a client session that touches every kind of playback:
// lists, calls, progress, elicitation, sampling, a resource and a prompt.
// It returns what the client saw, as JSON, for comparison.
func scenario(t *testing.T, ctx context.Context, cs *mcp.ClientSession, progress *counter) []string {
	var seen []string
	keep := func(v any, err error) {
		if err != nil {
			seen = append(seen, "error: "+err.Error())
			return
		}
		b, _ := json.Marshal(v)
		seen = append(seen, string(b))
	}
	keep(cs.ListTools(ctx, nil))
	keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}))
	p := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 30, "steps": 3}}
	p.SetProgressToken("tok-1")
	keep(cs.CallTool(ctx, p))
	// A call cancelled by the client: progress, then notifications/cancelled.
	cctx, cancel := context.WithCancel(ctx)
	pc := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 5000, "steps": 100}}
	pc.SetProgressToken("tok-2")
	go func() {
		for progress.get() < 5 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := cs.CallTool(cctx, pc)
	cancel()
	seen = append(seen, fmt.Sprintf("cancelled call: %v", err))
	keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kind": "elicitation"}}))
	keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kind": "sampling"}}))
	keep(cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: refserver.ReadmeURI}))
	keep(cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}}))
	keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"mode": "rpc"}}))
	seen = append(seen, "progress notifications: "+progress.String())
	return seen
}

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) add() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.n)
}

// TestMockGoSDKClient records the scenario against the reference server,
// then runs it against the mock of that tape: the client sees the same.
func TestMockGoSDKClient(t *testing.T) { forVersions(t, testMockGoSDKClient) }

// forVersions runs test with clients of protocol 2026-07-28 (the SDK's
// default) and 2025-11-25.
func forVersions(t *testing.T, test func(t *testing.T)) {
	for _, v := range []string{"", "2025-11-25"} {
		t.Run("version="+v, func(t *testing.T) {
			clientVersion = v
			defer func() { clientVersion = "" }()
			test(t)
		})
	}
}

// recordScenario records the scenario against the reference server and
// returns the tape's path and what the client saw.
func recordScenario(t *testing.T) (path string, seen []string) {
	var progress counter
	path = recordRefWith(t, &progress, func(ctx context.Context, cs *mcp.ClientSession) {
		seen = scenario(t, ctx, cs, &progress)
	})
	return path, seen
}

func testMockGoSDKClient(t *testing.T) {
	path, recorded := recordScenario(t)
	m, err := New([]*replay.Session{loadSession(t, path)}, WithMaxSpeed())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var liveProgress counter
	cs, end := connectPipesWith(t, ctx, &liveProgress, m.ServeStdio, nil)
	got := scenario(t, ctx, cs, &liveProgress)
	end()
	if !reflect.DeepEqual(recorded, got) {
		t.Errorf("the client saw other answers from the mock:\nrecorded %q\nmock     %q", recorded, got)
	}
	if r := m.Report(); len(r.Unmatched) > 0 || len(r.NeverAsked) > 0 {
		t.Errorf("report: %+v", r)
	}
}

// TestMockGoSDKClientHTTP runs the scenario with the Go SDK's Streamable
// HTTP client against the mock of a stdio recording: the client sees what
// it saw against the real server. A 2026-07-28 client meets a 2025
// recording as it meets a 2025 server: its server/discover is refused and
// it falls back to initialize.
func TestMockGoSDKClientHTTP(t *testing.T) {
	for _, tt := range []struct{ rec, live string }{{"", ""}, {"2025-11-25", "2025-11-25"}, {"2025-11-25", ""}} {
		t.Run("recorded="+tt.rec+",live="+tt.live, func(t *testing.T) {
			clientVersion = tt.rec
			defer func() { clientVersion = "" }()
			path, recorded := recordScenario(t)
			m, err := New([]*replay.Session{loadSession(t, path)}, WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(m.HTTPHandler(HTTPConfig{}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var liveProgress counter
			progressCounter = &liveProgress
			client := mcp.NewClient(&mcp.Implementation{Name: "mock-test", Version: "1"}, clientOptions())
			progressCounter = nil
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + Path}, &mcp.ClientSessionOptions{ProtocolVersion: tt.live})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			got := scenario(t, ctx, cs, &liveProgress)
			cs.Close()
			if !reflect.DeepEqual(recorded, got) {
				t.Errorf("the client saw other answers from the mock:\nrecorded %q\nmock     %q", recorded, got)
			}
		})
	}
}

// TestReplayAgainstMock replays a recorded session against the mock of
// the same tape, over every transport: every answer matches.
func TestReplayAgainstMock(t *testing.T) { forVersions(t, testReplayAgainstMock) }

func testReplayAgainstMock(t *testing.T) {
	path, _ := recordScenario(t)
	sessions := []*replay.Session{loadSession(t, path)}
	mrtr := 0
	for _, m := range sessions[0].Server {
		if bytes.Contains(m.Frame, []byte(`"input_required"`)) {
			mrtr++
		}
	}
	if want := map[string]int{"": 2, "2025-11-25": 0}[clientVersion]; mrtr != want {
		t.Fatalf("the recording holds %d MRTR input_required answers, want %d", mrtr, want)
	}
	tests := []struct {
		name string
		dial func(t *testing.T) replay.DialFunc
	}{
		{"stdio", func(t *testing.T) replay.DialFunc {
			return func(ctx context.Context, _ *replay.Session) (transport.Conn, error) {
				return transport.DialStdio(ctx, []string{os.Args[0], "-test.run=^TestHelperMock$"},
					transport.WithEnv(helperTapeEnv+"="+path), transport.WithGrace(2*time.Second))
			}
		}},
		{"http", func(t *testing.T) replay.DialFunc {
			m, err := New([]*replay.Session{loadSession(t, path)})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(m.HTTPHandler(HTTPConfig{}))
			t.Cleanup(srv.Close)
			return func(ctx context.Context, s *replay.Session) (transport.Conn, error) {
				return transport.DialHTTP(ctx, srv.URL+Path, replay.HTTPOptions(s)...)
			}
		}},
		{"http-stateless", func(t *testing.T) replay.DialFunc {
			if clientVersion != "" {
				t.Skip("stateless HTTP is for protocol 2026-07-28")
			}
			m, err := New([]*replay.Session{loadSession(t, path)})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(m.HTTPHandler(HTTPConfig{Stateless: true}))
			t.Cleanup(srv.Close)
			return func(ctx context.Context, s *replay.Session) (transport.Conn, error) {
				return transport.DialHTTP(ctx, srv.URL+Path, replay.HTTPOptions(s)...)
			}
		}},
		{"sse", func(t *testing.T) replay.DialFunc {
			m, err := New([]*replay.Session{loadSession(t, path)})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(m.SSEHandler())
			t.Cleanup(srv.Close)
			return func(ctx context.Context, s *replay.Session) (transport.Conn, error) {
				return transport.DialLegacySSE(ctx, srv.URL+"/sse")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rep, err := replay.Run(ctx, sessions, tt.dial(t), replay.WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			if rep.ExitCode() != 0 {
				var b bytes.Buffer
				_ = rep.WriteText(&b)
				t.Errorf("replay against the mock: exit %d\n%s", rep.ExitCode(), b.String())
			}
			if want := map[string]int{"": 0, "2025-11-25": 2}[clientVersion]; rep.Sessions[0].ServerRequests != want {
				t.Errorf("%d server requests answered, want %d (elicitation and sampling)", rep.Sessions[0].ServerRequests, want)
			}
		})
	}
}

// recordRefWith is recordRef with a client that counts progress.
func recordRefWith(t *testing.T, progress *counter, sc func(ctx context.Context, cs *mcp.ClientSession)) string {
	t.Helper()
	progressCounter = progress
	defer func() { progressCounter = nil }()
	return recordRef(t, sc)
}

// connectPipesWith is connectPipes with a client that counts progress.
func connectPipesWith(t *testing.T, ctx context.Context, progress *counter, serve func(ctx context.Context, in io.Reader, out io.Writer) error,
	wrap func(c2s, s2c io.Writer) (io.Writer, io.Writer)) (*mcp.ClientSession, func()) {
	t.Helper()
	progressCounter = progress
	defer func() { progressCounter = nil }()
	return connectPipes(t, ctx, serve, wrap)
}
