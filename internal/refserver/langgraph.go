package refserver

// The HTTP dialect of the LangGraph MCP server's documentation ("MCP
// Messages"): its examples POST JSON-RPC to /mcp and read plain JSON
// back, with no session id and batches in one POST, and a client reads
// the server's messages from an EventSource on another path,
// new EventSource('/mcp/stream'). The documentation says nothing more, so
// this peer is what a server built from it would plausibly be:
//
//   - POST /mcp: one message or a batch, answered by the SDK in stateless
//     mode with application/json (202 for notifications alone). Whatever
//     the client sends in Accept, Mcp-Session-Id or MCP-Protocol-Version
//     is ignored: the documentation's clients send none of them, and
//     batches are always accepted.
//   - GET /mcp/stream: an event stream (text/event-stream, one "data:"
//     line per message, no event name, as EventSource.onmessage reads
//     them) of the server's messages. The documentation gives a
//     sessionless server no way to tell its clients apart, so every open
//     stream gets every message: a client picks its answers by id (the
//     documentation's advice to use unique ids, uuid4, is what makes this
//     work with several clients).
//   - Streamed answers ("Streaming Messages": content_start, deltas,
//     content_end under the request's id) travel on the stream, all of
//     them: a POST holding one chat call while a stream is open is
//     answered 202 Accepted with no body, and the chunks follow on the
//     stream, in order on one connection, the end last. (Answering the
//     POST with the end would race the last deltas, which travel on
//     another connection.) With no stream open the call is answered in
//     the POST with one plain result, the joined text: the documentation's
//     chat example reads result.content[0].text from the POST's answer.
//     A chat call inside a batch is answered plainly too. A POSTed
//     notifications/cancelled naming a chat call whose chunks are going
//     out stops them, end result included (the dialect has no sessions:
//     the ids are the docs' unique ones).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// StreamPath is where the LangGraph dialect ([HTTPConfig.LangGraph])
// serves its event stream of server messages.
const StreamPath = "/mcp/stream"

// hubBuffer is how many messages may wait for a slow stream before the
// sender waits for it.
const hubBuffer = 256

// langGraphHandler serves the LangGraph dialect: POST at Path through
// the SDK's stateless JSON handler sdk, the event stream at StreamPath.
type langGraphHandler struct {
	ctx  context.Context // ends the streamed answers still going out
	sdk  http.Handler
	chat Chat
	hub  *hub
	runs chatRuns // the streamed answers going out, to cancel
}

func newLangGraphHandler(ctx context.Context, sdk http.Handler, chat Chat) http.Handler {
	h := &langGraphHandler{ctx: ctx, sdk: sdk, chat: chat, hub: &hub{subs: map[*listener]struct{}{}}}
	mux := http.NewServeMux()
	mux.HandleFunc(Path, h.post)
	mux.HandleFunc(StreamPath, h.stream)
	return mux
}

// post answers a POST at Path.
func (h *langGraphHandler) post(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "Method Not Allowed: POST JSON-RPC here, read server messages from GET "+StreamPath, http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxFrameBytes))
	if err != nil {
		http.Error(w, "request body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if h.chat.enabled() {
		if id, query, ok := parseChatCall(body); ok && h.hub.listening() {
			w.WriteHeader(http.StatusAccepted)
			ctx, end := h.runs.start(h.ctx, "", id)
			go func() {
				defer end()
				_ = h.chat.stream(ctx, id, query, func(f []byte, _ bool) error { return h.hub.send(ctx, f) })
			}()
			return
		}
		h.runs.cancelFrom("", body)
	}
	r2 := r.Clone(r.Context())
	r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r2.Header.Set("Content-Type", "application/json")
	r2.Header.Set("Accept", "application/json, text/event-stream")
	r2.Header.Del("Mcp-Protocol-Version") // the SDK then takes 2025-03-26: batches allowed
	r2.Header.Del("Mcp-Session-Id")
	h.sdk.ServeHTTP(w, r2)
}

// stream serves GET StreamPath until the client goes away or the server
// shuts down.
func (h *langGraphHandler) stream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	l := h.hub.join()
	defer h.hub.leave(l)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case f := <-l.ch:
			if _, err := fmt.Fprintf(w, "data: %s\n\n", f); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
	}
}

// hub hands every message to every open stream.
type hub struct {
	mu   sync.Mutex
	subs map[*listener]struct{}
}

// listener is one open stream.
type listener struct {
	ch   chan []byte
	gone chan struct{} // closed when the stream ends
}

func (b *hub) join() *listener {
	l := &listener{ch: make(chan []byte, hubBuffer), gone: make(chan struct{})}
	b.mu.Lock()
	b.subs[l] = struct{}{}
	b.mu.Unlock()
	return l
}

func (b *hub) leave(l *listener) {
	b.mu.Lock()
	delete(b.subs, l)
	b.mu.Unlock()
	close(l.gone)
}

func (b *hub) listening() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs) > 0
}

// send gives frame to every open stream, waiting while one's buffer is
// full (a stream that ends meanwhile is passed over). It fails with ctx's
// error.
func (b *hub) send(ctx context.Context, frame []byte) error {
	b.mu.Lock()
	subs := make([]*listener, 0, len(b.subs))
	for l := range b.subs {
		subs = append(subs, l)
	}
	b.mu.Unlock()
	for _, l := range subs {
		select {
		case l.ch <- frame:
		case <-l.gone:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
