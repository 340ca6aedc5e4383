package refserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcptape/mcptape/internal/peertest"
)

// cancelChat is a long chat stream: 1000 deltas 10 ms apart.
var cancelChat = Chat{Chunks: 1000, Delay: 10 * time.Millisecond}

const (
	chatCancelFrame = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}`
	chatPingFrame   = `{"jsonrpc":"2.0","id":9,"method":"ping"}`
)

// chatCancelLink is one transport's side of TestChatCancelStopsStream.
type chatCancelLink struct {
	frames <-chan string // the server's frames, closed at the end of the answer's stream
	send   func(frame string)
	pinged bool // the ping's answer comes on frames
	ends   bool // frames is the chat call's own stream, which ends when cancelled
}

// TestChatCancelStopsStream calls the chat tool (id 7) over each
// transport, waits for two parts, and cancels the call
// (notifications/cancelled): the stream stops, no end result comes, at
// most one part that was already going out follows the cancellation
// (for stdio and WebSocket: the ping sent after the cancel is answered
// first), and the answer's own SSE stream ends.
func TestChatCancelStopsStream(t *testing.T) {
	tests := []struct {
		name string
		open func(t *testing.T, ctx context.Context) chatCancelLink
	}{
		{"stdio", openStdioChat},
		{"streamable http", func(t *testing.T, ctx context.Context) chatCancelLink { return openHTTPChat(t, false) }},
		{"streamable http stateless", func(t *testing.T, ctx context.Context) chatCancelLink { return openHTTPChat(t, true) }},
		{"langgraph http", openLangGraphChat},
		{"websocket", openWSChat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			checkChatCancel(t, tt.open(t, ctx))
		})
	}
}

func checkChatCancel(t *testing.T, l chatCancelLink) {
	t.Helper()
	next := func(wait time.Duration) (chatFrame, bool, bool) { // frame, got one, stream ended
		select {
		case d, ok := <-l.frames:
			if !ok {
				return chatFrame{}, false, true
			}
			var f chatFrame
			if err := json.Unmarshal([]byte(d), &f); err != nil {
				t.Fatalf("frame %q: %v", d, err)
			}
			return f, true, false
		case <-time.After(wait):
			return chatFrame{}, false, false
		}
	}
	for parts := 0; parts < 2; {
		f, ok, ended := next(10 * time.Second)
		if !ok {
			t.Fatalf("%d parts, then nothing (ended %v)", parts, ended)
		}
		if string(f.ID) == "7" {
			parts++
		}
	}
	l.send(chatCancelFrame)
	var after []string // the types of the parts after the cancellation
	if l.pinged {
		l.send(chatPingFrame)
		for {
			f, ok, _ := next(10 * time.Second)
			if !ok {
				t.Fatal("the ping sent after the cancel was not answered")
			}
			if string(f.ID) == "9" {
				break
			}
			if f.Result.Type == "content_end" {
				t.Fatal("the cancelled call got its end result")
			}
		}
	}
	ended := false
	for deadline := time.Now().Add(30 * cancelChat.Delay); time.Now().Before(deadline) && !ended; {
		var f chatFrame
		var ok bool
		if f, ok, ended = next(time.Until(deadline)); ok && string(f.ID) == "7" {
			after = append(after, f.Result.Type)
		}
	}
	if len(after) > 1 || (len(after) == 1 && after[0] != "content_delta") {
		t.Errorf("after the cancellation the stream went on: %d parts, the last %q", len(after), after[len(after)-1])
	}
	if l.ends && !ended {
		if _, _, ended = next(5 * time.Second); !ended {
			t.Error("the cancelled call's event stream did not end")
		}
	}
}

// lines sends each line (or "data:" payload, with sse) of r on the
// returned channel, closed at the end of r.
func lines(r io.Reader, sse bool) <-chan string {
	out := make(chan string, 10000)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l := sc.Text()
			if sse {
				var ok bool
				if l, ok = strings.CutPrefix(l, "data: "); !ok {
					continue
				}
			}
			out <- l
		}
	}()
	return out
}

func openStdioChat(t *testing.T, ctx context.Context) chatCancelLink {
	s := newServer(t, WithChat(cancelChat))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdioChat(ctx, s, cancelChat, inR, outW); outW.Close() }()
	t.Cleanup(func() {
		inW.Close() // EOF: the cancelled call is not waited for
		if err := <-done; err != nil {
			t.Errorf("ServeStdioChat: %v", err)
		}
	})
	send := func(frame string) {
		if _, err := fmt.Fprintln(inW, frame); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	frames := lines(outR, false)
	send(chatCallFrame("7", "q"))
	return chatCancelLink{frames: frames, send: send, pinged: true}
}

func openHTTPChat(t *testing.T, stateless bool) chatCancelLink {
	s := newServer(t, WithChat(cancelChat))
	ts := httptest.NewServer(HTTPHandler(s, HTTPConfig{Stateless: stateless, Chat: cancelChat}))
	t.Cleanup(ts.Close)
	sid := ""
	post := func(body string) *http.Response { return peertest.PostJSON(t, nil, ts.URL+Path, sid, "", body) }
	drain := func(resp *http.Response) {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if !stateless {
		resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		sid = resp.Header.Get("Mcp-Session-Id")
		drain(resp)
		if sid == "" {
			t.Fatal("no session id")
		}
		drain(post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	resp := post(chatCallFrame("7", "q"))
	t.Cleanup(func() { resp.Body.Close() })
	return chatCancelLink{frames: lines(resp.Body, true), send: func(frame string) { drain(post(frame)) }, ends: true}
}

func openLangGraphChat(t *testing.T, _ context.Context) chatCancelLink {
	ts := newLangGraphServer(t, cancelChat)
	frames := openStream(t, ts.URL)
	send := func(frame string) { postRaw(t, ts.URL+Path, frame) }
	send(chatCallFrame("7", "q"))
	return chatCancelLink{frames: frames, send: send}
}

func openWSChat(t *testing.T, ctx context.Context) chatCancelLink {
	ts := httptest.NewServer(WSHandlerWith(newServer(t, WithChat(cancelChat)), WSConfig{Chat: cancelChat}))
	t.Cleanup(ts.Close)
	c := wsDial(t, ctx, ts.URL, WSPath, nil)
	t.Cleanup(func() { c.CloseNow() })
	wsRoundTrip(t, ctx, c, wsInit, 1)
	send := func(frame string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	frames := make(chan string, 10000)
	go func() {
		defer close(frames)
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			frames <- string(data)
		}
	}()
	send(chatCallFrame("7", "q"))
	return chatCancelLink{frames: frames, send: send, pinged: true}
}
