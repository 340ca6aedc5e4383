package loadgen

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
)

// TestAnsweredStreamEndsByItself: a server (or a proxy before it) may end
// a POST's event stream a little after the answer it carries. The session
// must let the stream end rather than cut it once it has the answer: cut,
// the server sees each request aborted and the HTTP connection is closed,
// a new one dialled for the next request. Here every tools/call stream
// ends 5 ms after its answer was written and flushed, and the session
// thinks 40 ms between calls: each stream has ended before the next call,
// whose request goes on the same connection.
func TestAnsweredStreamEndsByItself(t *testing.T) {
	const requests = 8
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	inner := refserver.HTTPHandler(s, refserver.HTTPConfig{})
	var aborted, conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		inner.ServeHTTP(w, r)
		if info := jsonrpc.Classify(body); info.Method != "tools/call" {
			return
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-r.Context().Done():
			aborted.Add(1)
		}
	}))
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	rep, err := Run(context.Background(), Target{URL: ts.URL + refserver.Path}, mustCalls(t, `tools/call blob {"bytes":20000}`),
		WithSessions(1), WithRequests(requests), WithThink(40*time.Millisecond), WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answered != requests || rep.ErrorTotal != 0 {
		t.Fatalf("answered %d errors %v", rep.Answered, rep.Errors)
	}
	// the last stream may still be open when the run ends
	if a, n := aborted.Load(), conns.Load(); a > 1 || n > 2 {
		t.Errorf("%d of %d answered streams cut by the client, %d connections for %d requests", a, requests, n, requests)
	}
}
