package main

// Streamed answers over WebSocket, in the flavour of the LangGraph MCP
// docs' WebSocket example: a client at ws://HOST/mcp/ws offering no
// subprotocol, one JSON-RPC message per text frame, the chat tool's
// chunks each a frame of their own.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/loadgen"
)

// chatQueries are the two chat calls wsChat sends back to back, by id.
var chatQueries = map[string]string{`3`: "What is the weather?", `"four"`: "Hello there"}

// wsChatResult is what wsChat saw.
type wsChatResult struct {
	subprotocol string
	tools       string              // the tools/list answer
	order       []string            // the ids of the chat answers' frames, in arrival order
	types       map[string][]string // the result types of each id's frames
	text        map[string]string   // each id's joined deltas
}

// wsChat is a client like the docs' example, with coder/websocket: it
// connects to url offering protos (none when nil), initializes, lists the
// tools, sends the two chatQueries back to back and reads until both
// answers have ended.
func wsChat(t *testing.T, url string, protos []string) wsChatResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	defer c.CloseNow()
	res := wsChatResult{subprotocol: c.Subprotocol(), types: map[string][]string{}, text: map[string]string{}}
	send := func(frame string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	type frame struct {
		ID     json.RawMessage
		Result json.RawMessage
	}
	recv := func() frame {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var f frame
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("frame %s: %v", data, err)
		}
		return f
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"go-ws","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	res.tools = string(recv().Result)
	for _, id := range []string{`3`, `"four"`} {
		send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"chat","arguments":{"query":"` + chatQueries[id] + `"}}}`)
	}
	for ended := 0; ended < 2; {
		f := recv()
		var r struct{ Type, Delta string }
		_ = json.Unmarshal(f.Result, &r)
		id := string(f.ID)
		res.order = append(res.order, id)
		res.types[id] = append(res.types[id], r.Type)
		res.text[id] += r.Delta
		if r.Type == "content_end" {
			ended++
		}
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Errorf("close: %v", err)
	}
	return res
}

// check checks that both answers came whole, chunks chunks each, and
// interleaved.
func (r wsChatResult) check(t *testing.T, chunks int) {
	t.Helper()
	for id, q := range chatQueries {
		types := r.types[id]
		want := append(append([]string{"content_start"}, strings.Split(strings.Repeat("content_delta,", chunks), ",")[:chunks]...), "content_end")
		if strings.Join(types, " ") != strings.Join(want, " ") {
			t.Errorf("id %s: frames %v, want %v", id, types, want)
		}
		if r.text[id] != refserver.ChatAnswer(q) {
			t.Errorf("id %s: joined deltas %q", id, r.text[id])
		}
	}
	switches := 0
	for i := 1; i < len(r.order); i++ {
		if r.order[i] != r.order[i-1] {
			switches++
		}
	}
	if switches < 2 {
		t.Errorf("the answers did not interleave: %v", r.order)
	}
}

// wsPath turns serveWS's ws://ADDR/mcp into ws://ADDR/mcp/ws.
func wsPath(url string) string { return strings.TrimSuffix(url, refserver.Path) + refserver.WSPath }

// TestServeWSChat: `serve --ws --stream-chunks` streams the chat tool to
// clients with and without a subprotocol, at /mcp and /mcp/ws, the Go
// client and an independent Python one (stdlib only, like the docs'
// example).
func TestServeWSChat(t *testing.T) {
	const chunks = 8
	url := serveWS(t, "--stream-chunks", "8", "--chunk-delay", "15ms")
	tests := []struct {
		name    string
		url     string
		protos  []string
		wantSub string
		python  bool
	}{
		{"go, no subprotocol, /mcp/ws", wsPath(url), nil, "", false},
		{"go, mcp, /mcp", url, []string{"mcp"}, "mcp", false},
		{"python, no subprotocol, /mcp/ws", wsPath(url), nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.python {
				checkPythonWSClient(t, tt.url, chunks)
				return
			}
			r := wsChat(t, tt.url, tt.protos)
			if r.subprotocol != tt.wantSub || !strings.Contains(r.tools, `"chat"`) {
				t.Errorf("subprotocol %q (want %q), tools %.100s", r.subprotocol, tt.wantSub, r.tools)
			}
			r.check(t, chunks)
		})
	}
}

// checkPythonWSClient runs testdata/streampeer/ws_client.py against url
// and checks what it saw.
func checkPythonWSClient(t *testing.T, url string, chunks int) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found (make sysdeps installs it): the Python WebSocket client cannot run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, filepath.Join("..", "..", "testdata", "streampeer", "ws_client.py"), url).Output()
	if err != nil {
		t.Fatalf("ws_client.py: %v\n%s", err, out)
	}
	var got struct {
		Subprotocol string
		Tools       []string
		Answers     map[string]struct {
			Frames int
			Text   string
			Ended  bool
		}
		Interleaved bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ws_client.py printed %s: %v", out, err)
	}
	for id, q := range map[string]string{"3": chatQueries[`3`], "four": chatQueries[`"four"`]} {
		a := got.Answers[id]
		if !a.Ended || a.Frames != chunks+2 || a.Text != refserver.ChatAnswer(q) {
			t.Errorf("id %s: %+v", id, a)
		}
	}
	if got.Subprotocol != "" || !strings.Contains(strings.Join(got.Tools, ","), "chat") || !got.Interleaved {
		t.Errorf("ws_client.py saw %s", out)
	}
}

// TestStreamedOverWebSocket records chat sessions of clients without a
// subprotocol at /mcp/ws through `mcptape record --upstream ws://...`
// (the Go client and the Python one), inspects the tape, replays it over
// WebSocket (exit 0), and against a server whose streams stop before
// their end (exit 1, soon) or that drops the connection there (exit 2).
func TestStreamedOverWebSocket(t *testing.T) {
	upstream := wsPath(serveWS(t, "--stream-chunks", "3", "--chunk-delay", "20ms")) // long enough to interleave
	out := filepath.Join(t.TempDir(), "ws.jsonl.zst")
	rec, proxy := startWSRecord(t, upstream, out)
	if !strings.HasSuffix(proxy, refserver.WSPath) {
		t.Fatalf("the recorder proxies at %s, want the upstream's path", proxy)
	}
	wsChat(t, proxy, nil).check(t, 3)
	sessions := int64(1)
	if _, err := exec.LookPath("python3"); err == nil {
		checkPythonWSClient(t, proxy, 3)
		sessions++
	}
	stopWSRecord(t, rec)

	_, stdout, stderr := runCLI(t, "", "inspect", "--format", "json", out)
	var rep streamFigures
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("inspect: %v: %s %s", err, stdout, stderr)
	}
	if st := rep.Streams; st == nil || st.Operations != 2*sessions || st.Unfinished != 0 || st.AfterEnd != 0 || st.Chunks != 2*sessions*5 || st.Usage.TotalTokens == 0 {
		t.Errorf("streams %+v, want %d whole answers of 5 parts", rep.Streams, 2*sessions)
	}
	for _, v := range rep.Violations {
		if v.Rule == "response-unknown-id" {
			t.Errorf("streamed parts reported as %s ×%d", v.Rule, v.Count)
		}
	}

	tests := []struct {
		name string
		url  string
		args []string
		code int
		want string
	}{
		{"whole", upstream, []string{"--ws-subprotocol", ""}, 0, "streamed answers"},
		{"whole, offering mcp", upstream, nil, 0, "streamed answers"},
		{"end parts withheld", cutRelay(t, upstream, false), []string{"--timeout", "2s"}, 1, "unfinished"},
		// A server gone is a failed replay (exit 2), its streams still
		// reported unfinished.
		{"connection dropped before the end", cutRelay(t, upstream, true), []string{"--timeout", "2s"}, 2, "without its end part"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			args := append([]string{"replay", out, "--all", "--speed", "max", "--url", tt.url}, tt.args...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != tt.code || !strings.Contains(stdout, tt.want) {
				t.Errorf("replay: exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, tt.want, stdout, stderr)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("replay took %v", took)
			}
		})
	}
}

// cutRelay serves a WebSocket relay to upstream for the test and returns
// its URL (the upstream's path): it passes every frame on, except the
// chat answers' end parts, which it withholds, or, with hangup, at the
// first of which it drops the client's connection.
func cutRelay(t *testing.T, upstream string, hangup bool) string {
	t.Helper()
	ts := httptest.NewServer(wsAccepting(func(ctx context.Context, client *websocket.Conn) {
		up, _, err := websocket.Dial(ctx, upstream, nil)
		if err != nil {
			t.Errorf("relay: dial %s: %v", upstream, err)
			return
		}
		defer up.CloseNow()
		go func() { // client to upstream
			for {
				typ, data, err := client.Read(ctx)
				if err != nil || up.Write(ctx, typ, data) != nil {
					_ = up.Close(websocket.StatusNormalClosure, "")
					return
				}
			}
		}()
		for {
			typ, data, err := up.Read(ctx)
			if err != nil {
				return
			}
			if strings.Contains(string(data), `"type":"content_end"`) {
				if hangup {
					return // the handler's CloseNow drops the connection
				}
				continue
			}
			if client.Write(ctx, typ, data) != nil {
				return
			}
		}
	}))
	t.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http") + refserver.WSPath
}

// wsAccepting is a handler accepting WebSocket clients (selecting no
// subprotocol) and serving each with fn.
func wsAccepting(fn func(ctx context.Context, c *websocket.Conn)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return // Accept answered
		}
		defer c.CloseNow()
		fn(r.Context(), c)
	})
}

// TestLoadWebSocketChat: `load --url ws://.../mcp/ws` without a
// subprotocol, with the chat tool of `serve --ws --stream-chunks`, reports
// the "first chunk" and "complete" series and the tokens, and the
// thresholds on them hold.
func TestLoadWebSocketChat(t *testing.T) {
	url := wsPath(serveWS(t, "--stream-chunks", "4", "--chunk-delay", "5ms"))
	code, stdout, stderr := runCLI(t, "", "load", "--url", url, "--ws-subprotocol", "", "-q", "--json", "-",
		"--sessions", "2", "--inflight", "3", "--requests", "24", "--call", `tools/call chat {"query":"hi there"}`,
		"--threshold", "tools/call chat#first_chunk:p99<20s", "--threshold", "tools/call chat#complete:count>=24",
		"--threshold", "tools/call chat:tokens_per_s>0")
	if code != 0 {
		t.Fatalf("load: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var rep loadgen.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout)
	}
	series := map[string]loadgen.Series{}
	for _, s := range rep.Series {
		series[s.Name] = s
	}
	first, complete, chat := series["tools/call chat"+loadgen.FirstChunkSuffix], series["tools/call chat"+loadgen.CompleteSuffix], series["tools/call chat"]
	if rep.Answered != 24 || rep.ErrorTotal != 0 || first.Count != 24 || complete.Count != 24 || chat.Tokens == 0 {
		t.Fatalf("answered %d, errors %d, first chunk %d, complete %d, tokens %d\n%s", rep.Answered, rep.ErrorTotal, first.Count, complete.Count, chat.Tokens, stderr)
	}
	// Four deltas 5 ms apart come after the first chunk.
	checkFirstBeforeEnd(t, &first, &complete)
	if complete.Min < 20*time.Millisecond {
		t.Errorf("complete min %v: want the end after the four deltas' 20 ms", complete.Min)
	}
}
