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

// TestHTTPSideStreamOwnerLeaves: the stream that carried the first part of
// an answer owns it, and when it ends mid-answer (its client, which has
// its own answers, leaves), the next stream carrying a part takes over: the
// rest of the answer, which its client reads on its own stream, is still
// recorded in the session of the request, each part once, the end part
// included (it was left as copies in the other stream's session), and
// none missing (a part in flight on the owner's stream as it closed was
// lost, 4 runs in 50 with -race).
func TestHTTPSideStreamOwnerLeaves(t *testing.T) {
	const n = 20
	up := langGraphUpstream(t, n)
	rig := startProxy(t, up+refserver.Path)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	post := func(body string) int {
		resp, err := c.Post(rig.url+refserver.Path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		peertest.ReadAnswer(t, resp)
		return resp.StatusCode
	}
	if st := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); st != 200 {
		t.Fatalf("initialize: %d", st)
	}
	stream := func() (*http.Response, *bufio.Scanner) {
		resp, err := c.Get(rig.url + refserver.StreamPath)
		if err != nil {
			t.Fatal(err)
		}
		return resp, bufio.NewScanner(resp.Body)
	}
	readPart := func(sc *bufio.Scanner) string {
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"id":"x"`) {
				return sc.Text()
			}
		}
		t.Fatal("stream ended before a part")
		return ""
	}
	a, sa := stream()
	if st := post(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`); st != 202 {
		t.Fatalf("chat: %d", st)
	}
	readPart(sa) // stream a carried the first part: it owns the answer
	b, sb := stream()
	readPart(sb) // b is open: the server sends to both
	a.Body.Close()
	for !strings.Contains(readPart(sb), "content_end") {
	}
	b.Body.Close()
	recs := waitEnded(t, rig, 4) // initialize, the chat, both streams

	var reqSession string
	for _, m := range msgs(recs, tape.ClientToServer) {
		if strings.Contains(string(m.Frame), `"id":"x"`) {
			reqSession = m.Session
		}
	}
	var parts []string
	seen := map[string]bool{}
	for _, m := range msgs(recs, tape.ServerToClient) {
		if m.Session == reqSession && strings.Contains(string(m.Frame), `"id":"x"`) {
			parts = append(parts, lookupType(m.Frame))
			if seen[string(m.Frame)] { // the chat's deltas are all different
				t.Errorf("part recorded twice: %s", m.Frame)
			}
			seen[string(m.Frame)] = true
		}
	}
	// None is missing, the part in flight to the proxy on stream a as it
	// closed included (stream b's copy of it came while a still owned the
	// answer: held, then recorded from b when a ended).
	if len(parts) != n+2 || parts[0] != "content_start" || parts[len(parts)-1] != "content_end" {
		t.Errorf("session %s holds %d parts of the answer %v, want %d from content_start to content_end", reqSession, len(parts), parts, n+2)
	}
	t.Logf("%d of %d parts in the request's session", len(parts), n+2)
}

// lookupType returns result.type of a streamed answer's part.
func lookupType(frame []byte) string {
	for _, t := range []string{"content_start", "content_delta", "content_end"} {
		if strings.Contains(string(frame), `"type":"`+t+`"`) {
			return t
		}
	}
	return "?"
}
