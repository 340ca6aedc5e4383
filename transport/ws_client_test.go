package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mcptape/mcptape/internal/refserver"
)

// wsServer serves the reference server over WebSocket and returns its URL.
func wsServer(t *testing.T) string {
	t.Helper()
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(refserver.WSHandler(s, nil))
	t.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http") + refserver.Path
}

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
		ex, err := c.Send(ctx, []byte(tt.frame), SendOptions{})
		if err != nil {
			t.Fatalf("%s: send: %v", tt.name, err)
		}
		if ex.ID == 0 || ex.Responded.Before(ex.Sent) {
			t.Errorf("%s: exchange %+v", tt.name, ex)
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
