package refserver

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const wsInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// wsDial connects to the handler's path offering protos.
func wsDial(t *testing.T, ctx context.Context, base, path string, protos []string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+path, &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// wsRoundTrip sends frame and returns the next n text frames.
func wsRoundTrip(t *testing.T, ctx context.Context, c *websocket.Conn, frame string, n int) []string {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatalf("write: %v", err)
	}
	var out []string
	for range n {
		typ, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read after %.40q: %v", frame, err)
		}
		if typ != websocket.MessageText {
			t.Fatalf("got a %v frame", typ)
		}
		out = append(out, string(data))
	}
	return out
}

func TestWSHandler(t *testing.T) {
	ts := httptest.NewServer(WSHandler(newServer(t), nil))
	defer ts.Close()
	tests := []struct {
		name     string
		path     string
		protos   []string
		wantSub  string
		frame    string // sent after initialize and initialized
		wantN    int
		contains []string
	}{
		{"subprotocol mcp", Path, []string{"mcp"}, "mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, 1, []string{`"id":2`, `hi`}},
		{"no subprotocol", Path, nil, "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 1, []string{`"id":2`, `"echo"`}},
		{"no subprotocol at /mcp/ws", WSPath, nil, "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 1, []string{`"id":2`, `"echo"`}},
		{"mcp at /mcp/ws", WSPath, []string{"mcp"}, "mcp", `{"jsonrpc":"2.0","id":"x","method":"ping"}`, 1, []string{`"id":"x"`}},
		{"other subprotocols only", Path, []string{"graphql-ws", "chat"}, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, 1, []string{`"id":2`}},
		{"not JSON", Path, []string{"mcp"}, "mcp", `hello`, 1, []string{`-32700`, `"id":null`}},
		{"big frame", Path, []string{"mcp"}, "mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", 16<<20) + `"}}}`, 1, []string{`"id":2`, strings.Repeat("x", 1000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := 30 * time.Second
			if len(tt.frame) > 1<<20 {
				limit = 2 * time.Minute // a 16 MiB echo under -race on a busy machine
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			c := wsDial(t, ctx, ts.URL, tt.path, tt.protos)
			if got := c.Subprotocol(); got != tt.wantSub {
				t.Errorf("subprotocol %q, want %q", got, tt.wantSub)
			}
			got := wsRoundTrip(t, ctx, c, wsInit, 1)
			if !strings.Contains(got[0], `"protocolVersion":"2025-06-18"`) {
				t.Fatalf("initialize answered %s", got[0])
			}
			wsRoundTrip(t, ctx, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0)
			got = wsRoundTrip(t, ctx, c, tt.frame, tt.wantN)
			for _, want := range tt.contains {
				if !strings.Contains(got[0], want) {
					t.Errorf("answer %.200s lacks %.40q", got[0], want)
				}
			}
			// The session goes on after every case, a bad frame included.
			got = wsRoundTrip(t, ctx, c, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, 1)
			if got[0] != `{"jsonrpc":"2.0","id":9,"result":{}}` {
				t.Errorf("ping answered %s", got[0])
			}
		})
	}
}

func TestWSHandlerBatch(t *testing.T) {
	ts := httptest.NewServer(WSHandler(newServer(t), nil))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := wsDial(t, ctx, ts.URL, Path, []string{"mcp"})
	init := strings.Replace(wsInit, "2025-06-18", "2025-03-26", 1) // batches are 2025-03-26's
	wsRoundTrip(t, ctx, c, init, 1)
	got := wsRoundTrip(t, ctx, c, `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`, 2)
	ids := map[string]bool{}
	for _, f := range got {
		var m struct{ ID json.RawMessage }
		if err := json.Unmarshal([]byte(f), &m); err != nil {
			t.Fatalf("answer %s: %v", f, err)
		}
		ids[string(m.ID)] = true
	}
	if !ids["2"] || !ids["3"] {
		t.Errorf("batch answered %v", got)
	}
}

func TestWSHandlerRefusals(t *testing.T) {
	ts := httptest.NewServer(WSHandler(newServer(t), nil))
	defer ts.Close()
	tests := []struct {
		name   string
		path   string
		header http.Header
		want   int
	}{
		{"other path", "/x", nil, http.StatusNotFound},
		{"below /mcp/ws", WSPath + "/x", nil, http.StatusNotFound},
		{"cross origin", Path, http.Header{"Origin": {"http://evil.example"}}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+tt.path, &websocket.DialOptions{HTTPHeader: tt.header})
			if err == nil || resp == nil || resp.StatusCode != tt.want {
				t.Fatalf("dial: err %v, resp %v; want status %d", err, resp, tt.want)
			}
		})
	}
}

// TestServeWSStops stops ServeWS while a chat stream runs: it returns,
// the connection is closed with status 1001 and the stream has no end
// result.
func TestServeWSStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	chat := Chat{Chunks: 1000, Delay: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- ServeWS(ctx, ln, newServer(t, WithChat(chat)), WSConfig{Chat: chat}) }()
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dcancel()
	c := wsDial(t, dctx, "http://"+ln.Addr().String(), Path, []string{"mcp"})
	wsRoundTrip(t, dctx, c, wsInit, 1)
	wsRoundTrip(t, dctx, c, chatCallFrame("5", "q"), 3) // start and two deltas
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("ServeWS: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeWS did not stop")
	}
	for {
		_, data, err := c.Read(dctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusGoingAway {
				t.Errorf("after ServeWS returned: %v, want a close frame 1001", err)
			}
			break
		}
		if strings.Contains(string(data), "content_end") {
			t.Fatalf("a stream cut by the stop ended with %s", data)
		}
	}
}
