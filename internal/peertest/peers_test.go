package peertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// These tests prove that every peer installs and speaks MCP: they are the
// first thing to look at when an end-to-end test elsewhere cannot start
// its peer.

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"peertest","version":"0"}}}`

// rpcMessage is the part of a JSON-RPC message these tests look at.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

type initializeResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	ServerInfo      struct {
		Name string `json:"name"`
	} `json:"serverInfo"`
}

// readUntilID reads stdout lines until the response with the given id,
// returning the messages that came before it too.
func readUntilID(t *testing.T, p *Process, id string) (resp rpcMessage, before []rpcMessage) {
	t.Helper()
	for {
		line, err := p.Stdout.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading %s: %v (after %d messages)", p, err, len(before))
		}
		var m rpcMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s wrote a non-JSON line %q: %v", p, line, err)
		}
		if string(m.ID) == id && m.Method == "" {
			return m, before
		}
		before = append(before, m)
	}
}

// checkServerInfo checks an initialize result and returns the server's name.
func checkServerInfo(t *testing.T, result []byte) string {
	t.Helper()
	var r initializeResult
	if err := json.Unmarshal(result, &r); err != nil || r.ServerInfo.Name == "" || r.ProtocolVersion == "" {
		t.Fatalf("initialize result %s: no serverInfo/protocolVersion (%v)", result, err)
	}
	return r.ServerInfo.Name
}

// post sends one JSON-RPC message over Streamable HTTP.
func post(t *testing.T, ctx context.Context, endpoint, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: body: %v", endpoint, err)
	}
	return resp, data
}

// sseData returns the data of the SSE events in body that carry a message.
func sseData(body []byte) []string {
	var out []string
	for _, event := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n\n") {
		var data []string
		for _, line := range strings.Split(event, "\n") {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
		if d := strings.Join(data, "\n"); d != "" {
			out = append(out, d)
		}
	}
	return out
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestServerEverythingStdio(t *testing.T) {
	t.Parallel()
	p := EverythingStdio(t, testContext(t, 30*time.Second))
	fmt.Fprintln(p.Stdin, initialize)
	resp, _ := readUntilID(t, p, "1")
	if name := checkServerInfo(t, resp.Result); name != "mcp-servers/everything" {
		t.Errorf("serverInfo.name = %q", name)
	}
}

func TestServerEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	p := EverythingHTTP(t, ctx)
	resp, body := post(t, ctx, p.URL, initialize, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %s, session %q\n%s", resp.Status, resp.Header.Get("Mcp-Session-Id"), body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q, want SSE", ct)
	}
	events := sseData(body)
	if len(events) == 0 {
		t.Fatalf("no message event in %q", body)
	}
	var m rpcMessage
	if err := json.Unmarshal([]byte(events[len(events)-1]), &m); err != nil {
		t.Fatal(err)
	}
	checkServerInfo(t, m.Result)

	t.Run("loopback only", func(t *testing.T) {
		// Unpatched, node listens on [::] and [::1] would answer too.
		u, _ := url.Parse(p.URL)
		c, err := net.DialTimeout("tcp", net.JoinHostPort("::1", u.Port()), time.Second)
		if err == nil {
			c.Close()
			t.Fatalf("server-everything answers on [::1]:%s: the loopback preload did not apply", u.Port())
		}
	})
	t.Run("go-sdk everything-client", func(t *testing.T) {
		out, err := GoClientCommand(t, ctx, "initialize", p.URL).CombinedOutput()
		if err != nil {
			t.Fatalf("everything-client initialize against server-everything: %v\n%s", err, out)
		}
	})
}

func TestServerEverythingSSE(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	p := EverythingSSE(t, ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // the stream never ends by itself
	r := bufio.NewReader(resp.Body)
	var event []string
	for len(event) < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the SSE stream: %v after %q", err, event)
		}
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			event = append(event, line)
		}
	}
	if event[0] != "event: endpoint" || !strings.HasPrefix(event[1], "data: /message?sessionId=") {
		t.Fatalf("first event %q, want the endpoint", event)
	}
}

func TestInspectorCLIListsTools(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 60*time.Second)
	args := append(ServerEverything(t), "stdio", "--method", "tools/list")
	out := Inspector(t, ctx, args...)
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("inspector output is not the tools/list result: %v\n%s", err, out)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(" "+strings.Join(names, " ")+" ", " echo ") {
		t.Fatalf("tools %v: no echo", names)
	}
}

func TestGoEverythingServerStdio(t *testing.T) {
	t.Parallel()
	p := GoEverythingStdio(t, testContext(t, 30*time.Second))
	fmt.Fprintln(p.Stdin, initialize)
	resp, _ := readUntilID(t, p, "1")
	if name := checkServerInfo(t, resp.Result); name != "mcp-conformance-test-server" {
		t.Errorf("serverInfo.name = %q", name)
	}
}

func TestMCPGoServerHTTP(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	p := MCPGoHTTP(t, ctx)
	resp, body := post(t, ctx, p.URL, initialize, nil)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(session, "mcp-session-") {
		t.Fatalf("initialize: %s, session %q\n%s", resp.Status, session, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want JSON", ct)
	}
	var m rpcMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if name := checkServerInfo(t, m.Result); name != "mcptape-mcpgo-peer" {
		t.Errorf("serverInfo.name = %q", name)
	}
	hdr := map[string]string{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
	_, body = post(t, ctx, p.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, hdr)
	if !bytes.Contains(body, []byte(`Echo: hi`)) {
		t.Fatalf("echo answered %s", body)
	}
}

func TestMCPGoServerStdioSlowProgress(t *testing.T) {
	t.Parallel()
	p := MCPGoStdio(t, testContext(t, 30*time.Second))
	fmt.Fprintln(p.Stdin, initialize)
	readUntilID(t, p, "1")
	fmt.Fprintln(p.Stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(p.Stdin, `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow","arguments":{"ms":60,"steps":3},"_meta":{"progressToken":"tok"}}}`)
	resp, before := readUntilID(t, p, `"s"`)
	if !bytes.Contains(resp.Result, []byte("slept 60 ms in 3 steps")) {
		t.Fatalf("slow answered %s %s", resp.Result, resp.Error)
	}
	// mcp-go writes notifications from a goroutine of their own, so the
	// last progress may come after the response: ping until all arrived.
	var progress []string
	collect := func(msgs []rpcMessage) {
		for _, m := range msgs {
			if m.Method == "notifications/progress" {
				progress = append(progress, string(m.Params))
			}
		}
	}
	collect(before)
	for ping := 0; len(progress) < 3 && ping < 50; ping++ {
		id := fmt.Sprintf(`"p%d"`, ping)
		fmt.Fprintf(p.Stdin, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", id)
		_, before := readUntilID(t, p, id)
		collect(before)
		time.Sleep(10 * time.Millisecond)
	}
	if len(progress) != 3 || !strings.Contains(progress[2], `"progress":3,"progressToken":"tok"`) {
		t.Fatalf("progress notifications %q, want 3 for token tok", progress)
	}
}

func TestGoEverythingServerHTTP(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 60*time.Second)
	p := GoEverythingHTTP(t, ctx, false)
	resp, body := post(t, ctx, p.URL, initialize, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize (stateful): %s, session %q\n%s", resp.Status, resp.Header.Get("Mcp-Session-Id"), body)
	}
	t.Run("inspector over http", func(t *testing.T) {
		out := Inspector(t, ctx, p.URL, "--transport", "http", "--method", "tools/list")
		if !strings.Contains(out, `"name": "test_simple_text"`) {
			t.Fatalf("inspector tools/list over HTTP: no test_simple_text in\n%s", out[:min(len(out), 3000)])
		}
	})
}

// TestConformanceSuitePinned checks that the conformance suite installed is
// the pinned one and runs on the pinned Node 22.
func TestConformanceSuitePinned(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 60*time.Second)
	p := Conformance(t)
	out, err := Command(ctx, []string{p.Node, "--version"}, nil).Output()
	if err != nil || !strings.HasPrefix(string(out), "v22.23.5") {
		t.Errorf("%s --version: %q, %v; want v22.23.5", p.Node, out, err)
	}
	out, err = p.Command(ctx, "", "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != ConformanceVersion {
		t.Errorf("conformance --version: %q, %v; want %s", out, err, ConformanceVersion)
	}
}
