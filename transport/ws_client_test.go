package transport

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/internal/refserver/refservertest"
)

// wsServer serves the reference server over WebSocket and returns its URL.
func wsServer(t *testing.T) string { return refservertest.WS{}.Start(t) }

const wsInitFrame = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestWSConnRoundTrips(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := DialWebSocket(ctx, wsServer(t), WithHeader(http.Header{"X-Test": {"1"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Subprotocol() != WSSubprotocol {
		t.Errorf("subprotocol %q", c.Subprotocol())
	}
	tests := []struct {
		name  string
		frame string
		want  []string // substrings of the answers, in order
	}{
		{"initialize", wsInitFrame, []string{`"protocolVersion":"2025-03-26"`}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		{"call", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`, []string{`"id":2`}},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`, []string{`"id":`, `"id":`}},
	}
	for _, tt := range tests {
		written := 0
		ex, err := c.Send(ctx, []byte(tt.frame), SendOptions{Written: func() { written++ }})
		if err != nil {
			t.Fatalf("%s: send: %v", tt.name, err)
		}
		if ex.ID == 0 || ex.Responded.Before(ex.Sent) || written != 1 {
			t.Errorf("%s: exchange %+v, Written called %d times (want once)", tt.name, ex, written)
		}
		for _, want := range tt.want {
			in, err := c.Recv(ctx)
			if err != nil {
				t.Fatalf("%s: recv: %v", tt.name, err)
			}
			if !strings.Contains(string(in.Frame), want) || in.Stream != StreamWS {
				t.Errorf("%s: got %s on %q, want %q", tt.name, in.Frame, in.Stream, want)
			}
		}
	}
	if _, err := c.Send(ctx, nil, SendOptions{}); err == nil {
		t.Error("empty frame sent")
	}
}

func TestWSConnCloseAndServerEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	url := wsServer(t)

	// Close unblocks a waiting Recv with ErrClosed and is idempotent.
	c, err := DialWebSocket(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, err := c.Recv(ctx); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := c.Send(ctx, []byte("{}"), SendOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}

	// A server that closes gives ErrServerClosed with its status.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		_ = ws.Write(r.Context(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"x"}`))
		_ = ws.Close(websocket.StatusPolicyViolation, "bye")
	}))
	defer ts.Close()
	c, err = DialWebSocket(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if in, err := c.Recv(ctx); err != nil || string(in.Frame) != `{"jsonrpc":"2.0","method":"x"}` {
		t.Fatalf("first frame: %s, %v", in.Frame, err)
	}
	_, err = c.Recv(ctx)
	if !errors.Is(err, ErrServerClosed) || !strings.Contains(err.Error(), `status 1008 "bye"`) {
		t.Errorf("end: %v", err)
	}
}

func TestDialWebSocketErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer forbidden.Close()
	tests := []struct {
		name string
		url  string
		opts []Option
		want string
	}{
		{"refused upgrade", "ws" + strings.TrimPrefix(forbidden.URL, "http"), nil, "403"},
		{"http url", forbidden.URL, nil, "not a ws:// or wss:// URL"},
		{"http option", "ws://127.0.0.1:1/mcp", []Option{WithProtocolVersion("2025-06-18")}, "does not apply"},
		{"stdio option", "ws://127.0.0.1:1/mcp", []Option{WithDir("/")}, "does not apply"},
		{"bad dial timeout", "ws://127.0.0.1:1/mcp", []Option{WithDialTimeout(0)}, "dial timeout 0s is not positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DialWebSocket(ctx, tt.url, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			var se *StatusError
			if tt.want == "403" && (!errors.As(err, &se) || se.Status != http.StatusForbidden) {
				t.Errorf("not a *StatusError 403: %#v", err)
			}
		})
	}
}

// TestDialWebSocketSubprotocols: what DialWebSocket offers (mcp by
// default, others or none with WithWSSubprotocols) and what it accepts in
// the answer (the offered one or none).
func TestDialWebSocketSubprotocols(t *testing.T) {
	// The server selects what its select function says of the offer, and
	// refuses any offer with 400 when strict, as some servers do.
	server := func(strict bool, sel func(offer string) string) string {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			offer := r.Header.Get("Sec-WebSocket-Protocol")
			if strict && offer != "" {
				http.Error(w, "no subprotocol here", http.StatusBadRequest)
				return
			}
			if sp := sel(offer); sp != "" {
				w.Header().Set("Sec-WebSocket-Protocol", sp)
			}
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			if sp := sel(offer); sp != "" && !strings.Contains(offer, sp) {
				return // the client refuses this answer: hang up at once
			}
			_ = c.Write(r.Context(), websocket.MessageText, []byte(`{"offer":"`+offer+`"}`))
			_, _, _ = c.Read(r.Context())
		}))
		t.Cleanup(ts.Close)
		return "ws" + strings.TrimPrefix(ts.URL, "http") + "/mcp/ws"
	}
	none := func(string) string { return "" }
	echo := func(offer string) string { first, _, _ := strings.Cut(offer, ","); return strings.TrimSpace(first) }
	tests := []struct {
		name      string
		url       string
		opts      []Option
		wantOffer string // what the server saw
		wantSub   string
		wantErr   string
	}{
		{"default offer, server selects none", server(false, none), nil, "mcp", "", ""},
		{"default offer, server selects mcp", server(false, echo), nil, "mcp", "mcp", ""},
		{"no offer", server(true, none), []Option{WithWSSubprotocols()}, "", "", ""},
		{"default offer to a strict server", server(true, none), nil, "", "", "400 Bad Request (subprotocols offered: mcp)"},
		{"other offers", server(false, echo), []Option{WithWSSubprotocols("v2.mcp", "mcp")}, "v2.mcp,mcp", "v2.mcp", ""},
		{"server selects what was not offered", server(false, func(string) string { return "other" }), nil, "", "", "Sec-WebSocket-Protocol"},
		{"bad name", "ws://127.0.0.1:1/mcp", []Option{WithWSSubprotocols("a b")}, "", "", `"a b" is not a token`},
		{"empty name", "ws://127.0.0.1:1/mcp", []Option{WithWSSubprotocols("")}, "", "", `"" is not a token`},
		{"not for HTTP", "", nil, "", "", "does not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tt.url == "" {
				_, err := DialHTTP(ctx, "http://127.0.0.1:1/mcp", WithWSSubprotocols())
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DialHTTP with WithWSSubprotocols: %v", err)
				}
				return
			}
			c, err := DialWebSocket(ctx, tt.url, tt.opts...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Subprotocol() != tt.wantSub {
				t.Errorf("subprotocol %q, want %q", c.Subprotocol(), tt.wantSub)
			}
			in, err := c.Recv(ctx)
			if err != nil || string(in.Frame) != `{"offer":"`+tt.wantOffer+`"}` {
				t.Errorf("server saw %s (%v), want offer %q", in.Frame, err, tt.wantOffer)
			}
		})
	}
}

// TestWSConnChatNoSubprotocol streams two chat calls at once from a
// client offering no subprotocol at /mcp/ws: every chunk arrives as a
// frame of its own, both answers complete.
func TestWSConnChatNoSubprotocol(t *testing.T) {
	chat := refserver.Chat{Chunks: 4, Delay: 10 * time.Millisecond}
	url := strings.TrimSuffix(refservertest.WS{Chat: chat}.Start(t), refserver.Path) + refserver.WSPath
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := DialWebSocket(ctx, url, WithWSSubprotocols())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, f := range []string{wsInitFrame,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat","arguments":{"query":"a"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chat","arguments":{"query":"b"}}}`} {
		if _, err := c.Send(ctx, []byte(f), SendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ends := map[string]int{}
	parts := 0
	for len(ends) < 2 {
		in, err := c.Recv(ctx)
		if err != nil {
			t.Fatalf("after %d parts: %v", parts, err)
		}
		var m struct {
			ID     json.RawMessage
			Result struct{ Type string }
		}
		if err := json.Unmarshal(in.Frame, &m); err != nil {
			t.Fatalf("frame %s: %v", in.Frame, err)
		}
		if strings.HasPrefix(m.Result.Type, "content_") {
			parts++
		}
		if m.Result.Type == "content_end" {
			ends[string(m.ID)]++
		}
	}
	if parts != 2*(chat.Chunks+2) || ends["2"] != 1 || ends["3"] != 1 {
		t.Errorf("%d parts, ends %v; want %d parts, one end each", parts, ends, 2*(chat.Chunks+2))
	}
}
