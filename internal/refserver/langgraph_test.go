package refserver

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func newLangGraphServer(t *testing.T, chat Chat) *httptest.Server {
	t.Helper()
	s := newServer(t, WithChat(chat))
	ts := httptest.NewServer(HTTPHandler(s, HTTPConfig{LangGraph: true, Chat: chat}))
	t.Cleanup(ts.Close)
	return ts
}

// postRaw POSTs body with no Accept header and no session, as the LangGraph
// docs' clients do, and returns the status, content type and body.
func postRaw(t *testing.T, url, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestLangGraphPostsArePlainJSONWithoutSession(t *testing.T) {
	ts := newLangGraphServer(t, Chat{Chunks: 3})
	tests := []struct {
		name, body string
		status     int
		want       []string // substrings of the answer
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
			200, []string{`"id":1`, `"protocolVersion":"2024-11-05"`}},
		{"no initialize needed", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 200, []string{`"name":"chat"`}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"resources/list"},{"jsonrpc":"2.0","id":3,"method":"prompts/list"}]`,
			200, []string{`[{"jsonrpc":"2.0","id":`, `"id":1,`, `"id":2,`, `"id":3,`}}, // in any order
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, nil},
		{"chat with no stream open: one plain result", chatCallFrame("3", "Hello!"),
			200, []string{`"id":3`, `"text":` + mustJSON(t, ChatAnswer("Hello!"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := postRaw(t, ts.URL+Path, tt.body)
			if status != tt.status {
				t.Fatalf("status %d, want %d (%s)", status, tt.status, body)
			}
			if sid := h.Get("Mcp-Session-Id"); sid != "" {
				t.Errorf("Mcp-Session-Id %q, want none", sid)
			}
			if tt.status == 200 && !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("content type %q, want application/json", h.Get("Content-Type"))
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("answer %s lacks %s", body, w)
				}
			}
		})
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(m, ts.URL+Path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 405", m, Path, resp.StatusCode)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// openStream opens GET StreamPath and returns its "data:" payloads.
func openStream(t *testing.T, url string) <-chan string {
	t.Helper()
	resp, err := http.Get(url + StreamPath)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %d %q", StreamPath, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan string, 1000)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- d
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return out
}

func TestLangGraphChatChunksTravelOnTheStreamToEveryListener(t *testing.T) {
	const n = 4
	ts := newLangGraphServer(t, Chat{Chunks: n, Delay: 5 * time.Millisecond})
	streams := []<-chan string{openStream(t, ts.URL), openStream(t, ts.URL)}
	ids := []string{`"a"`, `"b"`, `7`}
	var wg sync.WaitGroup
	for _, id := range ids { // concurrent calls: their chunks interleave
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, body := postRaw(t, ts.URL+Path, chatCallFrame(id, "q"+id))
			if status != http.StatusAccepted || body != "" {
				t.Errorf("chat %s: %d %q, want 202 and no body", id, status, body)
			}
		}()
	}
	wg.Wait()
	for si, st := range streams {
		byID := map[string][]chatFrame{}
		for got := 0; got < len(ids)*(n+2); got++ {
			select {
			case d, ok := <-st:
				if !ok {
					t.Fatalf("stream %d ended after %d frames", si, got)
				}
				var f chatFrame
				if err := json.Unmarshal([]byte(d), &f); err != nil {
					t.Fatalf("stream %d: %q: %v", si, d, err)
				}
				byID[string(f.ID)] = append(byID[string(f.ID)], f)
			case <-time.After(10 * time.Second):
				t.Fatalf("stream %d: %d frames after 10s", si, got)
			}
		}
		for _, id := range ids {
			checkChatStream(t, id, "q"+id, n, byID[id])
		}
	}
}
