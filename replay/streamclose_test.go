package replay

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/jsonrpc"
)

// reportServer is a Streamable HTTP server whose tools/call export_report
// streams five progress notifications, 30 ms apart, then its answer, on
// the POST's SSE stream; with holdHeads, it sends the stream's headers
// only that long after the call came, with the first event. It counts the
// progress events each stream had written when its client went away (0:
// before the headers).
type reportServer struct {
	holdHeads time.Duration
	mu        sync.Mutex
	closed    []int // progress events written before each early close
}

// gone notes a client that went away after n progress events.
func (s *reportServer) gone(n int) {
	s.mu.Lock()
	s.closed = append(s.closed, n)
	s.mu.Unlock()
}

// closes returns the early closes noted so far.
func (s *reportServer) closes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.closed...)
}

func (s *reportServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	info := jsonrpc.Classify(body)
	if info.Kind != jsonrpc.KindRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := info.ID.Raw
	if info.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", "s-1")
	}
	if info.Method != "tools/call" || !bytes.Contains(body, []byte(`"export_report"`)) {
		w.Header().Set("Content-Type", "application/json")
		result := `{}`
		if info.Method == "initialize" {
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"reports","version":"1"}}`
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
		return
	}
	if s.holdHeads > 0 {
		select {
		case <-r.Context().Done():
			s.gone(0)
			return
		case <-time.After(s.holdHeads):
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	if s.holdHeads == 0 {
		fl.Flush()
	}
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":%d,\"total\":5}}\n\n", info.ProgressToken.Raw, i)
		fl.Flush()
		select {
		case <-r.Context().Done():
			s.gone(i)
			return
		case <-time.After(30 * time.Millisecond):
		}
	}
	fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"report ready\"}]}}\n\n", id)
}

// post sends one JSON-RPC frame to endpoint in session "s-1" (but an
// initialize) and returns the response; the caller closes its body.
func post(t *testing.T, c *http.Client, endpoint, frame string) *http.Response {
	t.Helper()
	resp, err := c.Do(postRequest(t, endpoint, frame))
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	return resp
}

// postRequest is the request of post.
func postRequest(t *testing.T, endpoint, frame string) *http.Request {
	t.Helper()
	if strings.Contains(frame, `"initialize"`) {
		return peertest.PostRequest(t, endpoint, "", "", frame)
	}
	return peertest.PostRequest(t, endpoint, "s-1", "2025-06-18", frame)
}

// TestReplayClosesStreamWhereRecorded: the recorded client closed the
// response stream of export_report after some progress events, then went
// on in the same session. The replay closes the live stream at the same
// point (after as many live progress events), not at once and not at the
// end, and compares only what the recording holds from before the close.
// Against a server that sends the stream's headers only with its first
// event, 500 ms after the call: a close recorded after an event waits for
// the headers, then for that event; a close recorded before the headers
// came gives up the live POST before its headers come too (before, both
// left the live stream open, with a note "no live stream to close", and
// the whole stream and answer came: exit 1).
func TestReplayClosesStreamWhereRecorded(t *testing.T) {
	tests := []struct {
		name      string
		holdHeads time.Duration
		events    int // read before closing the stream (0: closed before the headers came)
		liveMax   int // the live close may race one more event
	}{
		{"after two events", 0, 2, 3},
		{"headers held, after the first event", 500 * time.Millisecond, 1, 2},
		{"headers held, before them", 500 * time.Millisecond, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &reportServer{holdHeads: tt.holdHeads}
			up := httptest.NewServer(srv)
			defer up.Close()
			endpoint := up.URL + "/mcp"
			path := recordClose(t, srv, endpoint, tt.events, tt.holdHeads+300*time.Millisecond)
			checkStreamCloseReplay(t, srv, endpoint, path, tt.events, tt.liveMax)
		})
	}
}

// recordClose records, through the capture proxy in front of srv at
// endpoint, a session whose client closes the stream of export_report
// after reading events progress events (0: 50 ms after the call, its
// headers not in), then lists the tools, gap after the call: time enough
// for the whole stream to come on a stream left open. It returns the
// tape's path, and leaves srv's closes empty.
func recordClose(t *testing.T, srv *reportServer, endpoint string, events int, gap time.Duration) string {
	t.Helper()
	base, finish := httpProxy(t, endpoint)
	proxied := base + "/mcp"
	c := &http.Client{Timeout: 10 * time.Second}
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		resp := post(t, c, proxied, f)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ctx, cancel := context.WithCancel(context.Background())
	callAt := time.Now()
	if events == 0 {
		time.AfterFunc(50*time.Millisecond, cancel)
	}
	resp, err := c.Do(postRequest(t, proxied, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"export_report","arguments":{},"_meta":{"progressToken":1}}}`).WithContext(ctx))
	switch {
	case events == 0 && err == nil:
		t.Fatalf("the call's answer came (%s) before the client gave it up", resp.Status)
	case err == nil:
		sc := bufio.NewScanner(resp.Body)
		for n := 0; n < events && sc.Scan(); {
			if strings.HasPrefix(sc.Text(), "data:") {
				n++
			}
		}
		resp.Body.Close() // the cancel: the stream closed after the events read
	case events > 0:
		t.Fatalf("POST %s: %v", proxied, err)
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for len(srv.closes()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Until(callAt.Add(gap)))
	resp = post(t, c, proxied, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	path := finish()
	if got := srv.closes(); len(got) != 1 || got[0] != events {
		t.Fatalf("recorded stream closes %v; want one after %d events", got, events)
	}
	srv.mu.Lock()
	srv.closed = nil
	srv.mu.Unlock()
	return path
}

// checkStreamCloseReplay replays the session of the tape at path against
// srv at endpoint, whose recorded client closed the stream of id 2 after
// events messages, and checks that the live stream is closed at the same
// point (after events to liveMax progress events were written), that the
// verdict is the recording's and that no note says a stream could not
// be closed.
func checkStreamCloseReplay(t *testing.T, srv *reportServer, endpoint, path string, events, liveMax int) {
	t.Helper()
	tp, err := Open(path, -1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Pick(tp.Sessions, "")
	if err != nil {
		t.Fatal(err)
	}
	closes := 0
	for _, st := range s.Steps {
		if st.Closes != "" {
			closes++
			if st.Closes != "2" || st.CloseAfter != events {
				t.Errorf("close step %+v; want the stream of id 2 after %d messages", st, events)
			}
		}
	}
	if closes != 1 {
		t.Errorf("%d close steps; want one", closes)
	}
	rep, err := Run(context.Background(), []*Session{s}, httpDial(endpoint), WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	sr := rep.Sessions[0]
	if rep.ExitCode() != 0 || sr.Matched != 2 || sr.Sent != sr.Steps {
		t.Fatalf("exit %d, %d matched, %d of %d sent; want 0, 2, all:\n%s", rep.ExitCode(), sr.Matched, sr.Sent, sr.Steps, text.String())
	}
	for _, n := range sr.Notes {
		if strings.Contains(n, "no live stream") {
			t.Errorf("note %q", n)
		}
	}
	progress := events == 0
	for _, n := range sr.Notifications {
		if n.Method == "notifications/progress" {
			progress = n.Recorded == events && n.Live == events
		}
	}
	if !progress {
		t.Errorf("progress not compared as %d recorded, %d live: %+v", events, events, sr.Notifications)
	}
	// The server saw the live stream closed where the recorded one was
	// (after writing as many events or, racing the close, one more).
	deadline := time.Now().Add(2 * time.Second)
	for {
		live := srv.closes()
		if len(live) == 1 && live[0] >= events && live[0] <= liveMax {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("live stream closes %v; want one, after %d to %d events:\n%s", live, events, liveMax, text.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
