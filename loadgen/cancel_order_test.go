package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// orderServer is a Streamable HTTP server that notes the order in which
// it reads the calls and the cancellations, and never answers a call:
// with heldHeads it holds the call's headers too, else it sends them at
// once and holds the event stream.
type orderServer struct {
	heldHeads bool
	mu        sync.Mutex
	seen      []string // "call ID", "cancel ID", in the order read
}

func (o *orderServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	info := jsonrpc.Classify(body)
	switch {
	case info.Kind == jsonrpc.KindRequest && info.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"order","version":"1"}}}`, info.ID.Raw)
	case info.Kind == jsonrpc.KindRequest:
		o.note("call " + info.ID.Key())
		if !o.heldHeads {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
		}
		<-r.Context().Done() // the client closes the stream
	default:
		if info.Method == jsonrpc.MethodCancelled {
			o.note("cancel " + info.CancelTarget.Key())
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

func (o *orderServer) note(s string) {
	o.mu.Lock()
	o.seen = append(o.seen, s)
	o.mu.Unlock()
}

// slowCalls is a dialer whose connections hold every write of a
// tools/call request for hold before it goes out, as a loaded machine or
// a slow connection may, and note when the call's write begins (after
// the hold) and ends, and when a cancellation's write begins.
type slowCalls struct {
	hold                   time.Duration
	mu                     sync.Mutex
	writing, wrote, cancel time.Time
}

func (s *slowCalls) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &slowCallConn{Conn: nc, s: s}, nil
}

type slowCallConn struct {
	net.Conn
	s *slowCalls
}

func (c *slowCallConn) Write(p []byte) (int, error) {
	switch {
	case bytes.Contains(p, []byte(`"tools/call"`)):
		time.Sleep(c.s.hold)
		c.s.note(&c.s.writing)
		n, err := c.Conn.Write(p)
		c.s.note(&c.s.wrote)
		return n, err
	case bytes.Contains(p, []byte(jsonrpc.MethodCancelled)):
		c.s.note(&c.s.cancel)
	}
	return c.Conn.Write(p)
}

// note sets *at to now.
func (s *slowCalls) note(at *time.Time) {
	s.mu.Lock()
	*at = time.Now()
	s.mu.Unlock()
}

// TestCancelAfterCallWritten cancels a call over Streamable HTTP whose
// POST is held 400 ms on its way out, with a cancel delay of 300 ms: the
// cancellation, POSTed on another connection, must wait until the call's
// POST has been written, so that it cannot reach the server before the
// call (the server would never see a cancel for a call it knows, and
// answer in full). Against a server sending the call's headers at once
// the server reads the call first (the cancel leaves once the headers
// came); against one holding them back the cancel leaves
// cancelLandGrace after the call's write. The cancel delay still runs
// from the send, not from the write: the cancel follows the write by
// less than the delay. (Before, the cancel left 300 ms after the send,
// 100 ms before the call.) Over stdio and WebSocket, TestCancelStdio and
// the cmd tests (TestLoadCancelsStreamedChat, TestLoadWebSocket) cover
// the cancellation.
func TestCancelAfterCallWritten(t *testing.T) {
	const after, hold = 300 * time.Millisecond, 400 * time.Millisecond
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("headers held %v", held), func(t *testing.T) {
			srv := &orderServer{heldHeads: held}
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			slow := &slowCalls{hold: hold}
			tr := &http.Transport{DialContext: slow.dial}
			t.Cleanup(tr.CloseIdleConnections)
			rep, err := Run(context.Background(), Target{URL: ts.URL + "/mcp"}, mustCalls(t, `tools/call slow {}`),
				WithSessions(1), WithRequests(1), WithCancel(after, 1), WithTimeout(10*time.Second),
				WithHTTPClient(&http.Client{Transport: tr}))
			if err != nil {
				t.Fatal(err)
			}
			if c := rep.Cancel; c == nil || c.Sent != 1 || rep.ErrorTotal != 0 {
				t.Fatalf("cancel %+v errors %v", rep.Cancel, rep.Errors)
			}
			slow.mu.Lock()
			writing, wrote, cancel := slow.writing, slow.wrote, slow.cancel
			slow.mu.Unlock()
			if wrote.IsZero() || cancel.IsZero() {
				t.Fatalf("call written at %v, cancel at %v", wrote, cancel)
			}
			if !cancel.After(writing) {
				t.Fatalf("the cancel was sent %v before the call's POST was written", writing.Sub(cancel))
			}
			if gap := cancel.Sub(writing); gap >= after {
				t.Errorf("the cancel came %v after the call's write: the delay of %v ran from the write, not the send", gap, after)
			}
			// With the headers held, only the grace after the write lets
			// the cancel go (the answer's headers let it go at once, maybe
			// before this dialer noted the end of the write).
			if gap := cancel.Sub(wrote); held && gap < cancelLandGrace {
				t.Errorf("the cancel came %v after the call's write ended, headers held: want at least %v", gap, cancelLandGrace)
			}
			srv.mu.Lock()
			seen := slices.Clone(srv.seen)
			srv.mu.Unlock()
			call := slices.IndexFunc(seen, func(s string) bool { return strings.HasPrefix(s, "call ") })
			cn := slices.IndexFunc(seen, func(s string) bool { return strings.HasPrefix(s, "cancel ") })
			if call < 0 || cn < 0 || strings.TrimPrefix(seen[call], "call ") != strings.TrimPrefix(seen[cn], "cancel ") {
				t.Fatalf("server read %q: want a call and its cancel", seen)
			}
			if !held && cn < call {
				t.Errorf("server read %q: the cancel before its call", seen)
			}
		})
	}
}
