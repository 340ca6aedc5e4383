package transport

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
)

// fakeServer is an in-process Streamable HTTP MCP server that behaves like
// the real ones where the client can tell: JSON or SSE answers, sessions,
// the expired-session answer of the Go SDK (404) or of server-everything
// (400), priming events, a GET stream, DELETE, batches refused like mcp-go,
// and the 2026-07-28 header checks.
//
// Tools (tools/call params.name): "echo" answers arguments.message;
// "progress" sends two progress notifications first (SSE mode); "hang"
// never answers and records when the client closes the stream; "cut" ends
// its event stream in the middle of an event; "abort" drops the connection
// after one event.
type fakeServer struct {
	t        testing.TB
	sse      bool // answer requests with event streams
	priming  bool // start every event stream with a priming event
	expired  int  // status for an unknown session: 404 or 400
	stateful bool // sessions (false: 2026-07-28 stateless checks)

	mu       sync.Mutex
	nextID   int
	sessions map[string]bool
	deleted  []string
	getOpen  bool
	headers  []http.Header // request headers of every POST
	hangDone chan struct{} // closed when a "hang" request's stream is closed
	push     chan string   // frames to send on the GET stream

	srv *httptest.Server
}

func newFakeServer(t testing.TB, configure func(*fakeServer)) *fakeServer {
	f := &fakeServer{
		t: t, expired: http.StatusNotFound, stateful: true,
		sessions: map[string]bool{}, hangDone: make(chan struct{}), push: make(chan string, 16),
	}
	if configure != nil {
		configure(f)
	}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) URL() string { return f.srv.URL + "/mcp" }

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		f.post(w, r)
	case http.MethodGet:
		f.get(w, r)
	case http.MethodDelete:
		if !f.checkSession(w, r) {
			return
		}
		f.mu.Lock()
		sid := r.Header.Get(HeaderSessionID)
		delete(f.sessions, sid)
		f.deleted = append(f.deleted, sid)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// checkSession answers for a missing or unknown session and reports
// whether the request may go on.
func (f *fakeServer) checkSession(w http.ResponseWriter, r *http.Request) bool {
	if !f.stateful {
		return true
	}
	sid := r.Header.Get(HeaderSessionID)
	f.mu.Lock()
	known := f.sessions[sid]
	f.mu.Unlock()
	switch {
	case sid == "":
		http.Error(w, "Bad Request: Mcp-Session-Id header is required", http.StatusBadRequest)
	case known:
		return true
	case f.expired == http.StatusBadRequest: // server-everything's answer
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
	default:
		http.Error(w, "session not found", http.StatusNotFound)
	}
	return false
}

type fakeParams struct {
	Name      string `json:"name"`
	URI       string `json:"uri"`
	Arguments struct {
		Message string `json:"message"`
	} `json:"arguments"`
	Meta struct {
		Version       string `json:"io.modelcontextprotocol/protocolVersion"`
		ProgressToken any    `json:"progressToken"`
	} `json:"_meta"`
	ProtocolVersion string `json:"protocolVersion"`
}

func (f *fakeServer) post(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "application/json") || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "Not Acceptable: both application/json and text/event-stream required", http.StatusNotAcceptable)
		return
	}
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		http.Error(w, "Unsupported Media Type", http.StatusUnsupportedMediaType)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	h := r.Header.Clone()
	h.Set("X-Host", r.Host) // net/http moves Host out of the header
	f.headers = append(f.headers, h)
	f.mu.Unlock()
	info := jsonrpc.Classify(body)
	if info.Kind == jsonrpc.KindBatch { // as mcp-go does
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"batches are not supported"}}`)
		return
	}
	var msg struct {
		Params fakeParams `json:"params"`
	}
	json.Unmarshal(body, &msg)
	p := msg.Params
	isInit := info.Kind == jsonrpc.KindRequest && info.Method == "initialize"
	if !isInit && !f.checkSession(w, r) {
		return
	}
	if !f.stateful && info.Kind == jsonrpc.KindRequest {
		if err := checkStandardHeaders(r.Header, info.Method, p); err != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":%q}}`, info.ID.Raw, err)
			return
		}
	}
	if info.Kind != jsonrpc.KindRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	var before []string
	switch {
	case isInit:
		if f.stateful {
			f.mu.Lock()
			f.nextID++
			sid := fmt.Sprintf("session-%d", f.nextID)
			f.sessions[sid] = true
			f.mu.Unlock()
			w.Header().Set(HeaderSessionID, sid)
		}
		result = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}`
	case info.Method == "tools/call" && p.Name == "echo":
		result = fmt.Sprintf(`{"content":[{"type":"text","text":%q}]}`, p.Arguments.Message)
	case info.Method == "tools/call" && p.Name == "progress":
		tok, _ := json.Marshal(p.Meta.ProgressToken)
		for i := 1; i <= 2; i++ {
			before = append(before, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":2}}`, tok, i))
		}
		result = `{"content":[]}`
	case info.Method == "tools/call" && p.Name == "hang":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(f.hangDone)
		return
	case info.Method == "tools/call" && (p.Name == "cut" || p.Name == "abort"):
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		w.(http.Flusher).Flush()
		if p.Name == "abort" {
			panic(http.ErrAbortHandler)
		}
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",")
		return
	default:
		result = `{}`
	}
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, info.ID.Raw, result)
	if !f.sse {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if f.priming {
		io.WriteString(w, "id: prime-0\ndata: \n\n")
	}
	io.WriteString(w, ": keep-alive\n\n")
	for i, m := range append(before, answer) {
		fmt.Fprintf(w, "event: message\nid: ev-%d\ndata: %s\n\n", i+1, m)
		w.(http.Flusher).Flush()
	}
}

// checkStandardHeaders checks the 2026-07-28 headers against the body as
// the Go SDK does, decoding base64 values; it returns what is wrong.
func checkStandardHeaders(h http.Header, method string, p fakeParams) string {
	if v := h.Get(HeaderProtocolVersion); v != p.Meta.Version {
		return fmt.Sprintf("MCP-Protocol-Version %q does not match _meta %q", v, p.Meta.Version)
	}
	if v := h.Get(HeaderMethod); v != method {
		return fmt.Sprintf("Mcp-Method %q does not match %q", v, method)
	}
	want := ""
	switch method {
	case "tools/call", "prompts/get":
		want = p.Name
	case "resources/read":
		want = p.URI
	}
	got, err := DecodeHeaderValue(h.Get(HeaderName))
	if err != nil || got != want {
		return fmt.Sprintf("Mcp-Name %q does not match %q", h.Get(HeaderName), want)
	}
	return ""
}

func (f *fakeServer) get(w http.ResponseWriter, r *http.Request) {
	if !f.stateful {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !f.checkSession(w, r) {
		return
	}
	f.mu.Lock()
	if f.getOpen {
		f.mu.Unlock()
		http.Error(w, "Conflict: only one GET stream per session", http.StatusConflict)
		return
	}
	f.getOpen = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.getOpen = false
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for i := 1; ; i++ {
		select {
		case m := <-f.push:
			fmt.Fprintf(w, "event: message\nid: get-%d\ndata: %s\n\n", i, m)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// postHeaders returns the headers of the POSTs received so far.
func (f *fakeServer) postHeaders() []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]http.Header(nil), f.headers...)
}

func (f *fakeServer) deletedSessions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.deleted...)
}
