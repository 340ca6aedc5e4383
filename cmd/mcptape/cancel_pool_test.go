package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
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

// A sessionless client with a pool of connections, recorded, inspected
// and replayed with the built commands: three chat calls stream at once,
// each on a connection of its own, and the client cancels one of them on
// yet another connection. The recorder puts the cancel in its call's
// session (capture/http_side.go), so inspect pairs it and replay sends
// it, rewritten, with its call.

// poolClient plays the client against url (the recorder's): the LangGraph
// dialect's (an event stream at GET /mcp/stream, a connection per POST,
// every POST answered 202 and the chunks on the stream) or a stateless
// Streamable HTTP one's (keep-alive connections, each call's chunks on
// its POST's event stream, holding its connection).
func poolClient(t *testing.T, url string, langGraph bool) {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: langGraph}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	post := func(body string) *http.Response {
		t.Helper()
		resp := peertest.PostJSON(t, c, url, "", "", body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %s", body, resp.Status)
		}
		return resp
	}
	drain := func(resp *http.Response) { _, _ = io.Copy(io.Discard, resp.Body); resp.Body.Close() }
	drain(post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pool","version":"1"}}}`))
	drain(post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	seen := &syncio.Lines{}
	var wg sync.WaitGroup
	defer wg.Wait()
	if langGraph {
		resp, err := (&http.Client{}).Get(strings.TrimSuffix(url, refserver.Path) + refserver.StreamPath)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close() // before wg.Wait: ends the scan
		wg.Add(1)
		go func() { defer wg.Done(); seen.Scan(resp.Body) }()
	}
	for _, id := range []int{2, 3, 4} {
		resp := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"chat","arguments":{"query":"hi there"}}}`, id))
		if langGraph {
			drain(resp)
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); seen.Scan(resp.Body) }()
	}
	for _, id := range []string{`"id":2,`, `"id":3,`, `"id":4,`} {
		waitSeen(t, seen, id, "content_delta") // all three are streaming
	}
	drain(post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"enough"}}`))
	waitSeen(t, seen, `"id":2,`, "content_end")
	waitSeen(t, seen, `"id":4,`, "content_end")
}

// waitSeen waits up to 10 s for a line of seen holding a and b.
func waitSeen(t *testing.T, seen *syncio.Lines, a, b string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !seen.Has(a, b); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no line with %s and %s within 10 s", a, b)
		}
	}
}

// TestSessionlessCancelOnAnotherConnection records the pooled client
// against the LangGraph dialect and a stateless Streamable HTTP server
// (mcptape serve), and checks the tape (the cancel in its call's
// session), inspect (the cancel pairs with its call, nothing unanswered)
// and replay against a fresh server (exit 0).
func TestSessionlessCancelOnAnotherConnection(t *testing.T) {
	chat := []string{"--stream-chunks", "40", "--chunk-delay", "10ms"}
	tests := []struct {
		name      string
		langGraph bool
		serve     func(t *testing.T) string // a fresh server's URL
	}{
		{"langgraph", true, func(t *testing.T) string {
			_, url := startLangGraph(t, chat[1], chat[3])
			return url
		}},
		{"stateless", false, func(t *testing.T) string {
			p := startServe(t, append([]string{"--http", "127.0.0.1:0", "--stateless"}, chat...)...)
			m := listeningRE.FindStringSubmatch(p.line(t))
			if m == nil {
				t.Fatal("first stderr line is not 'listening on http://ADDR/mcp'")
			}
			return m[1]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := filepath.Join(t.TempDir(), "pool.jsonl.zst")
			rec := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", tt.serve(t), "-o", tp)
			poolClient(t, rec.url, tt.langGraph)
			if err := rec.stop(); err != nil {
				t.Fatalf("record: %v\n%s", err, rec.stderr)
			}

			_, recs := readTapeFile(t, tp)
			sessions := map[string]string{} // request id or "cancel" -> session
			for _, r := range recs {
				if r.Type != tape.TypeMessage || r.Dir != tape.ClientToServer {
					continue
				}
				switch info := jsonrpc.Classify(r.Frame); {
				case info.Kind == jsonrpc.KindRequest:
					sessions[info.ID.Key()] = r.Session
				case info.Method == jsonrpc.MethodCancelled:
					sessions["cancel"] = r.Session
				}
			}
			if sessions["cancel"] != sessions["3"] || sessions["3"] == "" || sessions["3"] == sessions["2"] || sessions["3"] == sessions["4"] {
				t.Errorf("sessions %v: want the calls on three connections and the cancel in call 3's session", sessions)
			}

			_, out, stderr := runCLI(t, "", "inspect", "--format", "json", tp)
			var rep struct {
				Cancellations struct {
					Count         int64 `json:"count"`
					NotAnswered   int64 `json:"not_answered"`
					UnknownTarget int64 `json:"unknown_target"`
				} `json:"cancellations"`
				Unanswered struct {
					Count int64 `json:"count"`
				} `json:"unanswered"`
				Streams struct {
					Operations int64 `json:"operations"`
					Unfinished int64 `json:"unfinished"`
				} `json:"streams"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("inspect: %v\n%s%s", err, out, stderr)
			}
			if c := rep.Cancellations; c.Count != 1 || c.NotAnswered != 1 || c.UnknownTarget != 0 || rep.Unanswered.Count != 0 || rep.Streams.Unfinished != 0 {
				t.Errorf("inspect: cancellations %+v, %d unanswered, streams %+v: want one cancel of a call never answered, no stream unfinished",
					c, rep.Unanswered.Count, rep.Streams)
			}

			// One session at a time (the default): sessions replayed at
			// once against a sessionless server would have the same live
			// ids in flight, and the reference server stops every chat
			// call under a cancelled id.
			code, out, stderr := runCLI(t, "", "replay", tp, "--all", "--timeout", "10s", "--url", tt.serve(t))
			if code != 0 || strings.Contains(out, "not replayed") {
				t.Errorf("replay: exit %d, want 0 with the cancel sent\n%s%s", code, out, stderr)
			}
		})
	}
}
