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
// the POST's SSE stream. It counts the progress events each stream had
// written when its client went away.
type reportServer struct {
	mu     sync.Mutex
	closed []int // progress events written before each early close
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
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":%d,\"total\":5}}\n\n", info.ProgressToken.Raw, i)
		fl.Flush()
		select {
		case <-r.Context().Done():
			s.mu.Lock()
			s.closed = append(s.closed, i)
			s.mu.Unlock()
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
	if strings.Contains(frame, `"initialize"`) {
		return peertest.PostJSON(t, c, endpoint, "", "", frame)
	}
	return peertest.PostJSON(t, c, endpoint, "s-1", "2025-06-18", frame)
}

// TestReplayClosesStreamWhereRecorded: the recorded client closed the
// response stream of export_report after two progress events, then went
// on in the same session. The replay closes the live stream at the same
// point (after two live progress events), not at once and not at the end,
// and compares only what the recording holds from before the close.
func TestReplayClosesStreamWhereRecorded(t *testing.T) {
	srv := &reportServer{}
	up := httptest.NewServer(srv)
	defer up.Close()
	endpoint := up.URL + "/mcp"

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
	resp := post(t, c, proxied, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"export_report","arguments":{},"_meta":{"progressToken":1}}}`)
	sc := bufio.NewScanner(resp.Body)
	for events := 0; events < 2 && sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "data:") {
			events++
		}
	}
	resp.Body.Close() // the cancel: the stream closed after two events
	time.Sleep(100 * time.Millisecond)
	resp = post(t, c, proxied, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	path := finish()
	srv.mu.Lock()
	recorded := append([]int(nil), srv.closed...)
	srv.closed = nil
	srv.mu.Unlock()

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
			if st.Closes != "2" || st.CloseAfter != 2 {
				t.Errorf("close step %+v; want the stream of id 2 after 2 messages", st)
			}
		}
	}
	if closes != 1 || len(recorded) != 1 {
		t.Errorf("%d close steps, recorded stream closes %v; want one of each", closes, recorded)
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
	progress := false
	for _, n := range sr.Notifications {
		if n.Method == "notifications/progress" && n.Recorded == 2 && n.Live == 2 {
			progress = true
		}
	}
	if !progress {
		t.Errorf("progress not compared as 2 recorded, 2 live: %+v", sr.Notifications)
	}
	// The server saw the live stream closed where the recorded one was
	// (after writing its second or, racing the close, third event).
	deadline := time.Now().Add(2 * time.Second)
	for {
		srv.mu.Lock()
		live := append([]int(nil), srv.closed...)
		srv.mu.Unlock()
		if len(live) == 1 && live[0] >= 2 && live[0] <= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("live stream closes %v; want one, after 2 or 3 events", live)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
