//go:build unix

package transport

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/jsonrpc"
)

// TestHTTPE2EServerEverything: Streamable HTTP against the TypeScript
// SDK's server-everything: SSE answers with priming events, a session id,
// progress on the POST stream, the GET stream, the 400 it gives for an
// unknown session, and DELETE.
func TestHTTPE2EServerEverything(t *testing.T) {
	ctx := e2eContext(t)
	p := peertest.EverythingHTTP(t, ctx)
	c, err := DialHTTP(ctx, p.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	in, _, ex := exchange(t, ctx, c, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, "0")
	if ex.ContentType != "text/event-stream" || in.EventID == "" || in.Stream != StreamPOST {
		t.Errorf("initialize: content type %q, event id %q, stream %s", ex.ContentType, in.EventID, in.Stream)
	}
	if c.SessionID() == "" || c.ProtocolVersion() != "2025-11-25" {
		t.Fatalf("session %q, version %q", c.SessionID(), c.ProtocolVersion())
	}
	if ex, err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), SendOptions{}); err != nil || ex.Status != http.StatusAccepted {
		t.Fatalf("initialized: %v", err)
	}
	get, err := c.OpenGetStream(ctx, SendOptions{})
	if err != nil || get.Status != 200 {
		t.Fatalf("GET stream: %v", err)
	}
	listAndCall(t, ctx, c, "echo", `{"message":"over SSE"}`, "Echo: over SSE")

	// Progress notifications come on the POST stream before the answer.
	_, others, ex := exchange(t, ctx, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":0.3,"steps":3},"_meta":{"progressToken":"p3"}}}`, "3")
	progress := 0
	for _, o := range others {
		if jsonrpc.Classify(o.Frame).Method == "notifications/progress" && o.Exchange == ex.ID && o.EventID != "" {
			progress++
		}
	}
	if progress != 3 {
		t.Errorf("%d progress notifications on the POST stream, want 3 (%d frames)", progress, len(others))
	}
	waitDone(t, ex)

	// An unknown session: server-everything answers 400, seen as expired.
	_, err = c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":4,"method":"ping"}`), SendOptions{Header: http.Header{HeaderSessionID: {"no-such-session"}}})
	if !errors.Is(err, ErrSessionExpired) {
		t.Errorf("unknown session: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close (DELETE): %v", err)
	}
	waitDone(t, get)
}

// TestHTTPE2EGoSDKStateful: the Go SDK conformance server with sessions
// (404 for an unknown session, DELETE 204).
func TestHTTPE2EGoSDKStateful(t *testing.T) {
	ctx := e2eContext(t)
	p := peertest.GoEverythingHTTP(t, ctx, false)
	c, err := DialHTTP(ctx, p.URL, WithGetStream())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	handshake(t, ctx, c, "2025-06-18")
	if c.SessionID() == "" {
		t.Fatal("no session id")
	}
	listAndCall(t, ctx, c, "test_simple_text", `{}`, "simple text response")
	deadline := time.Now().Add(5 * time.Second) // WithGetStream opens it in the background
	for c.GetStream() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if get := c.GetStream(); get == nil || get.Status != http.StatusOK || get.ContentType != "text/event-stream" {
		t.Errorf("WithGetStream: GET stream %+v", get)
	}
	session := c.SessionID()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The session is gone: a new connection using its id sees it expired.
	c2, err := DialHTTP(ctx, p.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), SendOptions{Header: http.Header{HeaderSessionID: {session}}})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusNotFound || !errors.Is(err, ErrSessionExpired) {
		t.Errorf("after DELETE: %v", err)
	}
}

// TestHTTPE2EGoSDKStateless2026: the 2026-07-28 protocol against the Go
// SDK conformance server in its default stateless mode: server/discover
// and tools/call carry _meta; the connection derives MCP-Protocol-Version,
// Mcp-Method and Mcp-Name, which the server checks.
func TestHTTPE2EGoSDKStateless2026(t *testing.T) {
	ctx := e2eContext(t)
	p := peertest.GoEverythingHTTP(t, ctx, true)
	c, err := DialHTTP(ctx, p.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}`
	in, _, _ := exchange(t, ctx, c, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`, "1")
	res := resultOf(t, in)
	if !strings.Contains(toJSON(res["supportedVersions"]), "2026-07-28") {
		t.Errorf("server/discover: %.300s", in.Frame)
	}
	in, _, _ = exchange(t, ctx, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text","arguments":{},`+meta+`}}`, "2")
	if !strings.Contains(toJSON(resultOf(t, in)["content"]), "simple text response") {
		t.Errorf("tools/call: %.300s", in.Frame)
	}
	if c.SessionID() != "" {
		t.Errorf("stateless server gave session %q", c.SessionID())
	}
	// Headers that disagree with the body are refused: proof that the
	// server checks what the connection derived.
	_, err = c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text","arguments":{},`+meta+`}}`),
		SendOptions{Header: http.Header{HeaderName: {"another_tool"}}})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
		t.Fatalf("mismatched Mcp-Name: %v", err)
	}
	in = recvTimeout(t, c, 5*time.Second)
	if info := jsonrpc.Classify(in.Frame); info.ErrorCode != -32020 {
		t.Errorf("mismatch answer %s, want -32020", in.Frame)
	}
	if _, err := c.OpenGetStream(ctx, SendOptions{}); !errors.As(err, &se) || se.Status != http.StatusMethodNotAllowed {
		t.Errorf("GET on a stateless server: %v", err)
	}
}

// TestHTTPE2EMCPGo: mcp-go answers plain JSON and refuses batches with 400.
func TestHTTPE2EMCPGo(t *testing.T) {
	ctx := e2eContext(t)
	p := peertest.MCPGoHTTP(t, ctx, "-session", "stateful")
	client, err := NewHTTPClient(4)
	if err != nil {
		t.Fatal(err)
	}
	c, err := DialHTTP(ctx, p.URL, WithHTTPClient(client))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, ex := exchange(t, ctx, c, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, "0")
	if ex.ContentType != "application/json" || !strings.HasPrefix(c.SessionID(), "mcp-session-") {
		t.Errorf("initialize: %q, session %q", ex.ContentType, c.SessionID())
	}
	c.Send(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), SendOptions{})
	listAndCall(t, ctx, c, "echo", `{"message":"json"}`, "Echo: json")
	_, err = c.Send(ctx, []byte(`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]`), SendOptions{})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest || errors.Is(err, ErrSessionExpired) {
		t.Fatalf("batch: %v", err)
	}
	in := recvTimeout(t, c, 5*time.Second)
	if info := jsonrpc.Classify(in.Frame); info.Kind != jsonrpc.KindError {
		t.Errorf("batch answer %s", in.Frame)
	}
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c.Close()
	if _, err := c.Recv(ctx2); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
}
