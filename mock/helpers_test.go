//lint:file-ignore SA1019 the tests mock sampling, deprecated from 2026-07-28 (SEP-2577) but live on every version the SDK serves.
package mock

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/tape"
)

// tee copies the lines written to it to dst and records each on the tape.
type tee struct {
	dst  io.Writer
	w    *tape.Writer
	dir  tape.Direction
	mu   *sync.Mutex
	part []byte
}

func (t *tee) Write(p []byte) (int, error) {
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		line := append([]byte(nil), t.part[:i]...)
		t.part = t.part[i+1:]
		t.mu.Lock()
		err := t.w.Write(&tape.Record{Type: tape.TypeMessage, Time: time.Now().UnixNano(), Session: "s1", Dir: t.dir, Frame: line})
		t.mu.Unlock()
		if err != nil {
			return 0, err
		}
	}
	return t.dst.Write(p)
}

// progressCounter, when set, counts the progress notifications of the
// next client made (tests that use it do not run in parallel).
var progressCounter *counter

// clientVersion is the protocol version the next client asks for ("": the
// SDK's default, 2026-07-28).
var clientVersion string

// clientOptions declares sampling and elicitation, answered with fixed
// values.
func clientOptions() *mcp.ClientOptions {
	progress := progressCounter
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			if progress != nil {
				progress.add()
			}
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}
}

// connectPipes connects a Go SDK client to serve, which reads the client's
// frames from in and writes its own to out; wrap may wrap the two writers.
func connectPipes(t testing.TB, ctx context.Context, serve func(ctx context.Context, in io.Reader, out io.Writer) error,
	wrap func(c2s, s2c io.Writer) (io.Writer, io.Writer)) (*mcp.ClientSession, func()) {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	var toServer, toClient io.Writer = c2sW, s2cW
	if wrap != nil {
		toServer, toClient = wrap(c2sW, s2cW)
	}
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, c2sR, toClient)
		s2cW.Close()
		done <- err
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "mock-test", Version: "1"}, clientOptions())
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: writeCloser{toServer, c2sW}, MaxLineLength: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: clientVersion})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs, func() {
		cs.Close()
		c2sW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the server did not end")
		}
	}
}

type writeCloser struct {
	io.Writer
	c io.Closer
}

func (w writeCloser) Close() error { return w.c.Close() }

// recordRef records the scenario of a Go SDK client against the reference
// server, in-process, and returns the tape's path.
func recordRef(t testing.TB, scenario func(ctx context.Context, cs *mcp.ClientSession)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "stdio", Target: "refserver"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	cs, end := connectPipes(t, ctx, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return refserver.ServeStdio(ctx, srv, in, out)
	}, func(c2s, s2c io.Writer) (io.Writer, io.Writer) {
		return &tee{dst: c2s, w: w, dir: tape.ClientToServer, mu: &mu}, &tee{dst: s2c, w: w, dir: tape.ServerToClient, mu: &mu}
	})
	scenario(ctx, cs)
	end()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadSession loads the only session of the tape at path.
func loadSession(t testing.TB, path string) *replay.Session {
	t.Helper()
	s, err := replay.Pick(loadSessions(t, path), "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeTape writes a tape of one session "s1" from lines "> frame"
// (client to server) and "< frame" (server to client), 1 ms apart.
func writeTape(t testing.TB, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	at := int64(1_000_000_000)
	for _, l := range lines {
		dir := tape.ClientToServer
		if l[0] == '<' {
			dir = tape.ServerToClient
		}
		at += int64(time.Millisecond)
		if err := w.Write(&tape.Record{Type: tape.TypeMessage, Time: at, Session: "s1", Dir: dir, Frame: []byte(l[2:])}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// converse serves m over stdio to the client lines and returns the mock's
// output lines.
func converse(t *testing.T, m *Mock, lines ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in := bytes.NewBufferString("")
	for _, l := range lines {
		in.WriteString(l + "\n")
	}
	var out bytes.Buffer
	if err := m.ServeStdio(ctx, in, &out); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	got := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	res := make([]string, 0, len(got))
	for _, g := range got {
		if len(g) > 0 {
			res = append(res, string(g))
		}
	}
	return res
}

// loadSessionsOf writes a tape of the lines (see writeTape) and loads it.
func loadSessionsOf(t testing.TB, lines []string) []*replay.Session {
	t.Helper()
	return []*replay.Session{loadSession(t, writeTape(t, lines...))}
}

// recordHTTP starts the HTTP recording proxy in front of upstream,
// writing the tape at path, and returns the proxy's URL (scheme and host)
// and the function that stops it and closes the tape.
func recordHTTP(t testing.TB, upstream, path string) (string, func()) {
	t.Helper()
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "http", Target: upstream})
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := capture.NewHTTPProxy(upstream, w, capture.WithShutdownGrace(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(proxy)
	return ps.URL, func() {
		ps.Close()
		if err := proxy.Close(); err != nil {
			t.Errorf("proxy: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
