package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDialHTTPErrors(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		url  string
		opts []Option
		want string
	}{
		{"relative URL", ctx, "/mcp", nil, "not an absolute http"},
		{"ftp", ctx, "ftp://x/mcp", nil, "not an absolute http"},
		{"bad URL", ctx, "http://[::1", nil, "missing ']'"},
		{"cancelled", cancelled, "http://127.0.0.1:1/mcp", nil, "context canceled"},
		{"stdio option", ctx, "http://127.0.0.1:1/mcp", []Option{WithDir("/")}, "WithDir does not apply"},
		{"bad version", ctx, "http://127.0.0.1:1/mcp", []Option{WithProtocolVersion("latest")}, "YYYY-MM-DD"},
		{"bad header", ctx, "http://127.0.0.1:1/mcp", []Option{WithHeader(http.Header{"Bad Name": {"x"}})}, "not a valid HTTP field name"},
		{"nil client", ctx, "http://127.0.0.1:1/mcp", []Option{WithHTTPClient(nil)}, "nil"},
		{"bad max frame", ctx, "http://127.0.0.1:1/mcp", []Option{WithMaxFrame(0)}, "not positive"},
		{"dial timeout", ctx, "http://127.0.0.1:1/mcp", []Option{WithDialTimeout(time.Second)}, "WithDialTimeout does not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := DialHTTP(tt.ctx, tt.url, tt.opts...)
			if err == nil {
				c.Close()
				t.Fatal("DialHTTP succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := DialHTTP(context.Background(), url+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ex, err := c.Send(context.Background(), echoFrame(1, "x"), SendOptions{})
	if err == nil || ex != nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Send = %v, %v", ex, err)
	}
}

func TestNewHTTPClient(t *testing.T) {
	if _, err := NewHTTPClient(-1); err == nil {
		t.Error("negative connections accepted")
	}
	for _, n := range []int{0, 7} {
		c, err := NewHTTPClient(n)
		if err != nil {
			t.Fatal(err)
		}
		lt, ok := c.Transport.(*leanTransport)
		if !ok {
			t.Fatalf("NewHTTPClient(%d): transport %T", n, c.Transport)
		}
		tr := lt.fallback
		want := n
		if n == 0 {
			want = DefaultMaxConns
		}
		if tr.MaxIdleConnsPerHost != want || !tr.DisableCompression || c.Timeout != 0 {
			t.Errorf("NewHTTPClient(%d): idle %d, compression off %v, timeout %v", n, tr.MaxIdleConnsPerHost, tr.DisableCompression, c.Timeout)
		}
	}
}

func TestNewHTTPClientOptions(t *testing.T) {
	for _, opts := range [][]ClientOption{{nil}, {WithMaxConnsPerHost(-1)}} {
		if _, err := NewHTTPClient(0, opts...); err == nil {
			t.Errorf("options %v accepted", opts)
		}
	}
	c, err := NewHTTPClient(0, WithMaxConnsPerHost(9))
	if err != nil {
		t.Fatal(err)
	}
	if lt := c.Transport.(*leanTransport); lt.maxConns != 9 || lt.fallback.MaxConnsPerHost != 9 {
		t.Errorf("bound %d (lean), %d (net/http), want 9", lt.maxConns, lt.fallback.MaxConnsPerHost)
	}
	c, err = NewHTTPClient(0, WithNetHTTPOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Transport.(*http.Transport); !ok {
		t.Errorf("WithNetHTTPOnly: transport %T", c.Transport)
	}
}

func TestSessionExpiredHeuristic(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   bool
	}{
		{404, "", true},
		{400, `{"error":{"message":"Bad Request: No valid session ID provided"}}`, true},
		{400, "Session not found", true},
		{400, "invalid session id", true},
		{400, "batches are not supported", false},
		{400, "Bad Request: Mcp-Session-Id header is required", false},
		{403, "session not found", false},
		{500, "", false},
	}
	for _, tt := range tests {
		if got := sessionExpired(tt.status, []byte(tt.body)); got != tt.want {
			t.Errorf("sessionExpired(%d, %q) = %v", tt.status, tt.body, got)
		}
	}
}

func TestMediaType(t *testing.T) {
	tests := map[string]string{
		"application/json":                   "application/json",
		"Application/JSON; charset=utf-8":    "application/json",
		" text/event-stream ;charset=utf-8 ": "text/event-stream",
		"":                                   "",
	}
	for in, want := range tests {
		if got := mediaType(in); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", in, got, want)
		}
	}
}
