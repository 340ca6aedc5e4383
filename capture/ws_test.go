package capture

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/tape"
)

// wsURL turns an httptest URL into a ws:// one with path.
func wsURL(base, path string) string { return "ws" + strings.TrimPrefix(base, "http") + path }

// newWSProxy serves a recording proxy in front of upstream (an httptest
// server) and returns its ws:// URL for path, and the tape.
func newWSProxy(t *testing.T, upstream *httptest.Server, path string) (string, *WSProxy, *memTape) {
	t.Helper()
	return newWSProxyTo(t, wsURL(upstream.URL, path))
}

// newWSProxyTo serves a recording proxy with opts in front of the upstream
// at url, a ws:// or wss:// URL, and returns its ws:// URL for the same
// path, and the tape.
func newWSProxyTo(t *testing.T, url string, opts ...HTTPOption) (string, *WSProxy, *memTape) {
	t.Helper()
	m := &memTape{}
	p, err := NewWSProxy(url, m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	t.Cleanup(func() { p.Close(); ts.Close() })
	return wsURL(ts.URL, p.Upstream().Path), p, m
}

// dialWS opens a connection to url with the library's client, and returns
// it with a context for the test's calls.
func dialWS(t *testing.T, url string) (context.Context, *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return ctx, c
}

// testContext returns a context for a test's calls that ends shortly
// before the test binary's -timeout (so that a hang fails the test with
// its step named rather than the binary with a dump), or in 10 minutes
// without one: a fixed deadline shorter than that failed tests that were
// only slow on a loaded machine.
func testContext(t *testing.T) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(10 * time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-min(time.Until(d)/10, 30*time.Second))
	}
	return context.WithDeadline(context.Background(), deadline)
}

// wsEvents returns the payloads of the "ws" events of kind in dir.
func wsEvents(recs []tape.Record, kind string, dir tape.Direction) []WSEvent {
	var out []WSEvent
	for _, r := range recs {
		if r.Type != tape.TypeEvent || r.Event != tape.EventWS || r.Dir != dir {
			continue
		}
		var e WSEvent
		if json.Unmarshal(r.Data, &e) == nil && e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// sessionClosed reports whether the tape holds session id's last record,
// the "http" event that ends its upgrade exchange.
func sessionClosed(m *memTape, id string) func() bool {
	return func() bool {
		for _, r := range m.records() {
			if r.Type == tape.TypeEvent && r.Event == tape.EventHTTP && r.Session == id && strings.Contains(string(r.Data), `"phase":"end"`) {
				return true
			}
		}
		return false
	}
}

func TestWSProxyRecordsMCP(t *testing.T) {
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(refserver.WSHandler(s, nil))
	defer up.Close()
	url, p, m := newWSProxy(t, up, refserver.Path)
	ctx, cancel := testContext(t)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"mcp"},
		HTTPHeader: http.Header{"Authorization": {"Bearer secret-token-1234"}}})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	if c.Subprotocol() != "mcp" {
		t.Errorf("subprotocol %q through the proxy", c.Subprotocol())
	}
	// A message larger than any buffer of the relay (wsBigBufSize) and
	// than the parser keeps (wsKeepBuffer), its length in the frame's
	// 64-bit form: 4 MiB. It was 16 MiB, for no bound of the proxy's,
	// and its echo through the reference server took ~30s of CPU under
	// -race, past this test's fixed 60s deadline on a loaded machine.
	const bigSize = 4 * wsKeepBuffer
	big := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("y", bigSize) + `"}}}`
	steps := []struct {
		frame   string
		answers int
		want    string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 1, `"id":1`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`, 2, `"result":{}`},
		{`hello`, 1, `-32700`},
		{big, 1, `"id":4`},
	}
	for _, st := range steps {
		if err := c.Write(ctx, websocket.MessageText, []byte(st.frame)); err != nil {
			t.Fatal(err)
		}
		for range st.answers {
			_, data, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("after %.40q: %v", st.frame, err)
			}
			if !strings.Contains(string(data), st.want) {
				t.Errorf("after %.40q: got %.100s", st.frame, data)
			}
		}
	}
	// The reader's context must outlive Close: the library drops the
	// connection without a close frame when a read's context ends, which
	// raced with the close frame below (seen once in CI).
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	go func() { _, _, _ = c.Read(pctx) }() // reads the pong, then the close
	if err := c.Ping(pctx); err != nil {
		t.Fatalf("ping through the proxy: %v", err)
	}
	if err := c.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		t.Logf("close: %v", err)
	}
	waitFor(t, sessionClosed(m, "ws-1"))
	recs := m.records()

	var c2s, s2c []string
	var sawInvalid, saw101 bool
	for _, r := range recs {
		if r.Session != "ws-1" && r.Type != tape.TypeHeader {
			t.Errorf("record outside session ws-1: %+v", r)
		}
		switch {
		case r.Type == tape.TypeMessage && r.Dir == tape.ClientToServer:
			c2s = append(c2s, string(r.Frame))
			if r.Stream != tape.StreamWS || r.Exchange != 1 {
				t.Errorf("message stream %q exchange %d", r.Stream, r.Exchange)
			}
		case r.Type == tape.TypeMessage:
			s2c = append(s2c, string(r.Frame))
		case r.Event == tape.EventError && r.Dir == tape.ClientToServer:
			sawInvalid = strings.Contains(string(r.Data), "invalid JSON-RPC frame")
		case r.Event == tape.EventHTTP && strings.Contains(string(r.Data), `"phase":"response"`):
			saw101 = strings.Contains(string(r.Data), `"status":101`)
			if strings.Contains(string(r.Data), "secret-token") || !strings.Contains(string(r.Data), `"Bearer <redacted:`) {
				t.Errorf("upgrade headers not redacted: %s", r.Data)
			}
		}
	}
	want := []string{steps[0].frame, steps[1].frame, steps[2].frame, steps[3].frame, big}
	if len(c2s) != len(want) {
		t.Fatalf("%d client messages recorded, want %d (the batch as one)", len(c2s), len(want))
	}
	for i := range want {
		if c2s[i] != want[i] {
			t.Errorf("client message %d recorded as %.80q, want %.80q", i, c2s[i], want[i])
		}
	}
	if len(s2c) != 5 || len(s2c[4]) < bigSize {
		t.Errorf("%d server messages recorded", len(s2c))
	}
	if !sawInvalid || !saw101 {
		t.Errorf("invalid frame flagged %v, upgrade recorded %v", sawInvalid, saw101)
	}
	if pings := wsEvents(recs, "ping", tape.ClientToServer); len(pings) != 1 || pings[0].Bytes == 0 {
		t.Errorf("ping events %+v", pings)
	}
	if closes := wsEvents(recs, "close", tape.ClientToServer); len(closes) != 1 || closes[0].Code != 1000 || closes[0].Reason != "bye" {
		t.Errorf("close events %+v", closes)
	}
	if st := p.Stats(); st.Sessions != 1 || st.ClientMessages != 5 || st.Invalid != 1 {
		t.Errorf("stats %+v", st)
	}
}

// scriptedWSUpstream is a WebSocket upstream whose behaviour the test scripts:
// it echoes every frame, and drops the connection on the text "drop".
func scriptedWSUpstream(t *testing.T, seen chan<- *http.Request) *httptest.Server {
	ts := httptest.NewServer(scriptedWSHandler(seen))
	t.Cleanup(ts.Close)
	return ts
}

// scriptedWSHandler is the handler of scriptedWSUpstream.
func scriptedWSHandler(seen chan<- *http.Request) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen <- r
		}
		if r.URL.Path == "/refuse" {
			w.Header().Set("X-Why", "no entry")
			http.Error(w, "forbidden here", http.StatusForbidden)
			return
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}, OriginPatterns: []string{"app.example"},
			CompressionMode: websocket.CompressionContextTakeover})
		if err != nil {
			return
		}
		for {
			typ, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if string(data) == "drop" {
				_ = c.CloseNow()
				return
			}
			if err := c.Write(r.Context(), typ, data); err != nil {
				return
			}
		}
	}
}

func TestWSProxyBadInput(t *testing.T) {
	tests := []struct {
		name  string
		run   func(ctx context.Context, c *websocket.Conn) error // what the client does
		check func(t *testing.T, recs []tape.Record)
	}{
		{"binary frame", func(ctx context.Context, c *websocket.Conn) error {
			if err := c.Write(ctx, websocket.MessageBinary, []byte{0, 1, 2}); err != nil {
				return err
			}
			typ, data, err := c.Read(ctx)
			if err != nil || typ != websocket.MessageBinary || string(data) != "\x00\x01\x02" {
				return fmt.Errorf("echo %v %q %v", typ, data, err)
			}
			return c.Close(websocket.StatusNormalClosure, "")
		}, func(t *testing.T, recs []tape.Record) {
			for _, dir := range []tape.Direction{tape.ClientToServer, tape.ServerToClient} {
				ev := wsEvents(recs, "binary", dir)
				if len(ev) != 1 || ev[0].B64 != base64.StdEncoding.EncodeToString([]byte{0, 1, 2}) {
					t.Errorf("%s binary events %+v", dir, ev)
				}
			}
		}},
		{"upstream drops", func(ctx context.Context, c *websocket.Conn) error {
			if err := c.Write(ctx, websocket.MessageText, []byte("drop")); err != nil {
				return err
			}
			_, _, err := c.Read(ctx)
			if websocket.CloseStatus(err) != websocket.StatusBadGateway {
				return fmt.Errorf("client saw %v, want status 1014", err)
			}
			return nil
		}, func(t *testing.T, recs []tape.Record) {
			if ev := wsEvents(recs, "close", tape.ServerToClient); len(ev) != 1 || !ev[0].Abrupt {
				t.Errorf("server close events %+v", ev)
			}
			checkClose(t, recs, ClosedByServer, "connection-lost")
		}},
		{"client drops", func(ctx context.Context, c *websocket.Conn) error {
			if err := c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"x"}`)); err != nil {
				return err
			}
			if _, _, err := c.Read(ctx); err != nil {
				return err
			}
			return c.CloseNow()
		}, func(t *testing.T, recs []tape.Record) {
			if ev := wsEvents(recs, "close", tape.ClientToServer); len(ev) != 1 || !ev[0].Abrupt {
				t.Errorf("client close events %+v", ev)
			}
			checkClose(t, recs, ClosedByClient, "connection-lost")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _, m := newWSProxy(t, scriptedWSUpstream(t, nil), "/mcp")
			ctx, c := dialWS(t, url)
			if err := tt.run(ctx, c); err != nil {
				t.Fatal(err)
			}
			waitFor(t, sessionClosed(m, "ws-1"))
			tt.check(t, m.records())
		})
	}
}

// checkClose checks the session's close event.
func checkClose(t *testing.T, recs []tape.Record, by, reason string) {
	t.Helper()
	for _, r := range recs {
		if r.Type == tape.TypeEvent && r.Event == tape.EventClose {
			var e HTTPSessionEvent
			if err := json.Unmarshal(r.Data, &e); err != nil || e.By != by || e.Reason != reason {
				t.Errorf("close event %s, want by %q reason %q", r.Data, by, reason)
			}
			return
		}
	}
	t.Error("no close event")
}

func TestWSProxyRefusedUpgrade(t *testing.T) {
	url, p, m := newWSProxy(t, scriptedWSUpstream(t, nil), "/refuse")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, url, nil)
	if err == nil || resp == nil {
		t.Fatalf("dial: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Why") != "no entry" || string(body) != "forbidden here\n" {
		t.Errorf("client saw %d %v %q", resp.StatusCode, resp.Header, body)
	}
	recs := m.records()
	if len(recs) != 1 || recs[0].Event != tape.EventHTTP || !strings.Contains(string(recs[0].Data), `"status":403`) ||
		!strings.Contains(string(recs[0].Data), `"body":"forbidden here\n"`) {
		t.Errorf("tape %+v", recs)
	}
	if p.Stats().Refused != 1 {
		t.Errorf("stats %+v", p.Stats())
	}
}

func TestWSProxyHostOriginAndSessions(t *testing.T) {
	seen := make(chan *http.Request, 10)
	up := scriptedWSUpstream(t, seen)
	url, _, m := newWSProxy(t, up, "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	upHost := strings.TrimPrefix(up.URL, "http://")
	const n = 3
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://app.example"}}})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(websocket.StatusNormalClosure, "")
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i)
			for range 5 {
				if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
					errs <- err
					return
				}
				if _, data, err := c.Read(ctx); err != nil || string(data) != msg {
					errs <- fmt.Errorf("echo %q %v", data, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for range n {
		r := <-seen
		if r.Host != upHost || r.Header.Get("Origin") != "http://app.example" {
			t.Errorf("upstream saw Host %q Origin %q; want %q and the client's Origin", r.Host, r.Header.Get("Origin"), upHost)
		}
	}
	for i := 1; i <= n; i++ {
		waitFor(t, sessionClosed(m, fmt.Sprintf("ws-%d", i)))
	}
	// Every session holds the frames of one client only, both ways.
	params := map[string]map[string]int{}
	for _, r := range m.records() {
		if r.Type != tape.TypeMessage {
			continue
		}
		if params[r.Session] == nil {
			params[r.Session] = map[string]int{}
		}
		params[r.Session][string(r.Frame)]++
	}
	if len(params) != n {
		t.Fatalf("%d sessions with messages, want %d", len(params), n)
	}
	for id, frames := range params {
		if len(frames) != 1 {
			t.Errorf("session %s mixes clients: %v", id, frames)
		}
		for f, k := range frames {
			if k != 10 {
				t.Errorf("session %s: %q recorded %d times, want 10", id, f, k)
			}
		}
	}
}

func TestWSProxyFrameTooBig(t *testing.T) {
	url, _, m := newWSProxyTo(t, wsURL(scriptedWSUpstream(t, nil).URL, "/mcp"), WithMaxBody(1<<20))
	ctx, c := dialWS(t, url)
	if err := c.Write(ctx, websocket.MessageText, []byte(strings.Repeat("z", 2<<20))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("client saw %v, want status 1009", err)
	}
	waitFor(t, sessionClosed(m, "ws-1"))
	checkClose(t, m.records(), ClosedByProxy, "too-big")
}

func TestNewWSProxyErrors(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"http://h/mcp", "want a ws:// or wss:// URL"},
		{"ws:///mcp", "no host"},
		{"ws://h/%zz", "invalid URL escape"},
	} {
		if _, err := NewWSProxy(tt.url, &memTape{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.url, err, tt.want)
		}
	}
}

func TestWSProxyServeShutdown(t *testing.T) {
	m := &memTape{}
	up := scriptedWSUpstream(t, nil)
	p, err := NewWSProxy(wsURL(up.URL, "/mcp"), m)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	dctx, dcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer dcancel()
	url := "ws://" + ln.Addr().String() + "/mcp"
	c, _, err := websocket.Dial(dctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(dctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(dctx); err != nil {
		t.Fatal(err)
	}
	// A plain request is told to upgrade.
	resp, err := http.Get("http://" + ln.Addr().String() + "/mcp")
	if err != nil || resp.StatusCode != http.StatusUpgradeRequired {
		t.Fatalf("plain GET: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	if _, _, err := c.Read(dctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("client saw %v, want status 1001", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	checkClose(t, m.records(), ClosedByProxy, "shutdown")
}
