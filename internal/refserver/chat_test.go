package refserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// chatFrame is one answer frame of a chat stream.
type chatFrame struct {
	ID     json.RawMessage `json:"id"`
	Result struct {
		Type           string     `json:"type"`
		Delta          string     `json:"delta"`
		ConversationID string     `json:"conversation_id"`
		Usage          *chatUsage `json:"usage"`
	} `json:"result"`
}

// checkChatStream checks the frames of one id: start, n deltas in order,
// end with usage.
func checkChatStream(t *testing.T, id, query string, n int, frames []chatFrame) {
	t.Helper()
	if len(frames) != n+2 {
		t.Fatalf("id %s: %d frames, want %d", id, len(frames), n+2)
	}
	if frames[0].Result.Type != "content_start" {
		t.Errorf("id %s: first frame type %q, want content_start", id, frames[0].Result.Type)
	}
	var joined strings.Builder
	for i := 1; i <= n; i++ {
		f := frames[i].Result
		if f.Type != "content_delta" {
			t.Errorf("id %s: frame %d = %+v, want a delta", id, i, f)
		}
		joined.WriteString(f.Delta)
	}
	if joined.String() != ChatAnswer(query) {
		t.Errorf("id %s: joined deltas %q, want %q", id, joined.String(), ChatAnswer(query))
	}
	end := frames[n+1].Result
	want := chatUsageFor(query)
	if end.Type != "content_end" || end.Usage == nil || *end.Usage != want {
		t.Errorf("id %s: end frame %+v, want content_end with usage %+v", id, end, want)
	}
}

func chatCallFrame(id, query string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"chat","arguments":{"query":%q}}}`, id, query)
}

func TestChatStdioStreamsEachCallAndAnswersAllAtEOF(t *testing.T) {
	chat := Chat{Chunks: 3, Delay: time.Millisecond}
	s := newServer(t, WithChat(chat))
	calls := map[string]string{`1`: "hello world", `"a"`: "quantum computing now"}
	var in strings.Builder
	for id, q := range calls {
		in.WriteString(chatCallFrame(id, q) + "\n")
	}
	in.WriteString(`{"jsonrpc":"2.0","id":9,"method":"ping"}` + "\n")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ServeStdioChat(ctx, s, chat, strings.NewReader(in.String()), &out); err != nil {
		t.Fatalf("ServeStdioChat: %v", err)
	}
	byID := map[string][]chatFrame{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var f chatFrame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("bad frame %q: %v", sc.Text(), err)
		}
		byID[string(f.ID)] = append(byID[string(f.ID)], f)
	}
	for id, q := range calls {
		checkChatStream(t, id, q, chat.Chunks, byID[id])
	}
	if len(byID["9"]) != 1 {
		t.Errorf("ping got %d answers, want 1 (the SDK's)", len(byID["9"]))
	}
}

func TestChatStdioCutStreamHasNoEnd(t *testing.T) {
	chat := Chat{Chunks: 1000, Delay: 5 * time.Millisecond}
	s := newServer(t, WithChat(chat))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ServeStdioChat(ctx, s, chat, inR, outW); outW.Close() }()
	go fmt.Fprintln(inW, chatCallFrame("7", "q"))
	sc := bufio.NewScanner(outR)
	var types []string
	for sc.Scan() {
		var f chatFrame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("bad frame: %v", err)
		}
		types = append(types, f.Result.Type)
		if len(types) == 3 {
			cancel()
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("ServeStdioChat: %v", err)
	}
	if len(types) < 3 || len(types) >= 1002 || types[len(types)-1] == "content_end" {
		t.Errorf("cut stream frames %v: want a start and some deltas, no end", types)
	}
}

func TestChatHTTPStreamsSSEAndPassesOtherPosts(t *testing.T) {
	chat := Chat{Chunks: 4}
	s := newServer(t, WithChat(chat))
	ts := httptest.NewServer(HTTPHandler(s, HTTPConfig{Stateless: true, Chat: chat}))
	defer ts.Close()
	post := func(body string) *http.Response {
		t.Helper()
		return peertest.PostJSON(t, nil, ts.URL+Path, "", "", body)
	}
	resp := post(chatCallFrame(`"r1"`, "hi there"))
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q, want text/event-stream", ct)
	}
	var frames []chatFrame
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var f chatFrame
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			t.Fatalf("bad event %q: %v", data, err)
		}
		frames = append(frames, f)
	}
	checkChatStream(t, `"r1"`, "hi there", chat.Chunks, frames)

	other := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	b, _ := io.ReadAll(other.Body)
	other.Body.Close()
	if other.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"serverInfo"`)) {
		t.Errorf("initialize through the chat wrapper: %d %s", other.StatusCode, b)
	}
}

func TestChatOptionChecks(t *testing.T) {
	for _, c := range []Chat{{Chunks: 0}, {Chunks: -1}, {Chunks: MaxChatChunks + 1}, {Chunks: 1, Delay: -1}} {
		if _, err := New(WithChat(c)); err == nil {
			t.Errorf("New(WithChat(%+v)) = nil error", c)
		}
	}
}

func TestChatDeltasJoinWhateverTheirNumber(t *testing.T) {
	for _, n := range []int{1, 2, 7, 300} {
		d := ChatDeltas("héllo wörld", n)
		if len(d) != n || strings.Join(d, "") != ChatAnswer("héllo wörld") {
			t.Errorf("n=%d: %d deltas joining to %q", n, len(d), strings.Join(d, ""))
		}
	}
}
