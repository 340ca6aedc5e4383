package refserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// post sends one JSON-RPC frame the way a Streamable HTTP client does;
// the answer's body is closed at the test's end.
func post(t *testing.T, url, session, version, frame string) *http.Response {
	t.Helper()
	resp := peertest.PostJSON(t, nil, url, session, version, frame)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestHTTPModes checks what each HTTP configuration answers to an
// initialize POST, a GET and a request to another path.
func TestHTTPModes(t *testing.T) {
	init := fmtInit("2025-11-25", "")
	tests := []struct {
		name        string
		cfg         HTTPConfig
		contentType string
		session     bool
		getStatus   int
	}{
		{"stateful", HTTPConfig{}, "text/event-stream", true, http.StatusBadRequest}, // GET without a session
		{"json", HTTPConfig{JSONResponse: true}, "application/json", true, http.StatusBadRequest},
		{"stateless", HTTPConfig{Stateless: true}, "text/event-stream", false, http.StatusMethodNotAllowed},
		{"stateless json", HTTPConfig{Stateless: true, JSONResponse: true}, "application/json", false, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(HTTPHandler(newServer(t), tt.cfg))
			defer ts.Close()
			resp := post(t, ts.URL+Path, "", "", init)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("initialize: status %d", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.contentType) {
				t.Errorf("Content-Type %q, want %s", ct, tt.contentType)
			}
			if got := resp.Header.Get("Mcp-Session-Id") != ""; got != tt.session {
				t.Errorf("Mcp-Session-Id set: %v, want %v", got, tt.session)
			}
			req, _ := http.NewRequest(http.MethodGet, ts.URL+Path, nil)
			req.Header.Set("Accept", "text/event-stream")
			get, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			get.Body.Close()
			if get.StatusCode != tt.getStatus {
				t.Errorf("GET: status %d, want %d", get.StatusCode, tt.getStatus)
			}
			other := post(t, ts.URL+"/other", "", "", init)
			if other.StatusCode != http.StatusNotFound {
				t.Errorf("POST /other: status %d, want 404", other.StatusCode)
			}
		})
	}
}

// fmtInit is an initialize frame for version with the given client
// capabilities (JSON members).
func fmtInit(version, caps string) string { return script(version, caps)[0] }

// TestHTTPWireOrder checks on the wire that a call's progress
// notifications come on its SSE stream, in order, before its result.
func TestHTTPWireOrder(t *testing.T) {
	ts := httptest.NewServer(HTTPHandler(newServer(t), HTTPConfig{}))
	defer ts.Close()
	const v = "2025-11-25"
	resp := post(t, ts.URL+Path, "", "", fmtInit(v, ""))
	session := resp.Header.Get("Mcp-Session-Id")
	if n := post(t, ts.URL+Path, session, v, initializedFrame); n.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: status %d", n.StatusCode)
	}
	resp = post(t, ts.URL+Path, session, v,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60,"steps":3},"_meta":{"progressToken":"p"}}}`)
	var kinds []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "" {
			continue
		}
		var f wireFrame
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			t.Fatalf("bad SSE data %q: %v", data, err)
		}
		switch {
		case f.Method == "notifications/progress":
			kinds = append(kinds, "progress")
		case string(f.ID) == "2" && f.Result != nil:
			kinds = append(kinds, "result")
		default:
			kinds = append(kinds, "other")
		}
	}
	if got, want := strings.Join(kinds, ","), "progress,progress,progress,result"; got != want {
		t.Errorf("SSE stream carried %s, want %s", got, want)
	}
}

// TestServeHTTP checks that ServeHTTP serves until its context ends, then
// returns nil promptly despite an open GET stream and a running call.
func TestServeHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, ln, newServer(t), HTTPConfig{}) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := text(call(t, cs, "echo", map[string]any{"message": "up"})); got != "up" {
		t.Errorf("echo: %q", got)
	}
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60_000}})
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeHTTP after cancel: %v", err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("ServeHTTP took %v to stop", el)
		}
	case <-time.After(shutdownGrace + 2*time.Second):
		t.Fatal("ServeHTTP did not return after its context ended")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Errorf("listener still accepts after ServeHTTP returned")
	}
}

// TestServeHTTPStopsAfterSessions checks that ServeHTTP stops at once after
// clients closed their sessions, even when a client left a connection that
// never sent a request (which http.Server.Shutdown alone waits 5 s for).
// The leftover connection happens in some runs only: hence the repeats.
func TestServeHTTPStopsAfterSessions(t *testing.T) {
	for i := range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ServeHTTP(ctx, ln, newServer(t), HTTPConfig{}) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + Path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		call(t, cs, "echo", map[string]any{"message": "x"})
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatalf("run %d: ServeHTTP still running 2 s after its context ended", i)
		}
	}
}

// TestServeHTTPListenerError checks that a listener that fails is an error.
func TestServeHTTPListenerError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	err = ServeHTTP(context.Background(), ln, newServer(t), HTTPConfig{})
	if err == nil || !errors.Is(err, net.ErrClosed) {
		t.Errorf("ServeHTTP on a closed listener: %v, want net.ErrClosed", err)
	}
}
