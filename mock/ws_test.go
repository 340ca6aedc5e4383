package mock

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestServeWSPathsAndSubprotocols: the WebSocket mock serves /mcp and the
// LangGraph docs' /mcp/ws, to clients offering the subprotocol "mcp"
// (selected) and to clients offering none (accepted without one), and
// plays a streamed answer back part by part, each a frame of its own.
func TestServeWSPathsAndSubprotocols(t *testing.T) {
	m, err := New(loadSessionsOf(t, []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"type":"content_start"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"type":"content_delta","delta":"a"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"type":"content_end","usage":{"total_tokens":2}}}`,
	}), WithMaxSpeed())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.ServeWS(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeWS: %v", err)
		}
	}()
	for _, tc := range []struct {
		path, offer, selected string
	}{
		{WSPath, "", ""},
		{WSPath, "mcp", "mcp"},
		{Path, "", ""},
		{Path, "mcp", "mcp"},
	} {
		t.Run(tc.path+" offering "+tc.offer, func(t *testing.T) {
			var opts websocket.DialOptions
			if tc.offer != "" {
				opts.Subprotocols = []string{tc.offer}
			}
			c, _, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+tc.path, &opts)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.CloseNow()
			if got := c.Subprotocol(); got != tc.selected {
				t.Errorf("subprotocol %q, want %q", got, tc.selected)
			}
			call := `{"jsonrpc":"2.0","id":"live","method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`
			if err := c.Write(ctx, websocket.MessageText, []byte(call)); err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{`"type":"content_start"`, `"delta":"a"`, `"type":"content_end"`} {
				_, data, err := c.Read(ctx)
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if !strings.Contains(string(data), `"id":"live"`) || !strings.Contains(string(data), want) {
					t.Errorf("frame %d = %s, want the live id and %s", i, data, want)
				}
			}
			if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}
