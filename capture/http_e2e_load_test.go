package capture

// End-to-end tests of streaming, cancellation, upstream failure and many
// sessions at once, against server-everything through the HTTP proxy.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sseCall posts a tools/call and returns when each event with data
// arrived, and the events; it stops after the response or when stop says so.
func sseCall(t testing.TB, ctx context.Context, c *http.Client, u, sid, body string, stop func(n int) bool) ([]time.Duration, []string, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", rawVersion)
	req.Header.Set("Mcp-Session-Id", sid)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var at []time.Duration
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || strings.TrimSpace(d) == "" {
			continue
		}
		at, data = append(at, time.Since(start)), append(data, d)
		if strings.Contains(d, `"result"`) || stop(len(data)) {
			return at, data, nil
		}
	}
	return at, data, sc.Err()
}

// TestHTTPProgressE2E: server-everything's long-running operation sends
// progress through the proxy as it goes (the first notification arrives
// long before the response); a cancelled call is closed upstream at once;
// an upstream killed mid-stream ends the client's stream and the proxy
// keeps answering.
func TestHTTPProgressE2E(t *testing.T) {
	ctx := e2eContext(t, 2*time.Minute)
	srv := peertest.EverythingHTTP(t, ctx)
	rig := startProxy(t, srv.URL)
	c := freshClient(t)
	u := viaProxy(rig, srv.URL)
	sid := rawSession(t, c, u)
	call := func(id, duration, steps int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":%d,"steps":%d},"_meta":{"progressToken":"p%d"}}}`, id, duration, steps, id)
	}

	t.Run("progress before the response", func(t *testing.T) {
		at, data, err := sseCall(t, ctx, c, u, sid, call(1, 2, 4), func(int) bool { return false })
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != 5 || !strings.Contains(data[0], "notifications/progress") || !strings.Contains(data[4], `"result"`) {
			t.Fatalf("events %q", data)
		}
		if gap := at[4] - at[0]; gap < time.Second {
			t.Errorf("first progress at %v, response at %v: progress was held back", at[0], at[4])
		}
	})

	t.Run("cancel", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		_, data, _ := sseCall(t, cctx, c, u, sid, call(2, 30, 150), func(n int) bool { return n == 1 })
		cancelled := time.Now()
		cancel()
		if len(data) != 1 {
			t.Fatalf("events before the cancel: %q", data)
		}
		end := waitEndOf(t, rig.tape, `"id":2,`)
		if d := time.Since(cancelled); d > 5*time.Second {
			t.Errorf("the exchange ended %v after the client closed its stream", d)
		}
		if end.ClosedBy != ClosedByClient || time.Duration(end.DurationNs) > 10*time.Second {
			t.Errorf("cancelled exchange recorded as %+v", end)
		}
	})

	t.Run("upstream killed", func(t *testing.T) {
		errc := make(chan error, 1)
		var data []string
		go func() {
			var err error
			_, data, err = sseCall(t, ctx, c, u, sid, call(3, 30, 150), func(n int) bool {
				if n == 1 {
					srv.Stop()
				}
				return false
			})
			errc <- err
		}()
		select {
		case <-errc:
		case <-time.After(20 * time.Second):
			t.Fatal("the client's stream did not end when the upstream died")
		}
		if len(data) == 0 || strings.Contains(strings.Join(data, ""), `"result"`) {
			t.Errorf("events %q", data)
		}
		waitEndOf(t, rig.tape, `"id":3,`)
		recs := rig.tape.records()
		var found bool
		for _, r := range events(recs, tape.EventError) {
			found = found || strings.Contains(string(r.Data), "broke off")
		}
		if !found {
			t.Error("no error event for the broken stream")
		}
		resp := peertest.PostJSON(t, c, u, sid, rawVersion, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
		if body := peertest.ReadAnswer(t, resp); resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "mcptape: upstream") {
			t.Errorf("after the upstream died: %d %q", resp.StatusCode, body)
		}
	})
	rig.stop()
	checkNoProxyGoroutines(t)
}

// TestHTTPManySessionsE2E: 200 Go SDK clients at once against
// server-everything, each with its own session and GET stream; the tape
// tells them apart.
func TestHTTPManySessionsE2E(t *testing.T) {
	const n = 200
	ctx := e2eContext(t, 3*time.Minute)
	srv := peertest.EverythingHTTP(t, ctx)
	rig := startProxy(t, srv.URL)
	u := viaProxy(rig, srv.URL)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 50) // connection setup in waves; all 200 sessions stay open together
	ready := make(chan struct{})
	var opened sync.WaitGroup
	opened.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			c := mcp.NewClient(&mcp.Implementation{Name: "many", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: u, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			<-sem
			opened.Done()
			if err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
				return
			}
			defer cs.Close()
			<-ready
			msg := fmt.Sprintf("client-%03d", i)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
			if err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
				return
			}
			if b, _ := json.Marshal(res.Content); !strings.Contains(string(b), msg) {
				errs <- fmt.Errorf("client %d got %s", i, b)
			}
		}()
	}
	opened.Wait()
	close(ready)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rig.stop()
	recs := rig.tape.records()
	type calls struct{ sent, got []string }
	bySession := map[string]*calls{}
	for _, m := range msgs(recs, "") {
		if !strings.Contains(string(m.Frame), "client-") {
			continue
		}
		c := bySession[m.Session]
		if c == nil {
			c = &calls{}
			bySession[m.Session] = c
		}
		i := strings.Index(string(m.Frame), "client-")
		tag := string(m.Frame[i : i+len("client-000")])
		if m.Dir == tape.ClientToServer {
			c.sent = append(c.sent, tag)
		} else {
			c.got = append(c.got, tag)
		}
	}
	if len(bySession) != n {
		t.Fatalf("%d sessions hold echo calls, want %d", len(bySession), n)
	}
	seen := map[string]bool{}
	for sid, c := range bySession {
		if len(c.sent) != 1 || len(c.got) != 1 || c.sent[0] != c.got[0] || seen[c.sent[0]] {
			t.Fatalf("session %s: sent %v, got %v", sid, c.sent, c.got)
		}
		seen[c.sent[0]] = true
	}
	var gets int
	for _, e := range httpEvents(t, recs, "response") {
		if e.Method == "GET" && e.Status == 200 {
			gets++
		}
	}
	if gets < n {
		t.Errorf("%d GET streams recorded, want %d", gets, n)
	}
	// Client requests only: server-everything asks each client for its
	// roots on the GET stream, and a client closing right after its call
	// may never answer.
	checkTapeComplete(t, recs, false)
}

// waitEndOf waits for the "end" event of the exchange whose client message
// contains marker, and returns it.
func waitEndOf(t testing.TB, m *memTape, marker string) HTTPEvent {
	t.Helper()
	var end HTTPEvent
	waitFor(t, func() bool {
		recs := m.records()
		for _, r := range msgs(recs, tape.ClientToServer) {
			if strings.Contains(string(r.Frame), marker) {
				var ok bool
				end, ok = endEventOf(t, recs, r.Exchange)
				return ok
			}
		}
		return false
	})
	return end
}
