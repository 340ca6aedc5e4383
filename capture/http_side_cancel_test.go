package capture

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/internal/syncio"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Cancels of sessionless clients with a pool of connections: the call on
// one connection, its notifications/cancelled on another (http_side.go).

const (
	cancelInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	cancelCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`
	cancelOf   = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`
)

// cancelRecords returns the cancel naming id and the request id from recs.
func cancelRecords(t *testing.T, recs []tape.Record, id int) (call, cancel tape.Record, callAt, cancelAt int) {
	t.Helper()
	callAt, cancelAt = -1, -1
	want := fmt.Sprint(id)
	for i, r := range recs {
		if r.Type != tape.TypeMessage || r.Dir != tape.ClientToServer {
			continue
		}
		info := jsonrpc.Classify(r.Frame)
		switch {
		case info.Kind == jsonrpc.KindRequest && info.ID.Key() == want:
			call, callAt = r, i
		case info.Method == jsonrpc.MethodCancelled && info.CancelTarget.Key() == want:
			cancel, cancelAt = r, i
		}
	}
	if callAt < 0 || cancelAt < 0 {
		t.Fatalf("request %d recorded at %d, its cancel at %d: want both", id, callAt, cancelAt)
	}
	return call, cancel, callAt, cancelAt
}

// connOf returns the "conn-N" session of exchange n, from its "http" events.
func connOf(t *testing.T, recs []tape.Record, n uint64) string {
	t.Helper()
	for _, r := range events(recs, tape.EventHTTP) {
		if r.Exchange == n {
			return r.Session
		}
	}
	t.Fatalf("exchange %d has no http event", n)
	return ""
}

// checkCancelJoined checks that the cancel of id is recorded in its
// call's session, after the call, with its own exchange whose http events
// stay in another session; and that the cancel of answered, an id
// answered before its cancel was sent, stays in its connection's session.
func checkCancelJoined(t *testing.T, recs []tape.Record, id, answered int) {
	t.Helper()
	call, cancel, callAt, cancelAt := cancelRecords(t, recs, id)
	if cancel.Session != call.Session {
		t.Errorf("cancel of %d in session %q, its call in %q", id, cancel.Session, call.Session)
	}
	if cancelAt < callAt {
		t.Errorf("cancel of %d recorded before its call (%d < %d)", id, cancelAt, callAt)
	}
	if own := connOf(t, recs, cancel.Exchange); own == call.Session || cancel.Stream != StreamPOST {
		t.Errorf("cancel's POST (exchange %d, stream %q) in session %q, the call's: want its own connection's, stream post", cancel.Exchange, cancel.Stream, own)
	}
	if answered == 0 {
		return
	}
	call, cancel, _, _ = cancelRecords(t, recs, answered)
	if own := connOf(t, recs, cancel.Exchange); cancel.Session != own || own == call.Session {
		t.Errorf("cancel of answered %d in session %q, its POST in %q, the call in %q: want the POST's", answered, cancel.Session, own, call.Session)
	}
}

// TestHTTPSessionlessCancelJoinsItsCall: a pooled client of a stateless
// Streamable HTTP server has three chat calls streaming, each holding a
// connection, and cancels one on a fourth; a LangGraph-dialect client
// (answers on GET /mcp/stream, a connection per POST) does the same. The
// cancel is recorded in the session of the call it cancels; a cancel of
// a call already answered stays where it came.
func TestHTTPSessionlessCancelJoinsItsCall(t *testing.T) {
	chat := refserver.Chat{Chunks: 40, Delay: 10 * time.Millisecond}
	tests := []struct {
		name      string
		langGraph bool
	}{
		{"stateless", false},
		{"langgraph", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := refserver.New(refserver.WithChat(chat))
			if err != nil {
				t.Fatal(err)
			}
			up := upstream(t, refserver.HTTPHandler(s, refserver.HTTPConfig{Stateless: true, LangGraph: tt.langGraph, Chat: chat}))
			rig := startProxy(t, up.URL+refserver.Path)
			url := rig.url + refserver.Path
			pool := freshClient(t) // keep-alive: a busy connection makes a new one
			if tt.langGraph {
				pool.Transport.(*http.Transport).DisableKeepAlives = true // urllib: a connection per POST
			}
			post := func(body string) *http.Response { return peertest.PostJSON(t, pool, url, "", "", body) }
			peertest.ReadAnswer(t, post(cancelInit))
			exchanges := 1
			var lines *syncio.Lines
			if tt.langGraph {
				resp, err := freshClient(t).Get(rig.url + refserver.StreamPath)
				if err != nil {
					t.Fatal(err)
				}
				exchanges++
				t.Cleanup(func() { resp.Body.Close() })
				lines = &syncio.Lines{}
				go lines.Scan(resp.Body)
			}
			ids := []int{2, 3, 4}
			var wg sync.WaitGroup
			streams := make([]*syncio.Lines, len(ids))
			for i, id := range ids {
				resp := post(fmt.Sprintf(cancelCall, id))
				exchanges++
				if tt.langGraph {
					peertest.ReadAnswer(t, resp)
					streams[i] = lines
					continue
				}
				streams[i] = &syncio.Lines{}
				wg.Add(1)
				go func() { defer wg.Done(); streams[i].Scan(resp.Body) }()
			}
			// Every call is streaming: its first delta is out.
			for i, id := range ids {
				waitLine(t, streams[i], fmt.Sprintf(`"id":%d,`, id), "content_delta")
			}
			peertest.ReadAnswer(t, post(fmt.Sprintf(cancelOf, 3)))
			exchanges++
			waitLine(t, streams[0], `"id":2,`, "content_end")
			waitLine(t, streams[2], `"id":4,`, "content_end")
			peertest.ReadAnswer(t, post(fmt.Sprintf(cancelOf, 2))) // answered: stays
			exchanges++
			wg.Wait() // the stateless POST streams ended, the cancelled one too
			recs := waitEnded(t, rig, exchanges-btoi(tt.langGraph))
			checkCancelJoined(t, recs, 3, 2)
		})
	}
}

// waitLine waits for a line of l holding every one of parts.
func waitLine(t *testing.T, l *syncio.Lines, parts ...string) {
	t.Helper()
	waitFor(t, func() bool { return l.Has(parts...) })
}

// TestHTTPSessionlessCancelWaitsForItsCall: a stateless server that sends
// the call's response headers with its answer only, after the cancel was
// answered and recorded: the call is recorded only then (its session
// could come with those headers), and the cancel, parked with it until
// then, follows it in the tape, in its session. Bodies of known length
// take the lean path, chunked ones net/http's. At most maxParked cancels
// wait for one call: more stay in their own sessions.
func TestHTTPSessionlessCancelWaitsForItsCall(t *testing.T) {
	tests := []struct {
		chunked bool
		cancels int
	}{
		{false, 1},
		{true, 1},
		{false, maxParked + 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("chunked=%v,cancels=%d", tt.chunked, tt.cancels), func(t *testing.T) {
			testCancelWaitsForItsCall(t, tt.chunked, tt.cancels)
		})
	}
}

func testCancelWaitsForItsCall(t *testing.T, chunked bool, cancels int) {
	release := make(chan struct{})
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"tools/call"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
	}))
	rig := startProxy(t, up.URL+"/mcp")
	pool := freshClient(t)
	post := func(body string) (*http.Response, error) {
		var r io.Reader = strings.NewReader(body)
		if chunked {
			r = io.MultiReader(r) // of unknown length: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, rig.url+"/mcp", r)
		req.Header.Set("Content-Type", "application/json")
		return pool.Do(req)
	}
	answered := make(chan string, 1)
	go func() {
		resp, err := post(fmt.Sprintf(cancelCall, 7))
		if err != nil {
			answered <- err.Error()
			return
		}
		answered <- peertest.ReadAnswer(t, resp)
	}()
	waitFor(t, func() bool { // the call is noted in flight
		side := &rig.proxy.side
		side.mu.Lock()
		defer side.mu.Unlock()
		return len(side.reqs) == 1
	})
	for range cancels {
		resp, err := post(fmt.Sprintf(cancelOf, 7)) // the call holds the other connection
		if err != nil {
			t.Fatal(err)
		}
		peertest.ReadAnswer(t, resp)
	}
	waitFor(t, func() bool { return len(httpEvents(t, rig.tape.records(), "end")) == cancels })
	close(release)
	if a := <-answered; !strings.Contains(a, `"id":7`) {
		t.Fatalf("call answered %q", a)
	}
	recs := waitEnded(t, rig, cancels+1)
	if cancels == 1 {
		checkCancelJoined(t, recs, 7, 0)
		return
	}
	call, _, _, _ := cancelRecords(t, recs, 7)
	joined := 0
	for _, r := range msgs(recs, tape.ClientToServer) {
		if r.Session == call.Session && jsonrpc.Classify(r.Frame).Method == jsonrpc.MethodCancelled {
			joined++
		}
	}
	if joined != maxParked {
		t.Errorf("%d of %d cancels in the call's session, want %d (maxParked)", joined, cancels, maxParked)
	}
}

// BenchmarkSideTable: what the table of sessionless requests costs one
// exchange of one request: noted on arrival, marked recorded, ended.
func BenchmarkSideTable(b *testing.B) {
	p := &HTTPProxy{}
	conn := &connInfo{id: 1, session: "conn-1", host: "127.0.0.1"}
	body := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"session 1 says hello"}}}`)
	x := &exchange{p: p, conn: conn, session: conn.session, status: http.StatusOK}
	b.ReportAllocs()
	for b.Loop() {
		x.sideNoted, x.sideReqs = false, nil
		x.sideRequests(body)
		x.sideRecorded()
		x.sideDone()
	}
}
