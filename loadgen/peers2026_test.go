package loadgen

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/jsonrpc"
)

// headerTap is a proxy in front of a real peer that notes, for each POST,
// the JSON-RPC method of its body and the Mcp-* headers it carried. It
// passes each answer on once the peer ended it (every answer of a
// stateless 2026-07-28 peer ends with the response); a client that closes
// its request first cancels the request to the peer.
type headerTap struct {
	mu   sync.Mutex
	seen []tapped
}

type tapped struct {
	method, name          string // from the body
	hMethod, hName, hSess string // headers
	status                int    // 0: no answer (the client went away)
}

func newHeaderTap(t *testing.T, upstream string) (*headerTap, string) {
	t.Helper()
	tap := &headerTap{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream, bytes.NewReader(body))
		if err != nil {
			t.Errorf("tap: %v", err)
			return
		}
		req.Header = r.Header.Clone()
		status := 0
		defer func() {
			if r.Method != http.MethodPost {
				return
			}
			info := jsonrpc.Classify(body)
			tap.mu.Lock()
			tap.seen = append(tap.seen, tapped{method: info.Method, name: paramsName(body), hMethod: r.Header.Get("Mcp-Method"),
				hName: r.Header.Get("Mcp-Name"), hSess: r.Header.Get("Mcp-Session-Id"), status: status})
			tap.mu.Unlock()
		}()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
		status = resp.StatusCode
	}))
	t.Cleanup(ts.Close)
	return tap, ts.URL + "/mcp"
}

// TestRealPeers2026 runs 2026-07-28 stateless load against real peers
// that speak it: the Go SDK everything-server (go-sdk v1.8.0, -stateless)
// and mcp-go (v1.2.1, -session stateless); the Go SDK rejects a request
// whose Mcp-Method or Mcp-Name header is missing or differs from the body.
// A proxy in front of the peer checks that every POST carried them, that
// server/discover was each session's setup (no initialize, no session
// id), and the report counts every call answered. Then progress on the
// call's stream, and cancellation by closing that stream: never answered.
func TestRealPeers2026(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real peers")
	}
	goSDK := func(t *testing.T, ctx context.Context) string { return peertest.GoEverythingHTTP(t, ctx, true).URL }
	mcpGo := func(t *testing.T, ctx context.Context) string {
		return peertest.MCPGoHTTP(t, ctx, "-session", "stateless").URL
	}
	const v = "2026-07-28"
	cases := []struct {
		name     string
		start    func(t *testing.T, ctx context.Context) string
		calls    []string
		opts     []Option
		requests int64
		progress int64 // notifications per call
		cancel   bool
	}{
		{name: "go everything-server", start: goSDK, requests: 20, calls: []string{`tools/call test_simple_text`, `tools/list`}},
		{name: "mcp-go", start: mcpGo, requests: 20, calls: []string{`tools/call echo {"message":"hi"}`, `tools/list`}},
		{name: "go everything-server progress", start: goSDK, requests: 4, progress: 3, opts: []Option{WithProgress()},
			calls: []string{`tools/call test_tool_with_progress`}},
		{name: "mcp-go cancel", start: mcpGo, requests: 4, cancel: true, opts: []Option{WithCancel(50*time.Millisecond, 1)},
			calls: []string{`tools/call slow {"ms":5000,"steps":5}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			tap, u := newHeaderTap(t, c.start(t, ctx))
			opts := append([]Option{WithSessions(2), WithRequests(c.requests), WithProtocolVersion(v), WithTimeout(20 * time.Second)}, c.opts...)
			rep, err := Run(ctx, Target{URL: u}, mustCalls(t, c.calls...), opts...)
			if err != nil {
				t.Fatal(err)
			}
			answered := c.requests
			if c.cancel {
				answered = 0
			}
			if rep.Protocol != v || rep.Requests != c.requests || rep.Answered != answered || rep.ErrorTotal != 0 || rep.Setups != 2 {
				t.Fatalf("protocol %s: sent %d answered %d setups %d errors %+v; want %d, %d answered, 2 setups, none",
					rep.Protocol, rep.Requests, rep.Answered, rep.Setups, rep.Errors, c.requests, answered)
			}
			if s := rep.Find(SetupSeries); s == nil || s.Count != 2 {
				t.Errorf("setup series %+v, want the 2 server/discover", s)
			}
			if c.progress > 0 {
				p := rep.Progress
				if p == nil || p.CallsWithProgress != c.requests || p.Notifications != c.progress*c.requests || p.AfterResponse+p.NotIncreasing+p.UnknownToken != 0 {
					t.Errorf("progress %+v, want %d calls with %d each", p, c.requests, c.progress)
				}
			}
			if c.cancel {
				cr, setup := rep.Cancel, rep.Find(SetupSeries)
				if cr == nil || cr.Sent != c.requests || cr.AnsweredAnyway != 0 {
					t.Errorf("cancel %+v: want %d cancelled by closing the stream, none answered", cr, c.requests)
				}
				// two calls per session, each cancelled after 50 ms and watched
				// for the quiet window, never the 5 s call (2 s to spare)
				if setup != nil && rep.Duration-setup.Max > 2*(50*time.Millisecond+CancelQuietWindow)+2*time.Second {
					t.Errorf("measured %v: the cancellation waited for the call", rep.Duration)
				}
			}
			tap.check(t, 2+int(c.requests), c.cancel)
		})
	}
}

// check waits (a little: the proxy notes a POST once its answer ended)
// for want POSTs and checks their headers.
func (tap *headerTap) check(t *testing.T, want int, cancelled bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		tap.mu.Lock()
		n := len(tap.seen)
		tap.mu.Unlock()
		if n >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	discover := 0
	for _, s := range tap.seen {
		switch {
		case s.method == "initialize" || s.hSess != "":
			t.Errorf("POST %s with session id %q: not stateless", s.method, s.hSess)
		case s.hMethod != s.method:
			t.Errorf("POST %s: Mcp-Method %q", s.method, s.hMethod)
		case s.method == "tools/call" && s.hName != s.name:
			t.Errorf("POST tools/call %s: Mcp-Name %q", s.name, s.hName)
		case s.status != http.StatusOK && !(cancelled && s.method == "tools/call" && s.status == 0):
			t.Errorf("POST %s: status %d", s.method, s.status)
		}
		if s.method == "server/discover" {
			discover++
		}
	}
	if len(tap.seen) != want || discover != 2 {
		t.Errorf("%d POSTs, %d server/discover; want %d and 2", len(tap.seen), discover, want)
	}
}
