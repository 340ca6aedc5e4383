package loadgen

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/refserver"
)

// getTimeline is what the server saw of one session's HTTP requests.
type getTimeline struct {
	gets, deletes       int
	getOpen, getEnd     time.Time // GET stream flushed open; GET handler returned
	lastPost, deletedAt time.Time // the last POST served; DELETE served
	listChanged         bool      // the GET stream carried tools/list_changed
}

// getWatch wraps the reference server's handler and notes, per session,
// its GET stream, POSTs and DELETE. Every tools/call waits until each of
// the n sessions has its GET stream open and the server has sent on it a
// notifications/tools/list_changed (a tool added) and a ping that the
// session answered: the server messages reach sessions still running.
type getWatch struct {
	t     *testing.T
	n     int
	srv   *mcp.Server
	inner http.Handler
	mu    sync.Mutex
	by    map[string]*getTimeline
	ready chan struct{} // closed once the server messages went out
	once  sync.Once
	pings int // pings answered
}

func newGetWatch(t *testing.T, n int) (*getWatch, string) {
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	w := &getWatch{t: t, n: n, srv: s, inner: refserver.HTTPHandler(s, refserver.HTTPConfig{}),
		by: map[string]*getTimeline{}, ready: make(chan struct{})}
	ts := httptest.NewServer(w)
	t.Cleanup(ts.Close)
	return w, ts.URL + refserver.Path
}

func (w *getWatch) line(id string) *getTimeline {
	tl := w.by[id]
	if tl == nil {
		tl = &getTimeline{}
		w.by[id] = tl
	}
	return tl
}

func (w *getWatch) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		w.inner.ServeHTTP(rw, r)
		return
	}
	switch r.Method {
	case http.MethodGet:
		w.mu.Lock()
		w.line(id).gets++
		w.mu.Unlock()
		w.inner.ServeHTTP(&getWriter{ResponseWriter: rw, w: w, id: id}, r)
		w.mu.Lock()
		w.line(id).getEnd = time.Now()
		w.mu.Unlock()
	case http.MethodDelete:
		w.inner.ServeHTTP(rw, r)
		w.mu.Lock()
		tl := w.line(id)
		tl.deletes++
		tl.deletedAt = time.Now()
		w.mu.Unlock()
	default:
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		r.Body.Close()
		if bytes.Contains(body.Bytes(), []byte(`"tools/call"`)) {
			select {
			case <-w.ready:
			case <-time.After(10 * time.Second):
				w.t.Errorf("session %s: the server messages on the GET streams were not sent within 10 s", id)
				w.once.Do(func() { close(w.ready) })
			}
		}
		r.Body = readCloser{bytes.NewReader(body.Bytes())}
		w.mu.Lock()
		w.line(id).lastPost = time.Now()
		w.mu.Unlock()
		w.inner.ServeHTTP(rw, r)
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// opened notes a GET stream flushed open; with all n open, it makes the
// server send its messages.
func (w *getWatch) opened(id string) {
	w.mu.Lock()
	tl := w.line(id)
	first := tl.getOpen.IsZero()
	if first {
		tl.getOpen = time.Now()
	}
	open := 0
	for _, l := range w.by {
		if !l.getOpen.IsZero() {
			open++
		}
	}
	w.mu.Unlock()
	if first && open == w.n {
		go w.send()
	}
}

// send adds a tool (the SDK tells every session tools/list_changed on its
// GET stream) and pings every session, then waits for the notifications to
// be written and releases the calls.
func (w *getWatch) send() {
	defer w.once.Do(func() { close(w.ready) })
	mcp.AddTool(w.srv, &mcp.Tool{Name: "late", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ss := range w.srv.Sessions() {
		if err := ss.Ping(ctx, nil); err != nil {
			w.t.Errorf("ping of session %s over its GET stream: %v", ss.ID(), err)
			continue
		}
		w.mu.Lock()
		w.pings++
		w.mu.Unlock()
	}
	for ctx.Err() == nil {
		w.mu.Lock()
		sent := 0
		for _, l := range w.by {
			if l.listChanged {
				sent++
			}
		}
		w.mu.Unlock()
		if sent == w.n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.t.Errorf("tools/list_changed not written on every GET stream within 5 s")
}

// getWriter watches a GET stream's answer: flushed open, and what it carries.
type getWriter struct {
	http.ResponseWriter
	w  *getWatch
	id string
}

func (g *getWriter) Write(b []byte) (int, error) {
	n, err := g.ResponseWriter.Write(b)
	if bytes.Contains(b, []byte("notifications/tools/list_changed")) {
		g.w.mu.Lock()
		g.w.line(g.id).listChanged = true
		g.w.mu.Unlock()
	}
	return n, err
}

func (g *getWriter) Flush() {
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	g.w.opened(g.id)
}

func (g *getWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// TestGetStream: with WithGetStream, each session opens one GET stream that
// stays open while the session runs, gets the server's own messages on it
// (tools/list_changed and a ping, answered), and ends with the session's
// DELETE; the report counts what the streams carried.
func TestGetStream(t *testing.T) {
	const sessions = 3
	w, url := newGetWatch(t, sessions)
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call sleep {"ms":10}`),
		WithSessions(sessions), WithRequests(30), WithGetStream(), WithTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answered != 30 || rep.ErrorTotal != 0 {
		t.Fatalf("answered %d errors %v", rep.Answered, rep.Errors)
	}
	g := rep.GetStream
	if g == nil || g.Opened != sessions || g.Notifications != sessions || g.Requests != sessions || g.Messages != 2*sessions {
		t.Errorf("GET stream report %+v, want %d opened, each with 1 notification and 1 request", g, sessions)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "server messages on GET streams: 6 (3 notifications, 3 requests)"; !strings.Contains(text.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, text.String())
	}
	// The GET handlers return once the session is deleted (or its
	// connection closed): wait for that a little.
	deadline := time.Now().Add(5 * time.Second)
	for {
		w.mu.Lock()
		ended := 0
		for _, l := range w.by {
			if !l.getEnd.IsZero() {
				ended++
			}
		}
		w.mu.Unlock()
		if ended == sessions || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.by) != sessions || w.pings != sessions {
		t.Fatalf("%d sessions seen, %d pings answered; want %d", len(w.by), w.pings, sessions)
	}
	for id, l := range w.by {
		switch {
		case l.gets != 1 || l.deletes != 1:
			t.Errorf("session %s: %d GETs, %d DELETEs; want 1 each", id, l.gets, l.deletes)
		case l.getOpen.IsZero() || !l.listChanged:
			t.Errorf("session %s: GET stream open %v, tools/list_changed sent %v", id, !l.getOpen.IsZero(), l.listChanged)
		case !l.getOpen.Before(l.lastPost):
			t.Errorf("session %s: GET stream opened after the last POST", id)
		case l.getEnd.IsZero():
			t.Errorf("session %s: the GET stream never ended", id)
		case l.getEnd.Before(l.lastPost):
			t.Errorf("session %s: the GET stream ended %v before the session's last POST came", id, l.lastPost.Sub(l.getEnd))
		case l.deletedAt.Before(l.lastPost):
			t.Errorf("session %s: deleted before its last POST came", id)
		}
	}
}

// TestGetStreamMaxConns: each session's GET stream (or legacy SSE stream)
// holds a connection for the whole run, so a --max-conns bound no larger
// than the sessions must not leave the requests without a connection (they
// timed out, all of them; over legacy SSE no session could be set up).
func TestGetStreamMaxConns(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(sse.Close)
	cases := []struct {
		name   string
		target Target
		opts   []Option
	}{
		{"GET stream", Target{URL: url}, []Option{WithGetStream()}},
		{"legacy SSE", Target{SSE: sse.URL}, nil},
	}
	for _, c := range cases {
		for _, conns := range []int{1, 2} {
			opts := append([]Option{WithSessions(2), WithRequests(20), WithMaxConns(conns), WithTimeout(2 * time.Second)}, c.opts...)
			rep, err := Run(context.Background(), c.target, mustCalls(t, `tools/call echo {"message":"hi"}`), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Answered != 20 || rep.ErrorTotal != 0 || rep.Setups != 2 {
				t.Errorf("%s, --max-conns %d: answered %d of 20, %d sessions set up, errors %v", c.name, conns, rep.Answered, rep.Setups, rep.Errors)
			}
			if g := rep.GetStream; c.target.URL != "" && (g == nil || g.Opened != 2) {
				t.Errorf("%s, --max-conns %d: GET streams %+v, want 2 opened", c.name, conns, g)
			}
		}
	}
}
