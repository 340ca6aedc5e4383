package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/jsonrpc"
)

// fakeLegacy is an in-process server of the 2024-11-05 HTTP+SSE transport,
// shaped like the TypeScript SDK's: GET /sse sends an endpoint event with a
// relative URL, POSTs to it get 202 "Accepted", and every answer comes back
// as a message event on the GET stream.
type fakeLegacy struct {
	endpoint string        // data of the endpoint event ("" sends none)
	end      chan struct{} // closed: the GET stream ends
	mu       sync.Mutex
	out      chan string // frames to send on the stream
	posts    []string    // URLs POSTed to
	srv      *httptest.Server
}

func newFakeLegacy(t *testing.T, endpoint string) *fakeLegacy {
	f := &fakeLegacy{endpoint: endpoint, end: make(chan struct{}), out: make(chan string, 64)}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeLegacy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if f.endpoint != "" {
			fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", f.endpoint)
		}
		w.(http.Flusher).Flush()
		send := func(m string) {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
			w.(http.Flusher).Flush()
		}
		for {
			select {
			case m := <-f.out:
				send(m)
			case <-f.end:
				// The answers queued before the end go first: a select
				// with both ready picks at random, and a fixed sleep in
				// the test before the end was not always enough.
				for {
					select {
					case m := <-f.out:
						send(m)
					default:
						return
					}
				}
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/message":
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.posts = append(f.posts, r.URL.String())
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "Accepted")
		if info := jsonrpc.Classify(body); info.Kind == jsonrpc.KindRequest {
			f.out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"method":%q}}`, info.ID.Raw, info.Method)
		}
	default:
		http.NotFound(w, r)
	}
}

func TestLegacySSERoundTrip(t *testing.T) {
	f := newFakeLegacy(t, "/message?sessionId=abc")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := DialLegacySSE(ctx, f.srv.URL+"/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if want := f.srv.URL + "/message?sessionId=abc"; c.Endpoint() != want {
		t.Errorf("endpoint %q, want %q", c.Endpoint(), want)
	}
	ex := mustSend(t, c, []byte(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`))
	if ex.Status != http.StatusAccepted || string(ex.Body) != "Accepted" {
		t.Errorf("POST exchange: %d %q", ex.Status, ex.Body)
	}
	in := recvAnswer(t, c, "7")
	sse := c.GetStream()
	if in.Stream != StreamSSE || sse == nil || in.Exchange != sse.ID {
		t.Errorf("frame metadata %+v, stream %+v", in, sse)
	}
	mustSend(t, c, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	mustSend(t, c, []byte(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`))
	recvAnswer(t, c, "8")
	f.mu.Lock()
	posts := f.posts
	f.mu.Unlock()
	if len(posts) != 3 || posts[0] != "/message?sessionId=abc" {
		t.Errorf("posts %v", posts)
	}
	// The server ends the stream: Recv reports it after the queued frames.
	mustSend(t, c, []byte(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	close(f.end)
	recvAnswer(t, c, "9")
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if _, err := c.Recv(rctx); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Recv after the stream ended = %v, want ErrServerClosed", err)
	}
}

// TestDialLegacySSEErrors: each way a legacy SSE dial fails gives its one-line
// error. Only the timeout case waits for its deadline; the others fail by
// themselves, and as short a deadline for them (300 ms) could run out first
// on a loaded machine ("deadline exceeded", want "404 Not Found").
func TestDialLegacySSEErrors(t *testing.T) {
	const ends = 10 * time.Second // a deadline the dial should not reach
	tests := []struct {
		name, endpoint string
		path           string
		end            bool
		deadline       time.Duration
		want           string
	}{
		{"cross origin", "http://evil.example/message", "/sse", false, ends, "not on the origin"},
		{"no endpoint, stream ends", "", "/sse", true, ends, "no endpoint event"},
		{"no endpoint, timeout", "", "/sse", false, 300 * time.Millisecond, "deadline exceeded"},
		{"404", "/message", "/nope", false, ends, "404 Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeLegacy(t, tt.endpoint)
			if tt.end {
				close(f.end)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			defer cancel()
			c, err := DialLegacySSE(ctx, f.srv.URL+tt.path)
			if err == nil {
				c.Close()
				t.Fatal("dial succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.want)
			}
		})
	}
	if _, err := DialLegacySSE(context.Background(), "http://127.0.0.1:1/sse", WithGetStream()); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Errorf("WithGetStream on legacy: %v", err)
	}
}

func TestResolveEndpoint(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:3102/sse")
	tests := []struct {
		data, want string
	}{
		{"/message?sessionId=1", "http://127.0.0.1:3102/message?sessionId=1"},
		{"messages/?session_id=2", "http://127.0.0.1:3102/messages/?session_id=2"},
		{"  http://127.0.0.1:3102/m  ", "http://127.0.0.1:3102/m"},
		{"https://127.0.0.1:3102/m", ""},
		{"http://127.0.0.1:3103/m", ""},
		{"//other/m", ""},
		{"", ""},
		{"http://[::1", ""},
	}
	for _, tt := range tests {
		got, err := resolveEndpoint(base, []byte(tt.data))
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("resolveEndpoint(%q) = %v, want an error", tt.data, got)
		case tt.want != "" && (err != nil || got.String() != tt.want):
			t.Errorf("resolveEndpoint(%q) = %v, %v; want %s", tt.data, got, err, tt.want)
		}
	}
}

func FuzzResolveEndpoint(f *testing.F) {
	for _, s := range []string{"/message?sessionId=1", "http://127.0.0.1:3102/x", "//h/x", "../../a", "%zz", "\x00", "http://[::1"} {
		f.Add(s)
	}
	base, _ := url.Parse("http://127.0.0.1:3102/a/sse")
	f.Fuzz(func(t *testing.T, data string) {
		u, err := resolveEndpoint(base, []byte(data))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		if u.Scheme != base.Scheme || !strings.EqualFold(u.Host, base.Host) {
			t.Errorf("resolveEndpoint(%q) = %v leaves the origin", data, u)
		}
	})
}

// TestDialLegacySSEHeadersNeverCome: a server that takes the GET of the
// SSE stream and never answers it fails the dial when its context ends
// (a load or replay --sse against it ignored --timeout and Ctrl-C: the
// stream's exchange, on the connection's own context, was never ended).
func TestDialLegacySSEHeadersNeverCome(t *testing.T) {
	addr := peertest.Mute(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	wantDialDeadline(t, func() (Conn, error) { return DialLegacySSE(ctx, "http://"+addr+"/sse") })
}

// TestWithDialTimeout: WithDialTimeout alone bounds the wait of a
// WebSocket handshake and of a legacy SSE stream's headers on a server
// that takes the request and never answers it (the context given to the
// dial has no deadline), with a one-line error.
func TestWithDialTimeout(t *testing.T) {
	addr := peertest.Mute(t)
	ctx := context.Background()
	tests := []struct {
		name string
		dial func() (Conn, error)
	}{
		{"websocket", func() (Conn, error) {
			return DialWebSocket(ctx, "ws://"+addr+"/ws", WithDialTimeout(300*time.Millisecond))
		}},
		{"legacy sse", func() (Conn, error) {
			return DialLegacySSE(ctx, "http://"+addr+"/sse", WithDialTimeout(300*time.Millisecond))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantDialDeadline(t, tt.dial) })
	}
}

// wantDialDeadline runs dial and fails t unless it ends within 10 s with
// a one-line error saying a deadline was exceeded.
func wantDialDeadline(t *testing.T, dial func() (Conn, error)) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		c, err := dial()
		if err == nil {
			c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "deadline exceeded") || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want one line saying the deadline was exceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the dial did not end by its deadline")
	}
}
