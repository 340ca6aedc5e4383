package capture

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// langGraphUpstream serves the reference server's LangGraph dialect (POST
// /mcp plain JSON, GET /mcp/stream) with a chat tool of n deltas.
func langGraphUpstream(t *testing.T, n int) string {
	t.Helper()
	chat := refserver.Chat{Chunks: n, Delay: 3 * time.Millisecond}
	s, err := refserver.New(refserver.WithChat(chat))
	if err != nil {
		t.Fatal(err)
	}
	return upstream(t, refserver.HTTPHandler(s, refserver.HTTPConfig{LangGraph: true, Chat: chat})).URL
}

// TestHTTPSideStreamAnswersJoinTheirRequests: a client of the LangGraph
// docs' dialect (a new connection per POST, as Python's urllib makes,
// and an EventSource on /mcp/stream) is recorded with every streamed
// chunk in the session of its request, the stream's exchange named;
// plain JSON answers stay with their POSTs.
func TestHTTPSideStreamAnswersJoinTheirRequests(t *testing.T) {
	const n = 3
	up := langGraphUpstream(t, n)
	rig := startProxy(t, up+refserver.Path)
	tr := &http.Transport{DisableKeepAlives: true}
	c := &http.Client{Transport: tr}
	post := func(body string) (int, string) {
		resp, err := c.Post(rig.url+refserver.Path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, peertest.ReadAnswer(t, resp)
	}
	if st, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); st != 200 || !strings.Contains(body, `"id":1`) {
		t.Fatalf("initialize: %d %s", st, body)
	}
	resp, err := c.Get(rig.url + refserver.StreamPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ids := []string{"2", `"b"`, "4"}
	var wg sync.WaitGroup
	for _, id := range ids { // concurrent: their chunks interleave on the stream
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, body := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`, id)); st != 202 {
				t.Errorf("chat %s: %d %s", id, st, body)
			}
		}()
	}
	wg.Wait()
	sc := bufio.NewScanner(resp.Body)
	for ends := 0; ends < len(ids) && sc.Scan(); {
		if strings.Contains(sc.Text(), "content_end") {
			ends++
		}
	}
	if st, body := post(`[{"jsonrpc":"2.0","id":5,"method":"tools/list"},{"jsonrpc":"2.0","id":6,"method":"prompts/list"}]`); st != 200 || !strings.Contains(body, `"id":6`) {
		t.Fatalf("batch: %d %s", st, body)
	}
	resp.Body.Close()
	recs := waitEnded(t, rig, 2+len(ids)+1) // initialize, GET, the chats, the batch

	reqSession := map[string]string{}
	for _, m := range msgs(recs, tape.ClientToServer) {
		info := jsonrpc.Classify(m.Frame)
		reqSession[info.ID.Key()] = m.Session
	}
	chunks := map[string]int{}
	for _, m := range msgs(recs, tape.ServerToClient) {
		info := jsonrpc.Classify(m.Frame)
		key := info.ID.Key()
		want, ok := reqSession[key]
		if !ok {
			t.Errorf("answer %.80s: no request recorded", m.Frame)
			continue
		}
		if m.Session != want {
			t.Errorf("answer %.80s in session %q, its request in %q", m.Frame, m.Session, want)
		}
		if m.Stream == StreamGET {
			chunks[key]++
		}
	}
	for _, id := range ids {
		key := jsonrpc.Classify([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)).ID.Key()
		if chunks[key] != n+2 {
			t.Errorf("id %s: %d chunks recorded from the stream, want %d", id, chunks[key], n+2)
		}
	}
	sessions := map[string]bool{}
	for _, s := range reqSession {
		sessions[s] = true
	}
	if len(sessions) < 4 {
		t.Errorf("requests in %d sessions, want one per connection (%v)", len(sessions), reqSession)
	}
}
