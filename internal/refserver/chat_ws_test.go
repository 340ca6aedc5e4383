package refserver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestChatWSStreamsInterleaved calls the chat tool twice at once over
// WebSocket, from a client that offers no subprotocol, at both paths: each
// chunk is a text frame of its own under its call's id, the two answers
// interleave, and a ping sent meanwhile is answered by the SDK. Without
// WSConfig.Chat the SDK answers the call once, plainly.
func TestChatWSStreamsInterleaved(t *testing.T) {
	chat := Chat{Chunks: 10, Delay: 20 * time.Millisecond}
	tests := []struct {
		name   string
		path   string
		protos []string
		stream bool
	}{
		{"no subprotocol at /mcp/ws", WSPath, nil, true},
		{"mcp at /mcp", Path, []string{Subprotocol}, true},
		{"not streamed without WSConfig.Chat", WSPath, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := WSConfig{}
			if tt.stream {
				cfg.Chat = chat
			}
			ts := httptest.NewServer(WSHandlerWith(newServer(t, WithChat(chat)), cfg))
			defer ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := wsDial(t, ctx, ts.URL, tt.path, tt.protos)
			if c.Subprotocol() != strings.Join(tt.protos, "") {
				t.Errorf("subprotocol %q, want %q", c.Subprotocol(), strings.Join(tt.protos, ""))
			}
			wsRoundTrip(t, ctx, c, wsInit, 1)
			wsRoundTrip(t, ctx, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0)
			calls := map[string]string{`2`: "hello world", `"b"`: "quantum computing now"}
			for _, id := range []string{`2`, `"b"`} {
				wsRoundTrip(t, ctx, c, chatCallFrame(id, calls[id]), 0)
			}
			wsRoundTrip(t, ctx, c, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, 0)
			want := 2*(chat.Chunks+2) + 1 // both streams and the ping
			if !tt.stream {
				want = 3
			}
			byID := map[string][]chatFrame{}
			var order []string // the id of every frame, in arrival order
			for range want {
				_, data, err := c.Read(ctx)
				if err != nil {
					t.Fatalf("read after %d frames: %v", len(order), err)
				}
				var f chatFrame
				if err := json.Unmarshal(data, &f); err != nil {
					t.Fatalf("frame %s: %v", data, err)
				}
				byID[string(f.ID)] = append(byID[string(f.ID)], f)
				order = append(order, string(f.ID))
			}
			if len(byID["9"]) != 1 {
				t.Errorf("ping answered %d times", len(byID["9"]))
			}
			if !tt.stream {
				for id := range calls {
					if len(byID[id]) != 1 || byID[id][0].Result.Type != "" {
						t.Errorf("id %s: %+v, want one plain result", id, byID[id])
					}
				}
				return
			}
			for id, q := range calls {
				checkChatStream(t, id, q, chat.Chunks, byID[id])
			}
			if switches := idSwitches(order, `2`, `"b"`); switches < 2 {
				t.Errorf("the two answers did not interleave: ids in order %v", order)
			}
		})
	}
}

// idSwitches counts how often the id changes from a to b or back in order,
// other ids aside.
func idSwitches(order []string, a, b string) int {
	n, last := 0, ""
	for _, id := range order {
		if id != a && id != b {
			continue
		}
		if last != "" && id != last {
			n++
		}
		last = id
	}
	return n
}

// TestChatWSClientLeavesMidStream: a client that closes while its chat
// answer streams gets the server's close frame (the closing handshake
// completes beside the stream), and the server serves the next one.
func TestChatWSClientLeavesMidStream(t *testing.T) {
	chat := Chat{Chunks: 1000, Delay: 5 * time.Millisecond}
	ts := httptest.NewServer(WSHandlerWith(newServer(t, WithChat(chat)), WSConfig{Chat: chat}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := wsDial(t, ctx, ts.URL, WSPath, nil)
	wsRoundTrip(t, ctx, c, chatCallFrame("1", "q"), 2)
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Errorf("close mid-stream: %v", err)
	}
	c2 := wsDial(t, ctx, ts.URL, WSPath, nil)
	got := wsRoundTrip(t, ctx, c2, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 1)
	if got[0] != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("next session's ping answered %s", got[0])
	}
}
