package capture

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// scriptedServer is a small Streamable HTTP server with 2025 sessions: the
// initialize response (SSE with a priming event) assigns a session,
// notifications get 202, a batch gets a JSON array, GET opens a stream that
// sends one notification, DELETE ends the session.
func scriptedServer() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sid := r.Header.Get("Mcp-Session-Id")
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": stream open\n\nevent: message\nid: g-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
		case strings.Contains(string(body), `"initialize"`):
			w.Header().Set("Mcp-Session-Id", "sess-A")
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: prime\ndata: \n\nevent: message\nid: i-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n\n")
		case strings.HasPrefix(strings.TrimSpace(string(body)), "["):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"jsonrpc":"2.0","id":3,"result":{}},{"jsonrpc":"2.0","id":4,"result":{}}]`)
		case !strings.Contains(string(body), `"id"`):
			w.WriteHeader(http.StatusAccepted)
		case sid == "gone":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":9,"error":{"code":-32001,"message":"Session not found"}}`)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\nid: c-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n")
			fmt.Fprint(w, "event: message\nid: c-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n")
		}
	})
}

// TestHTTPRecordsSession drives one 2025 session through the proxy and
// checks every record.
func TestHTTPRecordsSession(t *testing.T) {
	up := upstream(t, scriptedServer())
	rig := startProxy(t, up.URL)
	c := freshClient(t)
	url := rig.url + "/mcp"
	resp := peertest.PostJSON(t, c, url, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	peertest.ReadAnswer(t, resp)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "sess-A" {
		t.Fatalf("session header %q reached the client", sid)
	}
	peertest.ReadAnswer(t, peertest.PostJSON(t, c, url, "sess-A", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	peertest.ReadAnswer(t, peertest.PostJSON(t, c, url, "sess-A", "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"t"}}}`))
	peertest.ReadAnswer(t, peertest.PostJSON(t, c, url, "sess-A", "", ` [{"jsonrpc":"2.0","id":3,"method":"ping"}, {"jsonrpc":"2.0","id":4,"method":"ping"}] `))
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Mcp-Session-Id", "sess-A")
	peertest.ReadAnswer(t, mustDo(t, c, req))
	req, _ = http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", "sess-A")
	peertest.ReadAnswer(t, mustDo(t, c, req))
	peertest.ReadAnswer(t, peertest.PostJSON(t, c, url, "gone", "", `{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	recs := waitEnded(t, rig, 7)

	type row struct {
		Exchange uint64
		Dir      tape.Direction
		Stream   string
		EventID  string
		Session  string
		Frame    string
	}
	var got []row
	for _, m := range msgs(recs, "") {
		got = append(got, row{m.Exchange, m.Dir, m.Stream, m.EventID, m.Session, string(m.Frame)})
	}
	c2s, s2c := tape.ClientToServer, tape.ServerToClient
	want := []row{
		{1, c2s, "post", "", "sess-A", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		{1, s2c, "post", "i-1", "sess-A", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`},
		{2, c2s, "post", "", "sess-A", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{3, c2s, "post", "", "sess-A", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"t"}}}`},
		{3, s2c, "post", "c-1", "sess-A", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`},
		{3, s2c, "post", "c-2", "sess-A", `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
		{4, c2s, "post", "", "sess-A", `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
		{4, c2s, "post", "", "sess-A", `{"jsonrpc":"2.0","id":4,"method":"ping"}`},
		{4, s2c, "post", "", "sess-A", `{"jsonrpc":"2.0","id":3,"result":{}}`},
		{4, s2c, "post", "", "sess-A", `{"jsonrpc":"2.0","id":4,"result":{}}`},
		{5, s2c, "get", "g-1", "sess-A", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{7, c2s, "post", "", "gone", `{"jsonrpc":"2.0","id":9,"method":"ping"}`},
		{7, s2c, "post", "", "gone", `{"jsonrpc":"2.0","id":9,"error":{"code":-32001,"message":"Session not found"}}`},
	}
	if !slices.Equal(got, want) {
		t.Errorf("messages:\n%s", diffRows(got, want))
	}

	// A session's open event comes first in time too.
	opened := map[string]int64{}
	for _, r := range events(recs, tape.EventOpen) {
		opened[r.Session] = r.Time
	}
	for _, r := range recs {
		if at, ok := opened[r.Session]; ok && r.Time < at {
			t.Errorf("%s %s record at %d, before its session opened at %d", r.Type, r.Event, r.Time, at)
		}
	}
	// Every record of an exchange but the session events belongs to it.
	for _, r := range recs {
		if r.Event != tape.EventOpen && r.Event != tape.EventClose && r.Exchange == 0 {
			t.Errorf("record without exchange: %+v", r)
		}
	}
	// The initialize exchange: open, request, response event, messages, end.
	var first []string
	for _, r := range recs {
		if r.Exchange == 1 {
			first = append(first, string(r.Type)+":"+r.Event)
		}
	}
	if strings.Join(first, " ") != "event:open message: event:http event:sse message: event:http" {
		t.Errorf("records of the initialize exchange: %v", first)
	}
	resp1 := httpEvents(t, recs, "response")
	if len(resp1) != 7 || resp1[0].Status != 200 || resp1[0].ContentType != "text/event-stream" ||
		resp1[0].ResponseHeaders.Get("Mcp-Session-Id") != "sess-A" || resp1[0].RequestHeaders.Get("Accept") == "" {
		t.Errorf("response events %+v", resp1)
	}
	ends := httpEvents(t, recs, "end")
	statuses := []int{}
	for _, e := range ends {
		statuses = append(statuses, e.Status)
	}
	if !slices.Equal(statuses, []int{200, 202, 200, 200, 200, 200, 404}) {
		t.Errorf("statuses %v", statuses)
	}
	if ends[3].Batch != 2 || ends[3].Messages != 2 || ends[2].Messages != 2 || ends[4].Comments != 1 {
		t.Errorf("end events %+v", ends)
	}
	var sessEvents []string
	for _, r := range recs {
		if r.Event == tape.EventOpen || r.Event == tape.EventClose {
			var d HTTPSessionEvent
			json.Unmarshal(r.Data, &d)
			sessEvents = append(sessEvents, fmt.Sprintf("%s %s %s/%s %s/%s", r.Event, r.Session, d.Kind, d.How, d.By, d.Reason))
		}
	}
	wantSess := []string{
		"open sess-A streamable/assigned /",
		"close sess-A / client/delete",
		"open gone streamable/request /",
		"close gone / server/not-found",
	}
	if !slices.Equal(sessEvents, wantSess) {
		t.Errorf("session events:\n%s\nwant\n%s", strings.Join(sessEvents, "\n"), strings.Join(wantSess, "\n"))
	}
	if st := rig.proxy.Stats(); st.Exchanges != 7 || st.ClientMessages != 6 || st.ServerMessages != 7 {
		t.Errorf("stats %+v", st)
	}
}

func diffRows[T any](got, want []T) string {
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		var g, w any = "-", "-"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if fmt.Sprint(g) != fmt.Sprint(w) {
			mark = "! "
		}
		fmt.Fprintf(&b, "%s got  %v\n%s want %v\n", mark, g, mark, w)
	}
	return b.String()
}

// TestHTTPStatelessConnections: exchanges without any session id are
// grouped by client connection, and the group closes with it.
func TestHTTPStatelessConnections(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Mcp-Method") == "" {
			http.Error(w, "no Mcp-Method", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"got":%s}}`, body)
	}))
	rig := startProxy(t, up.URL)
	post := func(c *http.Client, body string) {
		req, _ := http.NewRequest("POST", rig.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "echo")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		peertest.ReadAnswer(t, mustDo(t, c, req))
	}
	a, b := freshClient(t), freshClient(t)
	post(a, `"a1"`)
	post(b, `"b1"`)
	post(a, `"a2"`)
	a.Transport.(*http.Transport).CloseIdleConnections()
	recs := waitEnded(t, rig, 3)
	waitFor(t, func() bool { recs = rig.tape.records(); return len(events(recs, tape.EventClose)) == 1 })
	bySession := map[string]string{}
	for _, m := range msgs(recs, tape.ClientToServer) {
		bySession[m.Session] += string(m.Frame)
	}
	if bySession["conn-1"] != `"a1""a2"` || bySession["conn-2"] != `"b1"` {
		t.Errorf("grouping %v", bySession)
	}
	cl := events(recs, tape.EventClose)
	if cl[0].Session != "conn-1" || !strings.Contains(string(cl[0].Data), "connection-closed") {
		t.Errorf("close %+v %s", cl[0], cl[0].Data)
	}
	resp := httpEvents(t, recs, "response")
	if resp[0].RequestHeaders.Get("Mcp-Method") != "tools/call" || resp[0].RequestHeaders.Get("Mcp-Name") != "echo" {
		t.Errorf("2026-07-28 headers not recorded: %v", resp[0].RequestHeaders)
	}
}

// legacyServer is a legacy HTTP+SSE server: GET /sse sends the endpoint
// (absolute when absolute is set) and then every answer; POST
// /message?sessionId= gets 202.
type legacyServer struct {
	absolute bool
	base     string // the server's own URL, for absolute endpoints
	mu       sync.Mutex
	streams  map[string]chan string
}

func (l *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/sse":
		id := fmt.Sprintf("L%d", time.Now().UnixNano())
		ch := make(chan string, 4)
		l.mu.Lock()
		l.streams[id] = ch
		l.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		ep := "/message?sessionId=" + id
		if l.absolute {
			ep = l.base + ep
		}
		fmt.Fprintf(w, ": hello\n\nevent: endpoint\r\ndata: %s\r\n\r\n", ep)
		w.(http.Flusher).Flush()
		for {
			select {
			case msg := <-ch:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case "/message":
		body, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		ch := l.streams[r.URL.Query().Get("sessionId")]
		l.mu.Unlock()
		if ch == nil {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "Accepted")
		var m struct{ ID int }
		json.Unmarshal(body, &m)
		ch <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, m.ID)
	default:
		http.NotFound(w, r)
	}
}

// TestHTTPLegacySSE: the endpoint event is rewritten when it names the
// upstream by absolute URL, the client's POSTs come through the proxy, and
// everything is recorded in the session of the sessionId parameter.
func TestHTTPLegacySSE(t *testing.T) {
	for _, absolute := range []bool{false, true} {
		t.Run(fmt.Sprintf("absolute=%v", absolute), func(t *testing.T) {
			ls := &legacyServer{absolute: absolute, streams: map[string]chan string{}}
			up := upstream(t, ls)
			ls.base = up.URL
			rig := startProxy(t, up.URL)
			c := freshClient(t)
			resp, err := c.Get(rig.url + "/sse")
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(resp.Body)
			var endpoint string
			for endpoint == "" {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
					endpoint = d
				}
			}
			target := endpoint
			if absolute {
				if !strings.HasPrefix(endpoint, rig.url+"/message?sessionId=L") {
					t.Fatalf("endpoint %q does not point at the proxy %s", endpoint, rig.url)
				}
			} else {
				if !strings.HasPrefix(endpoint, "/message?sessionId=L") {
					t.Fatalf("relative endpoint changed: %q", endpoint)
				}
				target = rig.url + endpoint
			}
			for id := 1; id <= 2; id++ {
				r := peertest.PostJSON(t, c, target, "", "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
				if body := peertest.ReadAnswer(t, r); r.StatusCode != http.StatusAccepted || body != "Accepted" {
					t.Fatalf("POST: %d %q", r.StatusCode, body)
				}
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						t.Fatal(err)
					}
					if strings.HasPrefix(line, "data: ") {
						if want := fmt.Sprintf(`"id":%d`, id); !strings.Contains(line, want) {
							t.Fatalf("answer %q, want %s", line, want)
						}
						break
					}
				}
			}
			resp.Body.Close()
			recs := waitEnded(t, rig, 3)
			sid := endpoint[strings.Index(endpoint, "sessionId=")+len("sessionId="):]
			for _, m := range msgs(recs, "") {
				if m.Session != sid {
					t.Errorf("message in session %q, want %q: %s", m.Session, sid, m.Frame)
				}
				if m.Dir == tape.ServerToClient && m.Stream != StreamSSE || m.Dir == tape.ClientToServer && m.Stream != StreamPOST {
					t.Errorf("message on stream %q: %s", m.Stream, m.Frame)
				}
			}
			if n := len(msgs(recs, "")); n != 4 {
				t.Errorf("%d messages, want 4", n)
			}
			var note SSENote
			comments := 0
			for _, r := range events(recs, EventSSE) {
				var n SSENote
				json.Unmarshal(r.Data, &n)
				if r.Session != sid { // the ": hello" comment came before the endpoint named it
					t.Errorf("%s note in session %q, want %q", n.Kind, r.Session, sid)
				}
				if n.Kind == "comment" {
					comments++
				}
				if n.Kind == "endpoint" && note.Kind == "" {
					note = n
				}
			}
			if comments != 1 {
				t.Errorf("%d comment notes, want 1", comments)
			}
			if note.Kind != "endpoint" || note.Data != endpoint || (absolute != (note.Original != "")) {
				t.Errorf("endpoint note %+v", note)
			}
			closes := events(recs, tape.EventClose)
			if len(closes) != 1 || closes[0].Session != sid || !strings.Contains(string(closes[0].Data), `"client"`) {
				t.Errorf("close events %+v", closes)
			}
		})
	}
}

// TestHTTPRedaction: secrets never reach the tape, and always reach the
// upstream and the client unchanged.
func TestHTTPRedaction(t *testing.T) {
	got := make(chan seen, 1)
	up := upstream(t, mirror(got))
	secretHeaders := http.Header{
		"Authorization":       {"Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig"},
		"Cookie":              {"sid=abc123"},
		"X-Api-Key":           {"k-1234567890"},
		"X-Github-Token":      {"ghp_xyz"},
		"X-Client-Secret":     {""},
		"X-Tenant":            {"tenant-7"},
		"X-Want-Header":       {"Set-Cookie: session=s3cr3t"},
		"Proxy-Authorization": {"Basic dXNlcjpwYXNz"}, // hop-by-hop: dropped, but never recorded
	}
	tests := []struct {
		name     string
		opts     []HTTPOption
		redacted []string // header values that must not appear
		kept     []string // values that must appear
	}{
		{"default", nil,
			[]string{"payload.sig", "abc123", "k-1234567890", "ghp_xyz", "dXNlcjpwYXNz", "hunter2"},
			[]string{"tenant-7", "Bearer <redacted:32-63>", "<redacted:0>", "api_key=%3Credacted%3A4-7%3E", "page=2"}},
		{"extra name", []HTTPOption{WithRedactHeaders("x-tenant")},
			[]string{"tenant-7", "payload.sig"}, []string{"<redacted:8-15>"}},
		{"off", []HTTPOption{WithoutRedaction()},
			nil, []string{"payload.sig", "abc123", "tenant-7", "s3cr3t", "hunter2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := startProxy(t, up.URL, tt.opts...)
			req, _ := http.NewRequest("POST", rig.url+"/mcp?api_key=hunter2&page=2", strings.NewReader(`{}`))
			req.Header = secretHeaders.Clone()
			resp := mustDo(t, freshClient(t), req)
			peertest.ReadAnswer(t, resp)
			s := <-got
			for _, h := range []string{"Authorization", "Cookie", "X-Api-Key", "X-Github-Token", "X-Tenant"} {
				if s.Header.Get(h) != secretHeaders.Get(h) {
					t.Errorf("upstream got %s %q, want %q", h, s.Header.Get(h), secretHeaders.Get(h))
				}
			}
			if s.URI != "/mcp?api_key=hunter2&page=2" || resp.Header.Get("Set-Cookie") != "session=s3cr3t" {
				t.Errorf("traffic altered: %q %q", s.URI, resp.Header.Get("Set-Cookie"))
			}
			recs := waitEnded(t, rig, 1)
			cookie := httpEvents(t, recs, "response")[0].ResponseHeaders.Get("Set-Cookie")
			if redacted := strings.HasPrefix(cookie, "<redacted:"); redacted == (tt.name == "off") {
				t.Errorf("Set-Cookie recorded as %q", cookie)
			}
			var all strings.Builder
			for _, r := range recs {
				all.Write(r.Data)
			}
			for _, v := range tt.redacted {
				if strings.Contains(all.String(), v) {
					t.Errorf("the tape holds %q", v)
				}
			}
			for _, v := range tt.kept {
				if !strings.Contains(all.String(), v) {
					t.Errorf("the tape lacks %q:\n%s", v, all.String())
				}
			}
		})
	}
}
