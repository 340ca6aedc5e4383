package refserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// chatHandler answers a POST whose body is one chat call with an SSE
// stream of the chunks, and passes every other request on to next. A
// notifications/cancelled for a chat call of the same session (the same
// Mcp-Session-Id, or none) stops its stream, without its end result.
type chatHandler struct {
	chat Chat
	next http.Handler
	runs *chatRuns
}

func (h chatHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		h.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxFrameBytes))
	if err != nil {
		http.Error(w, "request body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	id, query, ok := parseChatCall(body)
	if !ok {
		h.runs.cancelFrom(sid, body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.next.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if sid != "" {
		w.Header().Set("Mcp-Session-Id", sid)
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	// The stream ends early, without its end result, when the client goes
	// away or the server shuts down (the request's context), or cancels
	// the call.
	ctx, end := h.runs.start(r.Context(), sid, id)
	defer end()
	_ = h.chat.stream(ctx, id, query, func(f []byte, _ bool) error {
		if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", f); err != nil {
			return err
		}
		return rc.Flush()
	})
}
