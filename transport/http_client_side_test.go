package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
)

// langGraphServer serves the reference server's LangGraph dialect, with
// a chat tool of n deltas.
func langGraphServer(t *testing.T, n int) *httptest.Server {
	t.Helper()
	chat := refserver.Chat{Chunks: n, Delay: 2 * time.Millisecond}
	s, err := refserver.New(refserver.WithChat(chat))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(refserver.HTTPHandler(s, refserver.HTTPConfig{LangGraph: true, Chat: chat}))
	t.Cleanup(ts.Close)
	return ts
}

func chatCall(id string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"chat","arguments":{"query":%q}}}`, id, "q"+id)
}

func TestWithStreamPathDeliversOwnAnswersOnly(t *testing.T) {
	const n = 3
	ts := langGraphServer(t, n)
	ctx := context.Background()
	dial := func() *HTTPConn {
		c, err := DialHTTP(ctx, ts.URL+refserver.Path, WithStreamPath(refserver.StreamPath))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := dial(), dial()
	// b's stream is open (its first POST opens it) but it has no chat in
	// flight: the chunks of a's calls reach it and are dropped.
	if _, err := b.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), SendOptions{}); err != nil {
		t.Fatal(err)
	}
	recvAnswer(t, b, "1")
	ids := []string{"1", `"x"`}
	for _, id := range ids {
		ex, err := a.Send(ctx, chatCall(id), SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ex.Status != 202 {
			t.Fatalf("chat %s: status %d, want 202", id, ex.Status)
		}
	}
	parts := map[string][]jsonrpc.StreamPart{}
	for range len(ids) * (n + 2) {
		in := recvTimeout(t, a, 10*time.Second)
		if in.Stream != StreamGET {
			t.Errorf("frame %.80s on stream %q, want %q", in.Frame, in.Stream, StreamGET)
		}
		info := jsonrpc.Classify(in.Frame)
		parts[info.ID.Key()] = append(parts[info.ID.Key()], streamDialect.FramePart(in.Frame, &info))
	}
	for _, id := range ids {
		key := jsonrpc.Classify(chatCall(id)).ID.Key()
		if p := parts[key]; len(p) != n+2 || p[0] != jsonrpc.PartStart || p[n+1] != jsonrpc.PartEnd {
			t.Errorf("id %s: parts %v", id, p)
		}
	}
	if got := a.SideDropped(); got != 0 {
		t.Errorf("a dropped %d answers, want 0", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.SideDropped() < int64(len(ids)*(n+2)) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got, want := b.SideDropped(), int64(len(ids)*(n+2)); got != want {
		t.Errorf("b dropped %d answers, want %d (the chunks of a's calls)", got, want)
	}
	rctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if in, err := b.Recv(rctx); err == nil {
		t.Errorf("b received %.100s, want nothing", in.Frame)
	}
	// a's id 1 is answered: a chunk under it now is someone else's.
	if a.side.keep([]byte(`{"jsonrpc":"2.0","id":1,"result":{"type":"content_delta","delta":"late"}}`)) {
		t.Error("a delta after the end of its request was kept")
	}
}

func TestWithStreamPathEndFailsRecv(t *testing.T) {
	ts := langGraphServer(t, 50)
	ctx := context.Background()
	c, err := DialHTTP(ctx, ts.URL+refserver.Path, WithStreamPath(refserver.StreamPath))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Send(ctx, chatCall("7"), SendOptions{}); err != nil {
		t.Fatal(err)
	}
	recvTimeout(t, c, 10*time.Second) // the start: the stream is flowing
	ts.CloseClientConnections()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		_, err := c.Recv(rctx)
		if err == nil {
			continue // chunks that came before the cut
		}
		if !errors.Is(err, ErrServerClosed) {
			t.Fatalf("Recv: %v, want an error wrapping ErrServerClosed", err)
		}
		break
	}
	if _, err := c.Send(ctx, chatCall("8"), SendOptions{}); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Send after the stream ended: %v, want ErrServerClosed", err)
	}
}

func TestWithStreamPathChecks(t *testing.T) {
	for _, p := range []string{"", "mcp/stream", "ftp://x/y"} {
		if _, err := DialHTTP(context.Background(), "http://127.0.0.1:1/mcp", WithStreamPath(p)); err == nil {
			t.Errorf("WithStreamPath(%q): no error", p)
		}
	}
	if _, err := DialLegacySSE(context.Background(), "http://127.0.0.1:1/sse", WithStreamPath("/s")); err == nil {
		t.Error("WithStreamPath on legacy SSE: no error")
	}
}
